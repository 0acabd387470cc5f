"""Pre-warm entries of the manifest into records: one ``prewarm`` read record per target, and a
target given the sampled cold-read check instead of a full read with its cold and warm passes
(``storagebench.results.cold_read``).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path, PurePosixPath
from typing import Any

from storagebench.protocol.manifest import STATUS_FAILED, STATUS_OK
from storagebench.results.cold_read import cold_read_check
from storagebench.results.collect_phase import PhaseError
from storagebench.results.collect_phase import non_negative as _seconds
from storagebench.results.fio import MIB
from storagebench.results.records import ResultRecord

__all__ = ["prewarm_records"]


def _relative_file(root: Path, base: PurePosixPath, name: str) -> str:
    """A raw file named in the manifest, relative to the output directory."""
    path = PurePosixPath(name)
    if path.is_absolute():
        try:
            return str(PurePosixPath(Path(name).resolve().relative_to(root.resolve())))
        except ValueError:
            return name
    if (root / path).exists() or path.parts[: len(base.parts)] == base.parts:
        return str(path)
    return str(base / path)


def _fio_read_seconds(directory: Path, device: Mapping[str, Any]) -> float | None:
    """fio's own read runtime for a pre-warmed device (the agent's clock includes fio's start-up)."""
    for name in device.get("files") or []:
        if str(name).endswith(".json"):
            try:
                document = json.loads((directory / str(name)).read_text(encoding="utf-8"))
                runtime_ms = float(document["jobs"][0]["read"]["runtime"])
            except (OSError, ValueError, KeyError, IndexError, TypeError):
                return None
            return runtime_ms / 1000 if runtime_ms > 0 else None
    return None


def prewarm_records(
    root: Path, config_id: str, entry: Mapping[str, Any], labels: Mapping[str, list[str]]
) -> list[ResultRecord]:
    status = entry.get("status")
    if status == STATUS_FAILED:
        raise PhaseError(f"failed: {entry.get('error') or 'no error recorded'}")
    if status != STATUS_OK:
        return []
    target = entry.get("target")
    if not isinstance(target, str) or not target:
        raise PhaseError("no target id")
    devices = [d for d in entry.get("devices") or [] if isinstance(d, Mapping)]
    if not devices:
        raise PhaseError("status ok but no devices were read")
    base = PurePosixPath(str(entry.get("dir") or f"prewarm/{target}"))
    if entry.get("mode") == "sampled":
        return [_cold_read(root, base, config_id, entry, devices, labels)]
    sizes: list[int] = []
    seconds: list[float] = []
    rates: list[float] = []
    raw: list[str] = []
    method = entry.get("method")
    for device in devices:
        size, took = device.get("bytes"), _seconds(device, "seconds")
        if method == "fio":
            took = _fio_read_seconds(root / base, device) or took
        if not isinstance(size, int) or size < 0 or took is None or took <= 0:
            raise PhaseError(f"device {device.get('path')!r}: bytes {size!r} / seconds {took!r} unusable")
        sizes.append(size)
        seconds.append(took)
        rate = _seconds(device, "mibps")
        rates.append(rate if rate is not None else size / took / MIB)
        raw.extend(_relative_file(root, base, str(name)) for name in device.get("files") or [])
    # Members of a stripe are read in parallel: the target's rate is all bytes over the
    # slowest member's time.
    wall = max(seconds)
    return [
        _prewarm_record(
            config_id,
            target,
            len(devices),
            bw_mibps=sum(sizes) / wall / MIB,
            bytes=sum(sizes),
            runtime_s=wall,
            job_bw_min_mibps=min(rates),
            job_bw_max_mibps=max(rates),
            job_runtime_min_s=min(seconds),
            job_runtime_max_s=max(seconds),
            raw=raw,
            labels=[*labels.get(target, []), *([f"prewarm:{method}"] if isinstance(method, str) else [])],
        )
    ]


def _prewarm_record(config_id: str, target: str, devices: int, **measured: Any) -> ResultRecord:
    """A pre-warm read of a target (a full read or the cold-read check): one record per target,
    its member devices read at once."""
    return ResultRecord(
        config_id=config_id,
        target_id=target,
        workload="prewarm",
        profile="prewarm",
        repetition=1,
        phase="prewarm",
        direction="read",
        engine="prewarm",
        jobs=devices,
        **measured,
    )


def _cold_read(
    root: Path,
    base: PurePosixPath,
    config_id: str,
    entry: Mapping[str, Any],
    devices: list[Mapping[str, Any]],
    labels: Mapping[str, list[str]],
) -> ResultRecord:
    """The sampled cold-read check of a target: the cold pass as the record, both passes in it."""
    target = str(entry["target"])
    check = cold_read_check(devices, entry.get("pass_seconds"), f"cold-read check of {target!r}")
    per_device = [(float(d["mibps"]) if _seconds(d, "mibps") is not None else None) for d in devices]
    rates = [rate for rate in per_device if rate is not None]
    return _prewarm_record(
        config_id,
        target,
        len(devices),
        bw_mibps=check.cold.mibps,
        bytes=check.bytes,
        ios=check.bytes // check.block_bytes,
        runtime_s=check.cold.seconds,
        job_bw_min_mibps=min(rates) if rates else None,
        job_bw_max_mibps=max(rates) if rates else None,
        raw=[_relative_file(root, base, str(name)) for d in devices for name in d.get("files") or []],
        labels=[*labels.get(target, []), "prewarm:sampled"],
        cold_read=check,
    )

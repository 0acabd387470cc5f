"""dd and command phases into records, timed by the agent's ``timing.json`` (or the manifest's
copy): a dd phase's threads summed into one record, a command phase's real/user/sys with the
bytes and files it moved.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from pathlib import Path, PurePosixPath
from typing import Any

from storagebench.results.collect_phase import Identity, PhaseError
from storagebench.results.collect_phase import non_negative as _seconds
from storagebench.results.dd import DdResult, read_dd_stderr
from storagebench.results.fio import MIB
from storagebench.results.records import Direction, ResultRecord

__all__ = ["command_records", "dd_records"]

_THREAD = re.compile(r"\.(\d+)\.")


# --------------------------------------------------------------------------- timing


def _read_timing(
    directory: Path, relative: PurePosixPath, phase: Mapping[str, Any]
) -> tuple[Mapping[str, Any] | None, list[str], list[str]]:
    """(timing, raw paths, notes): ``timing.json`` first, the manifest's copy as fallback."""
    path = directory / "timing.json"
    notes: list[str] = []
    if path.is_file():
        try:
            timing = json.loads(path.read_text(encoding="utf-8"))
            if not isinstance(timing, dict):
                raise ValueError(f"expected an object, got {type(timing).__name__}")
            return timing, [str(relative / "timing.json")], notes
        except ValueError as exc:
            notes.append(f"{relative / 'timing.json'} is unreadable ({exc})")
    fallback = phase.get("timing")
    if isinstance(fallback, Mapping) and fallback:
        if not notes:
            notes.append(f"{relative / 'timing.json'} is missing: used the manifest's timing")
        else:
            notes[-1] += ": used the manifest's timing"
        return fallback, [], notes
    return None, [], notes


def _threads(timing: Mapping[str, Any] | None) -> list[Mapping[str, Any]]:
    threads = timing.get("threads") if timing is not None else None
    return [t for t in threads if isinstance(t, Mapping)] if isinstance(threads, list) else []


def _thread_number(path: Path) -> int:
    match = _THREAD.search(path.name)
    return int(match.group(1)) if match else 0


# --------------------------------------------------------------------------- dd


def _dd_direction(directory: Path, phase: Mapping[str, Any], plan_phase: Mapping[str, Any]) -> Direction:
    """From the manifest, else plan.json, else the agent's commands.txt, else the phase name."""
    dd = plan_phase.get("dd")
    for value in (phase.get("direction"), dd.get("direction") if isinstance(dd, Mapping) else None):
        if value in ("read", "write"):
            return "read" if value == "read" else "write"
    try:
        commands = (directory / "commands.txt").read_text(encoding="utf-8").split()
    except OSError:
        commands = []
    if "of=/dev/null" in commands:
        return "read"
    if any(word.startswith("of=") for word in commands):
        return "write"
    name = str(phase.get("name", "")).lower()
    if "read" in name:
        return "read"
    if "write" in name or "create" in name:
        return "write"
    raise PhaseError("dd direction unknown: not in the manifest, plan.json, commands.txt or the phase name")


def dd_records(
    directory: Path,
    relative: PurePosixPath,
    phase: Mapping[str, Any],
    plan_phase: Mapping[str, Any],
    identity: Identity,
) -> tuple[list[ResultRecord], list[str]]:
    files = sorted(directory.glob("dd.*.stderr"), key=_thread_number)
    if not files:
        raise PhaseError(f"no dd.<thread>.stderr in {relative}")
    direction = _dd_direction(directory, phase, plan_phase)
    results: list[DdResult] = [read_dd_stderr(path) for path in files]
    timing, timing_raw, notes = _read_timing(directory, relative, phase)
    for path, result in zip(files, results, strict=True):
        notes.extend(f"{relative / path.name}: {line}" for line in result.errors)
    total = sum(r.bytes for r in results)
    real = _seconds(timing, "real_s")
    # dd's own copy time (what dd prints and the studies quote) excludes process start-up; the
    # slowest thread's is the phase's, as fio's aggregate uses its longest job.
    copy = max(r.seconds for r in results)
    if real is None or real <= 0:
        real = copy
        notes.append("no real_s in the agent's timing: real_s is the slowest dd's own seconds")
    if copy <= 0:
        copy = real
    rates = [r.mibps for r in results if r.mibps is not None]
    ios = sum(r.records_in.total if direction == "read" else r.records_out.total for r in results)
    user = _seconds(timing, "user_s")
    sys = _seconds(timing, "sys_s")
    record = ResultRecord(
        **identity,
        direction=direction,
        engine="dd",
        jobs=len(results),
        iops=ios / copy if copy > 0 else None,
        bw_mibps=total / copy / MIB if copy > 0 else None,
        bytes=total,
        ios=ios,
        runtime_s=copy,
        job_bw_min_mibps=min(rates) if rates else None,
        job_bw_max_mibps=max(rates) if rates else None,
        job_runtime_min_s=min(r.seconds for r in results),
        job_runtime_max_s=max(r.seconds for r in results),
        cpu_usr_pct=user / real * 100 if user is not None and real > 0 else None,
        cpu_sys_pct=sys / real * 100 if sys is not None and real > 0 else None,
        real_s=real,
        user_s=user,
        sys_s=sys,
        raw=[str(relative / path.name) for path in files] + timing_raw,
    )
    return [record], notes


# --------------------------------------------------------------------------- command


def command_records(
    directory: Path,
    relative: PurePosixPath,
    phase: Mapping[str, Any],
    plan_phase: Mapping[str, Any],
    identity: Identity,
) -> tuple[list[ResultRecord], list[str]]:
    timing, timing_raw, notes = _read_timing(directory, relative, phase)
    real = _seconds(timing, "real_s")
    if real is None:
        raise PhaseError(f"no real_s in {relative / 'timing.json'} or the manifest: nothing was timed")
    threads = _threads(timing)
    failed = [t for t in threads if t.get("rc") not in (None, 0)]
    if failed:
        detail = ", ".join(f"thread {t.get('thread')} rc={t.get('rc')}" for t in failed)
        raise PhaseError(f"phase marked ok but {detail}: a failed command's time is not a measurement")
    command = plan_phase.get("command")
    byte_counts = [t["bytes"] for t in threads if isinstance(t.get("bytes"), int)]
    file_counts = [t["files"] for t in threads if isinstance(t.get("files"), int)]
    # Without per-thread counts, the planner's accounting of what the whole phase moves
    # (copied by the agent into timing.json, and present in plan.json).
    for accounting in (
        timing.get("accounting") if timing is not None else None,
        command.get("accounting") if isinstance(command, Mapping) else None,
    ):
        if not isinstance(accounting, Mapping):
            continue
        if not byte_counts and isinstance(accounting.get("bytes"), int):
            byte_counts = [accounting["bytes"]]
        if not file_counts and isinstance(accounting.get("files"), int):
            file_counts = [accounting["files"]]
    total = sum(byte_counts)
    parallel = command.get("parallel") if isinstance(command, Mapping) else None
    jobs = len(threads) or (parallel if isinstance(parallel, int) and parallel > 0 else 1)
    thread_real = [s for s in (_seconds(t, "real_s") for t in threads) if s is not None]
    user = _seconds(timing, "user_s")
    sys = _seconds(timing, "sys_s")
    outputs = sorted(
        [*directory.glob("stdout.*.txt"), *directory.glob("stderr.*.txt")],
        key=lambda p: (_thread_number(p), p.name),
    )
    record = ResultRecord(
        **identity,
        direction="mixed",
        engine="command",
        jobs=jobs,
        bw_mibps=total / real / MIB if byte_counts and real > 0 else None,
        bytes=total,
        runtime_s=real,
        job_runtime_min_s=min(thread_real) if thread_real else None,
        job_runtime_max_s=max(thread_real) if thread_real else None,
        cpu_usr_pct=user / real * 100 if user is not None and real > 0 else None,
        cpu_sys_pct=sys / real * 100 if sys is not None and real > 0 else None,
        real_s=real,
        user_s=user,
        sys_s=sys,
        files=sum(file_counts) if file_counts else None,
        raw=[str(relative / p.name) for p in outputs] + timing_raw,
    )
    return [record], notes

"""The IOPS and MiB/s time series of every fio phase, compact enough to store next to the records.

Records keep one number per repetition; the report also draws how the rate moved during the
phase (a gp2 volume falling off its burst, a throttle releasing I/O in slices). ``extract_series``
reads fio's 1 s logs of an agent output directory (``steps/<step>/<phase>/ts/``, see
``results.fio_logs``) and returns one JSON-able document per config::

    {"version": 1,
     "series": [{"step_id", "target_id", "workload", "profile", "variant": {...}, "repetition",
                 "phase", "direction", "started_at", "t0_s": 1, "interval_s": 1,
                 "iops": [...], "bw_mibps": [...], "knee_s": 62.0 | None}, ...],
     "problems": ["step s1 phase run: ts/job_iops.1.log: line 3: ...", ...],
     "environment": {"fio_version": "fio-3.36", "kernel": ..., "instance_type": ...}}

``environment`` is what the agent's manifest says the phases ran on (``analysis.environment``):
the report's trends name a change of it as a possible cause of a change point.

Point ``i`` of ``iops`` and ``bw_mibps`` is the mean of the 1 s buckets ``t0_s + i * interval_s``
up to the next point's (fio labels a bucket by the second its window ends at, the first being 1);
``None`` where no job logged a sample. Rates are summed across the phase's jobs, per direction
(read, write, trim); a phase that did both has one entry per direction. ``knee_s`` is the burst
knee of the phase's total IOPS (``analysis.burst.detect_knee``, as ``analysis.annotate`` labels the
records), on the same clock as the points.

Size: a series longer than ``MAX_POINTS`` seconds is averaged over windows of ``interval_s``
seconds, and when all series together exceed ``MAX_TOTAL_POINTS`` every window widens, so a
3-hour run stays near 150 KB. Values keep 4 significant digits.

A missing or malformed log costs only itself (a line in ``problems``); a phase without ``ts/``
simply did not ask for logs. Nothing here raises for bad output: Collect must go on.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from storagebench.analysis.burst import detect_knee
from storagebench.analysis.environment import environment_of
from storagebench.protocol.manifest import STATUS_OK
from storagebench.results.collect import PhaseDirOutsideError, phase_dir, read_manifest_file
from storagebench.results.errors import ManifestError, ParseError
from storagebench.results.fio_logs import Series, find_logs, read_log, sum_series

__all__ = ["MAX_POINTS", "MAX_TOTAL_POINTS", "SERIES_VERSION", "downsample", "extract_series"]

SERIES_VERSION = 1
MAX_POINTS = 600
"""Most points one series keeps (a 10-minute phase at 1 s, a 3-hour one at 18 s)."""
MAX_TOTAL_POINTS = 10_000
"""Most points of all series of a document together (each point is one IOPS and one MiB/s value)."""
_DIGITS = 4


def _compact(value: float | None) -> float | None:
    """4 significant digits, integral values as ints: '12350' not '12345.678901'."""
    if value is None or not math.isfinite(value):
        return None
    rounded = float(f"{value:.{_DIGITS}g}")
    return int(rounded) if rounded.is_integer() and abs(rounded) < 1e15 else rounded


def downsample(values: Sequence[float | None], interval: int) -> list[float | None]:
    """Means over consecutive windows of ``interval`` values (None ignored; None when all are)."""
    if interval < 1:
        raise ValueError(f"interval must be at least 1, not {interval}")
    out: list[float | None] = []
    for start in range(0, len(values), interval):
        window = values[start : start + interval]
        if None in window:
            window = [v for v in window if v is not None]
        out.append(sum(window) / len(window) if window else None)  # type: ignore[arg-type]
    return out


def _dense(series: Series, t0: int, length: int) -> list[float | None]:
    """A (second, value) series as one value per second from ``t0``; None where none was logged."""
    values: list[float | None] = [None] * length
    for t, value in series:
        index = int(t) - t0
        if 0 <= index < length:
            values[index] = value
    return values


def _phase_dir(root: Path, step_id: str, phase: Mapping[str, Any]) -> Path | None:
    """The phase's directory, as ``results.collect`` resolves it; None when it would leave ``root``."""
    try:
        return phase_dir(root, step_id, phase)[0]
    except PhaseDirOutsideError:
        return None


def _rates(directory: Path, kind: str, scale: float, where: str, problems: list[str]) -> dict[str, Series]:
    """The ``kind`` logs of every job, summed per direction; an unreadable log is skipped."""
    logs = []
    for log in find_logs(directory, kind):
        try:
            logs.append(read_log(log.path))
        except ParseError as exc:
            problems.append(f"{where}: {exc}")
    return sum_series(logs, scale)


def _knee(iops: Mapping[str, Series]) -> float | None:
    """Burst knee of the phase's total IOPS, on the series' clock (as ``analysis.annotate``)."""
    total: dict[float, float] = {}
    for points in iops.values():
        for t, value in points:
            total[t] = total.get(t, 0.0) + value
    try:
        knee = detect_knee(sorted(total.items()))
    except ValueError:
        return None
    return None if knee is None else knee.knee_t


def _phase_series(
    root: Path, step: Mapping[str, Any], phase: Mapping[str, Any], problems: list[str]
) -> list[dict[str, Any]]:
    step_id = str(step.get("id"))
    where = f"step {step_id} phase {phase.get('name')}"
    directory = _phase_dir(root, step_id, phase)
    if directory is None:
        problems.append(f"{where}: phase dir {phase.get('dir')!r} is not inside the output directory")
        return []
    logs = directory / "ts"
    if not logs.is_dir():
        return []  # the phase did not ask for time series
    try:
        iops = _rates(logs, "iops", 1.0, where, problems)
        bw = _rates(logs, "bw", 1 / 1024, where, problems)  # fio logs KiB/s
    except OSError as exc:
        problems.append(f"{where}: cannot read {logs.relative_to(root)}: {exc.strerror or exc}")
        return []
    if not iops:
        if bw:
            problems.append(f"{where}: bandwidth logs but no IOPS logs")
        return []
    seconds = [int(t) for by_direction in (iops, bw) for points in by_direction.values() for t, _ in points]
    t0, length = min(seconds), max(seconds) - min(seconds) + 1
    knee = _knee(iops)
    variant = step.get("variant")
    try:
        repetition = int(step.get("repetition", 1))
    except (TypeError, ValueError):
        repetition = 1
    started = phase.get("started_at")
    return [
        {
            "step_id": step_id,
            "target_id": str(step.get("target")),
            "workload": str(step.get("workload")),
            "profile": str(step.get("profile") or step.get("workload")),
            "variant": dict(variant) if isinstance(variant, Mapping) else {},
            "repetition": repetition,
            "phase": str(phase.get("name")),
            "direction": direction,
            "started_at": started if isinstance(started, str) else None,
            "t0_s": t0,
            "interval_s": 1,
            "iops": _dense(iops[direction], t0, length),
            "bw_mibps": _dense(bw.get(direction, []), t0, length),
            "knee_s": knee,
        }
        for direction in sorted(iops)
    ]


def extract_series(output_dir: Path) -> dict[str, Any]:
    """The series document of an agent output directory (module doc); never raises for bad output."""
    root = Path(output_dir)
    problems: list[str] = []
    try:
        manifest = read_manifest_file(root)
    except ManifestError as exc:
        return {"version": SERIES_VERSION, "series": [], "problems": [str(exc)]}
    entries: list[dict[str, Any]] = []
    for index, step in enumerate(manifest.get("steps") or []):
        phases = step.get("phases") if isinstance(step, Mapping) else None
        if not isinstance(phases, list):
            problems.append(f"steps[{index}]: no phases list")
            continue
        for phase in phases:
            if (
                not isinstance(phase, Mapping)
                or phase.get("engine") != "fio"
                or phase.get("status") != STATUS_OK
            ):
                continue
            try:
                entries.extend(_phase_series(root, step, phase, problems))
            except Exception as exc:  # one phase's bad output must not cost the others
                problems.append(
                    f"step {step.get('id')} phase {phase.get('name')}: {type(exc).__name__}: {exc}"
                )
    total = sum(len(entry["iops"]) for entry in entries)
    widen = max(1, math.ceil(total / MAX_TOTAL_POINTS))
    for entry in entries:
        interval = max(widen, math.ceil(len(entry["iops"]) / MAX_POINTS))
        entry["interval_s"] = interval
        for key in ("iops", "bw_mibps"):
            entry[key] = [_compact(v) for v in downsample(entry[key], interval)]
    return {
        "version": SERIES_VERSION,
        "series": entries,
        "problems": problems,
        "environment": environment_of(manifest),
    }

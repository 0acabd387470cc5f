"""The I/O pause and the recovery when a node of the topology is removed mid-run (a controller lost).

Input: fio's per-job rate logs of the phase (``write_iops_log`` / ``write_bw_log`` with
``log_avg_msec`` = ``INTERVAL_MS``, 100 ms: a pause of a few hundred milliseconds must show) and
the moment the node was removed, in milliseconds on the logs' clock (fio's start). The jobs'
samples are summed per direction into intervals of ``interval_ms`` (a sample ending at ``t`` ms
belongs to interval ``round(t / interval_ms)``, i.e. the one ending nearest ``t``), and each
direction's series is measured alone:

* **before**: the mean rate over the intervals that end in ``(removed - BEFORE_S, removed]``
  (at least ``MIN_BEFORE_S`` of them is required; fewer is the log too short).
* **stalled interval**: one at or under ``STALL_PCT`` (5 %) of before. fio logs a sample only
  when I/O completes, so a stall is a gap in the log: two or more consecutive intervals with no
  sample are stalled (0). A single empty interval between two samples is fio's helper thread a
  few ms late (two samples in one interval, none in the next): it takes the mean of its
  neighbours. So a pause shorter than two intervals (200 ms) is not resolved.
* **pause**: the longest run of consecutive stalled intervals that ends after the removal,
  in seconds (0 when no interval after the removal is stalled); ``pause_start_s`` is when it
  starts, relative to the removal (negative: throughput had collapsed before the removal
  moment, e.g. the kill landed early).
* **after**: the mean over the intervals ending in the last ``AFTER_S`` of the log; they must
  all end after the removal (else the log is too short to say).
* **recovered**: after > 5 % of before. Otherwise throughput never came back: the pause runs
  to the end of the log and the recovery times are None.
* **recovery_s**: from the removal to the start of the first interval (after the removal) that
  is at or above ``RECOVERY_PCT`` (90 %) of after and holds it: the mean of the
  ``RECOVERY_WINDOW_S`` (1 s) of intervals starting there is at or above it too. The time to
  settle on the surviving capacity; the 1 s mean keeps one lucky interval inside a stall, or
  one noisy interval after the return, from ending or delaying it.
* **recovery_to_before_s**: the same against 90 % of before: the time until the survivors
  give back the whole rate (None when they never do, the usual case when capacity was lost).
* **after_pct_of_before**: after / before x 100, the capacity the survivors deliver.

Errors are ``NodeLossError`` naming what is missing; nothing is guessed.
"""

from __future__ import annotations

import os
import re
from typing import Dict, List, Optional, Sequence, Tuple, TypedDict

from storagebench.protocol.node_loss import (
    AFTER_S,
    BEFORE_S,
    INTERVAL_MS,
    MIN_BEFORE_S,
    RECOVERY_PCT,
    RECOVERY_WINDOW_S,
    STALL_PCT,
)

DIRECTIONS = {0: "read", 1: "write", 2: "trim"}
_FILE = re.compile(r"^(?P<prefix>.+)_(?P<kind>iops|bw)(?:\.(?P<job>\d+))?\.log$")


class NodeLossError(ValueError):
    """The logs cannot say what the removal did (too short, empty, no throughput before it)."""


class LossMeasurement(TypedDict):
    metric: str  # iops | bw_mibps
    interval_ms: int
    removed_at_s: float  # on fio's clock (seconds since the phase's fio started)
    before: float  # mean rate over the window before the removal
    before_window_s: float
    after: float  # mean rate over the last AFTER_S of the log
    after_window_s: float
    after_pct_of_before: float
    pause_s: float
    pause_start_s: Optional[float]  # relative to the removal; None when there was no pause
    recovered: bool
    recovery_s: Optional[float]
    recovery_to_before_s: Optional[float]
    log_end_s: float


Sample = Tuple[int, float, int]  # time_ms, value, direction


def parse_rate_log(text: str, source: str = "log") -> List[Sample]:
    """One fio rate log: ``time_ms, value, direction, block size, offset[, priority]`` a line."""
    samples: List[Sample] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        fields = [field.strip() for field in line.split(",")]
        if len(fields) < 3:
            raise NodeLossError(f"{source} line {number}: expected fio's comma-separated fields: {line!r}")
        try:
            samples.append((int(fields[0]), float(fields[1]), int(fields[2])))
        except ValueError:
            raise NodeLossError(f"{source} line {number}: non-numeric field in {line!r}") from None
    return samples


def interval_series(jobs: Sequence[Sequence[Sample]], interval_ms: int) -> Dict[str, Dict[int, float]]:
    """Per direction, interval index -> the jobs' rates summed (a job's samples in one interval averaged)."""
    if interval_ms <= 0:
        raise NodeLossError(f"interval_ms {interval_ms} must be positive")
    totals: Dict[str, Dict[int, float]] = {}
    for samples in jobs:
        per: Dict[str, Dict[int, List[float]]] = {}
        for time_ms, value, direction in samples:
            name = DIRECTIONS.get(direction)
            if name is None:
                continue
            index = max(1, (time_ms + interval_ms // 2) // interval_ms)
            per.setdefault(name, {}).setdefault(index, []).append(value)
        for name, by_index in per.items():
            target = totals.setdefault(name, {})
            for index, values in by_index.items():
                target[index] = target.get(index, 0.0) + sum(values) / len(values)
    return totals


def _mean(values: Sequence[float]) -> float:
    return sum(values) / len(values)


def _filled(series: Dict[int, float], last: int) -> List[float]:
    """Intervals 1..last: a lone missing one is its neighbours' mean, a run of missing ones is 0."""
    rates: List[float] = []
    for index in range(1, last + 1):
        if index in series:
            rates.append(series[index])
        elif index - 1 in series and index + 1 in series:
            rates.append((series[index - 1] + series[index + 1]) / 2)
        elif index == 1 and index + 1 in series:
            rates.append(series[index + 1])  # fio's first sample a few ms late
        else:
            rates.append(0.0)
    return rates


def measure(
    series: Dict[int, float],
    removed_at_ms: float,
    interval_ms: int = INTERVAL_MS,
    metric: str = "iops",
) -> LossMeasurement:
    """The pause and recovery of one direction's series (interval index -> rate); see the module doc."""
    if not series:
        raise NodeLossError("the log has no samples")
    step_s = interval_ms / 1000.0
    last = max(series)
    rates = _filled(series, last)  # rates[i] ends at (i+1) x step
    ends_s = [(i + 1) * step_s for i in range(len(rates))]
    removed_s = removed_at_ms / 1000.0
    log_end_s = ends_s[-1]
    if removed_s <= 0:
        raise NodeLossError(f"removal at {removed_s:g} s: must be after fio's start (0 s)")
    eps = step_s / 1000.0
    before_rates = [r for r, end in zip(rates, ends_s) if removed_s - BEFORE_S < end <= removed_s + eps]
    before_span = len(before_rates) * step_s
    if before_span < MIN_BEFORE_S - eps:
        raise NodeLossError(
            f"log too short before the removal: {before_span:g} s of {metric} at {removed_s:g} s, "
            f"at least {MIN_BEFORE_S:g} s needed"
        )
    before = _mean(before_rates)
    if before <= 0:
        raise NodeLossError(f"no {metric} in the {before_span:g} s before the removal: nothing to lose")
    after_count = max(1, round(AFTER_S / step_s))
    if len(rates) < after_count or ends_s[-after_count] - step_s < removed_s - eps:
        raise NodeLossError(
            f"log too short after the removal: it ends at {log_end_s:g} s, the removal at {removed_s:g} s; "
            f"at least {AFTER_S:g} s after it needed"
        )
    after = _mean(rates[-after_count:])
    stall = before * STALL_PCT / 100.0
    pause_s, pause_start = 0.0, None
    run_start: Optional[int] = None
    for i, rate in enumerate([*rates, float("inf")]):
        if i < len(rates) and rate <= stall:
            if run_start is None:
                run_start = i
            continue
        if run_start is not None:
            length = (i - run_start) * step_s
            if ends_s[i - 1] > removed_s + eps and length > pause_s:
                pause_s, pause_start = length, ends_s[run_start] - step_s - removed_s
            run_start = None
    recovered = after > stall
    first = next(i for i, end in enumerate(ends_s) if end > removed_s + eps)
    window = max(1, round(RECOVERY_WINDOW_S / step_s))

    def settle(level: float) -> Optional[float]:
        for i in range(first, len(rates) - window + 1):
            if rates[i] >= level and _mean(rates[i : i + window]) >= level:
                return max(0.0, round(ends_s[i] - step_s - removed_s, 6))
        return None

    return {
        "metric": metric,
        "interval_ms": interval_ms,
        "removed_at_s": round(removed_s, 6),
        "before": before,
        "before_window_s": round(before_span, 6),
        "after": after,
        "after_window_s": round(after_count * step_s, 6),
        "after_pct_of_before": after / before * 100.0,
        "pause_s": round(pause_s, 6),
        "pause_start_s": None if pause_start is None else round(pause_start, 6),
        "recovered": recovered,
        "recovery_s": settle(after * RECOVERY_PCT / 100.0) if recovered else None,
        "recovery_to_before_s": settle(before * RECOVERY_PCT / 100.0) if recovered else None,
        "log_end_s": round(log_end_s, 6),
    }


def log_end_ms(directory: str) -> Optional[float]:
    """The last sample's time (ms, fio's log clock) over a phase's ``ts/`` rate logs; None if none."""
    ends = []
    for name in os.listdir(directory):
        if _FILE.match(name):
            with open(os.path.join(directory, name), encoding="utf-8") as handle:
                samples = parse_rate_log(handle.read(), name)
            ends += [samples[-1][0]] if samples else []
    return float(max(ends)) if ends else None


def measure_directory(
    directory: str, removed_at_ms: float, interval_ms: int = INTERVAL_MS
) -> Dict[str, LossMeasurement]:
    """Every direction of a phase's ``ts/`` logs, measured on IOPS (``<direction>``) and on MiB/s
    (``<direction>_bw``: the same figures for bandwidth, which a mixed block size needs)."""
    logs: Dict[str, List[List[Sample]]] = {"iops": [], "bw": []}
    for name in sorted(os.listdir(directory)):
        found = _FILE.match(name)
        if not found:
            continue
        with open(os.path.join(directory, name), encoding="utf-8") as handle:
            logs[found["kind"]].append(parse_rate_log(handle.read(), name))
    if not logs["iops"]:
        raise NodeLossError(f"{directory}: no fio iops log (write_iops_log) to measure")
    result: Dict[str, LossMeasurement] = {}
    for direction, series in sorted(interval_series(logs["iops"], interval_ms).items()):
        result[direction] = measure(series, removed_at_ms, interval_ms, "iops")
    for direction, series in sorted(interval_series(logs["bw"], interval_ms).items()):
        mibps = {index: value / 1024.0 for index, value in series.items()}
        result[f"{direction}_bw"] = measure(mibps, removed_at_ms, interval_ms, "bw_mibps")
    return result

"""Latencies drawn from the EBS twin's own model, written down the way fio writes them.

The analysis reads latency from fio's json+ output: ``clat_ns`` with fio's percentiles and its
``bins`` (fio's log-linear latency histogram, ``stat.c``: 64 bins per power of two, each bin
reported by its midpoint). These helpers run the twin's model in virtual time (the same closed
loop as ``storagebench.agent.twin.model.predict``), keep every I/O's latency, and encode the
latencies exactly as fio 3.x would, so the records, grades and detectors under test see what a
run on a twin would give them, with the true distribution known.
"""

from __future__ import annotations

import heapq
import math
import random
import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from storagebench.agent.twin.model import VolumeModel

# fio's latency histogram (stat.h): FIO_IO_U_PLAT_BITS, _VAL and _NR (29 groups of 64 bins).
PLAT_BITS = 6
PLAT_VAL = 1 << PLAT_BITS
PLAT_NR = 29 * PLAT_VAL
# fio's default percentile list (options.c: def_percentile_list).
FIO_PERCENTILES = (
    1.0,
    5.0,
    10.0,
    20.0,
    30.0,
    40.0,
    50.0,
    60.0,
    70.0,
    80.0,
    90.0,
    95.0,
    99.0,
    99.5,
    99.9,
    99.95,
    99.99,
)


def plat_index(value_ns: int) -> int:
    """fio's ``plat_val_to_idx``: the histogram bin of a latency in ns."""
    if value_ns < 0:
        raise ValueError(f"latency {value_ns} ns: a non-negative integer expected")
    msb = value_ns.bit_length() - 1 if value_ns > 0 else 0
    if msb <= PLAT_BITS:
        return value_ns
    error_bits = msb - PLAT_BITS
    base = (error_bits + 1) << PLAT_BITS
    offset = (PLAT_VAL - 1) & (value_ns >> error_bits)
    return min(base + offset, PLAT_NR - 1)


def plat_value(index: int) -> int:
    """fio's ``plat_idx_to_val``: the midpoint (ns) fio prints for a bin."""
    if not 0 <= index < PLAT_NR:
        raise ValueError(f"bin index {index}: 0 <= index < {PLAT_NR} expected")
    if index < (PLAT_VAL << 1):
        return index
    error_bits = (index >> PLAT_BITS) - 1
    base = 1 << (error_bits + PLAT_BITS)
    k = index % PLAT_VAL
    return base + int((k + 0.5) * (1 << error_bits))


def fio_bins(latencies_s: Sequence[float]) -> dict[int, int]:
    """json+ ``bins``: fio's bin midpoint (ns) -> I/O count, empty bins left out as fio does."""
    counts: dict[int, int] = {}
    for latency in latencies_s:
        index = plat_index(round(latency * 1e9))
        counts[index] = counts.get(index, 0) + 1
    return {plat_value(index): count for index, count in sorted(counts.items())}


def fio_percentiles(bins: dict[int, int]) -> dict[str, int]:
    """fio's ``calc_clat_percentiles``: the first bin whose running count reaches p % of all I/O."""
    total = sum(bins.values())
    out: dict[str, int] = {}
    ordered = sorted(bins.items())
    for percent in FIO_PERCENTILES:
        threshold = Fraction(percent) / 100 * total
        running = 0
        for value, count in ordered:
            running += count
            if running >= threshold:
                out[f"{percent:f}"] = value
                break
    return out


def fio_document(
    latencies_s: Sequence[float], *, runtime_s: float, block_size: int, iodepth: int
) -> dict[str, Any]:
    """A fio 3.33 json+ document of one randread job that completed ``latencies_s``."""
    if not latencies_s:
        raise ValueError("latencies_s: at least one I/O expected")
    nanos = [round(latency * 1e9) for latency in latencies_s]
    bins = fio_bins(latencies_s)
    ios = len(nanos)
    runtime_ms = max(1, round(runtime_s * 1000))
    clat = {
        "min": min(nanos),
        "max": max(nanos),
        "mean": statistics.fmean(nanos),
        "stddev": statistics.stdev(nanos) if ios > 1 else 0.0,
        "N": ios,
        "percentile": fio_percentiles(bins),
        "bins": {str(value): count for value, count in bins.items()},
    }
    idle = {"io_bytes": 0, "io_kbytes": 0, "bw_bytes": 0, "bw": 0, "iops": 0.0, "runtime": 0, "total_ios": 0}
    return {
        "fio version": "fio-3.33",
        "global options": {"ioengine": "libaio", "direct": "1"},
        "jobs": [
            {
                "jobname": "twin",
                "groupid": 0,
                "error": 0,
                "job options": {"rw": "randread", "bs": str(block_size), "iodepth": str(iodepth)},
                "read": {
                    "io_bytes": ios * block_size,
                    "io_kbytes": ios * block_size // 1024,
                    "bw_bytes": round(ios * block_size * 1000 / runtime_ms),
                    "bw": round(ios * block_size / 1024 * 1000 / runtime_ms),
                    "iops": ios * 1000 / runtime_ms,
                    "runtime": runtime_ms,
                    "total_ios": ios,
                    "short_ios": 0,
                    "drop_ios": 0,
                    "clat_ns": clat,
                },
                "write": idle,
                "trim": idle,
                "usr_cpu": 1.0,
                "sys_cpu": 2.0,
            }
        ],
    }


@dataclass(frozen=True)
class Completion:
    """One I/O of a closed loop: when fio submitted it and when the model completed it (s)."""

    submitted: float
    done: float

    @property
    def latency(self) -> float:
        return self.done - self.submitted


def closed_loop(
    model: VolumeModel,
    *,
    iodepth: int,
    block_size: int,
    ios: int | None = None,
    until_s: float | None = None,
    capacity: int = 1 << 30,
    seed: int = 7,
) -> list[Completion]:
    """fio's closed loop at ``iodepth`` in virtual time, as ``model.predict`` runs it.

    Random aligned offsets from ``random.Random(seed + 1)``, the next I/O submitted at each
    completion; stops after ``ios`` completions or at the first completion past ``until_s``.
    Returns every I/O in completion order (``predict`` keeps only the second half's latencies).
    """
    if ios is None and until_s is None:
        raise ValueError("closed_loop: ios or until_s must bound the run")
    rng = random.Random(seed + 1)
    blocks = max(1, capacity // block_size)
    heap: list[tuple[float, float]] = []
    for _ in range(iodepth):
        heapq.heappush(
            heap, (model.complete_at(0.0, rng.randrange(blocks) * block_size, block_size, False), 0.0)
        )
    completions: list[Completion] = []
    while ios is None or len(completions) < ios:
        done, submitted = heapq.heappop(heap)
        if until_s is not None and done > until_s:
            break
        completions.append(Completion(submitted, done))
        heapq.heappush(
            heap, (model.complete_at(done, rng.randrange(blocks) * block_size, block_size, False), done)
        )
    return completions


def iops_series(completions: Sequence[Completion], seconds: int) -> list[tuple[float, float]]:
    """fio's 1 s averaged IOPS log: (end of window in s, completions in the window), full windows only."""
    counts = [0] * seconds
    for completion in completions:
        window = math.floor(completion.done)
        if 0 <= window < seconds:
            counts[window] += 1
    return [(float(window + 1), float(count)) for window, count in enumerate(counts)]

"""When a measurement is too small to mean anything, and how it is said.

A scaled-down workload can finish before there is anything to measure: 10 synchronous 1 MiB
writes in 0.007 s read as 1,413 MiB/s, a rate no volume sustains. Two thresholds:

* ``MIN_RUNTIME_S`` = 1 s of measured I/O. Below it, process start-up, the first I/O's cold
  path and the clock's resolution (dd prints its time in milliseconds) are a large share of
  the figure, the page cache or the volume's queue can absorb the whole run, and fio's 1 s
  averaged time series has no sample at all.
* ``MIN_IOS`` = 1,000 I/Os where latency percentiles are reported (fio). A p99 from fewer
  than 1,000 I/Os rests on fewer than 10 samples above it, and a p99.9 on none; the same
  run's IOPS is then a count of a few hundred events. dd and timed commands report no
  percentiles: only their runtime is judged (100 x 1 MiB over 3 s is a fair throughput).

The agent applies these as it runs (a warning on stderr and in the manifest) and collect
applies the same function to each record (a ``too-small`` label the report turns into a
finding), so the figure is flagged wherever it is read.
"""

from __future__ import annotations

from typing import Optional

MIN_RUNTIME_S = 1.0
MIN_IOS = 1000
LABEL = "too-small"


def too_small(runtime_s: Optional[float], ios: Optional[int], percentiles: bool) -> Optional[str]:
    """Why a measurement of ``ios`` I/Os over ``runtime_s`` is too small, or None when it is not.

    ``percentiles``: the measurement reports latency percentiles, so its I/O count is judged too.
    Unknown quantities (None) are not judged.
    """
    reasons = []
    if runtime_s is not None and runtime_s < MIN_RUNTIME_S:
        reasons.append(f"{runtime_s:.3g} s of I/O (under {MIN_RUNTIME_S:g} s)")
    if percentiles and ios is not None and ios < MIN_IOS:
        reasons.append(f"{ios:,} I/Os (under {MIN_IOS:,} for latency percentiles)")
    if not reasons:
        return None
    return (
        "too small to measure: "
        + " and ".join(reasons)
        + "; its rates are start-up and cache effects, not the storage (raise the scale or the runtime)"
    )

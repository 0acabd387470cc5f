"""The latency arithmetic of fio's output: json+ histograms merged bin by bin, percentiles as fio
computes them from its bins, the report's log buckets (4 per octave), and several jobs' (samples,
mean, stdev) pooled into the group's. ``results.fio`` aggregates records with them.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from fractions import Fraction

from storagebench.results.records import HistogramBucket

BUCKETS_PER_OCTAVE = 4


def merge_bins(histograms: Iterable[Mapping[int, int]]) -> dict[int, int]:
    """Sum json+ histograms bin by bin (all fio jobs share the same bin boundaries)."""
    merged: dict[int, int] = {}
    for bins in histograms:
        for value, count in bins.items():
            merged[value] = merged.get(value, 0) + count
    return merged


def percentile_from_bins(bins: Mapping[int, int], percent: float) -> float | None:
    """The latency (bin value, ns) at ``percent``, as fio computes it from its histogram.

    fio (``calc_clat_percentiles``) walks the bins in order and reports the first bin whose
    cumulative count reaches ``percent / 100 * total``; exact rational arithmetic here mirrors
    fio's long double so a single job's bins reproduce fio's own percentiles exactly.
    """
    total = sum(bins.values())
    if total <= 0:
        return None
    threshold = Fraction(percent) * total / 100
    cumulative = 0
    for value in sorted(bins):
        cumulative += bins[value]
        if cumulative >= threshold:
            return float(value)
    return float(max(bins))


def bucket_index(latency_us: float) -> int:
    """Index k of the log bucket holding ``latency_us``: 2^((k-1)/4) <= latency < 2^(k/4) us."""
    latency_us = max(latency_us, 1e-3)  # a 0 ns bin (never seen in practice) joins the 1 ns bucket
    k = math.floor(BUCKETS_PER_OCTAVE * math.log2(latency_us)) + 1
    # Guard the floating point edge at exact bucket bounds.
    while latency_us >= 2.0 ** (k / BUCKETS_PER_OCTAVE):
        k += 1
    while latency_us < 2.0 ** ((k - 1) / BUCKETS_PER_OCTAVE):
        k -= 1
    return k


def log_histogram(bins_ns: Mapping[int, int]) -> list[HistogramBucket]:
    """Re-bucket json+ bins (ns) onto log buckets of 4 per octave, upper bounds 2^(k/4) us."""
    counts: dict[int, int] = {}
    for value, count in bins_ns.items():
        if count <= 0:
            continue
        k = bucket_index(value / 1000.0)
        counts[k] = counts.get(k, 0) + count
    return [HistogramBucket(le_us=2.0 ** (k / BUCKETS_PER_OCTAVE), count=counts[k]) for k in sorted(counts)]


def pooled_stats(parts: Sequence[tuple[int, float, float]]) -> tuple[int, float, float]:
    """Combine (samples, mean, sample stdev) of several jobs into the whole group's.

    The mean is weighted by samples; the standard deviation is the sample (n - 1) deviation
    of the union, the same estimator fio uses for one job and for group_reporting.
    """
    total = sum(n for n, _, _ in parts)
    if total <= 0:
        return 0, 0.0, 0.0
    mean = sum(n * m for n, m, _ in parts) / total
    if total == 1:
        return total, mean, 0.0
    squares = sum((n - 1) * s * s + n * (m - mean) ** 2 for n, m, s in parts if n > 0)
    return total, mean, math.sqrt(max(squares, 0.0) / (total - 1))

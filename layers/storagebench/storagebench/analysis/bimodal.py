"""Bimodal latency detection on log-bucketed histograms.

Field study 4 found gp2 serving I/O in two clusters, one near 1 ms and one near 20 ms. A mean
or even a p95 blurs that into one misleading number, so the report must say "two modes" on its
own. Records carry latency histograms on log buckets, 4 per octave, bucket k covering
[2^((k-1)/4), 2^(k/4)) microseconds with empty buckets omitted.

A histogram is called bimodal when, after light smoothing, it has two peaks at least
``min_separation`` apart in latency (4x by default: two octaves, so jitter around one mode never
qualifies), each side of the valley carries at least ``min_mass`` of the I/O (5 %), and the
valley falls below ``max_valley`` (50 %) of the smaller peak.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict, Field

from storagebench.results.records import HistogramBucket

__all__ = ["BUCKETS_PER_OCTAVE", "Bimodal", "bucket_index", "detect_bimodal"]

BUCKETS_PER_OCTAVE = 4


class Bimodal(BaseModel):
    """Two latency modes and the valley between them; masses are fractions of all I/O."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    low_mode_us: float = Field(description="fast mode, interpolated between bucket centres")
    high_mode_us: float = Field(description="slow mode, interpolated between bucket centres")
    low_mass: float = Field(description="share of I/O below the valley (the valley bucket split evenly)")
    high_mass: float
    valley_us: float = Field(description="geometric centre of the valley bucket")
    valley_ratio: float = Field(description="smoothed valley height / smaller smoothed peak")
    separation: float = Field(description="high_mode_us / low_mode_us")


def bucket_index(le_us: float, per_octave: int = BUCKETS_PER_OCTAVE) -> int:
    """The k with le_us = 2^(k/per_octave); raises ValueError for a bound off the grid."""
    if not le_us > 0 or not math.isfinite(le_us):
        raise ValueError(f"bucket bound must be positive and finite, got {le_us!r}")
    exact = per_octave * math.log2(le_us)
    k = round(exact)
    if abs(exact - k) > 1e-6 * max(1.0, abs(exact)):
        raise ValueError(f"bucket bound {le_us} us is not on the {per_octave}-per-octave grid")
    return k


def _centre_us(k: float, per_octave: int) -> float:
    """Geometric centre of bucket k (k may be fractional after peak interpolation)."""
    return float(2.0 ** ((k - 0.5) / per_octave))


def _peak_offset(smooth: Sequence[float], i: int) -> float:
    """Sub-bucket position of the peak at i, in buckets within [-0.5, 0.5].

    A log-normal mode is a parabola in log(count) over log(latency), so Gaussian interpolation
    of the three buckets around the peak recovers the mode between bucket centres; without it
    a 3.5x separation could be read as 4x on a grid whose step is 19 %.
    """
    a, b, c = smooth[i - 1], smooth[i], smooth[i + 1]
    if a > 0 and c > 0:
        a, b, c = math.log(a), math.log(b), math.log(c)
    denom = a - 2 * b + c
    if denom >= 0:
        return 0.0
    return max(-0.5, min(0.5, 0.5 * (a - c) / denom))


def detect_bimodal(
    buckets: Sequence[HistogramBucket],
    *,
    min_separation: float = 4.0,
    min_mass: float = 0.05,
    max_valley: float = 0.5,
    per_octave: int = BUCKETS_PER_OCTAVE,
) -> Bimodal | None:
    """The most balanced qualifying pair of modes, or None when the histogram is not bimodal.

    Of pairs equally balanced (the same valley), the one with the tallest peaks: each side's mode.
    """
    counts_by_k: dict[int, int] = {}
    for bucket in buckets:
        if bucket.count < 0:
            raise ValueError("bucket counts must be non-negative")
        k = bucket_index(bucket.le_us, per_octave)
        counts_by_k[k] = counts_by_k.get(k, 0) + bucket.count
    total = sum(counts_by_k.values())
    if total == 0:
        return None
    # Dense array with two empty buckets of padding each side, so edge buckets can be peaks.
    k0 = min(counts_by_k) - 2
    size = max(counts_by_k) - k0 + 3
    raw = [float(counts_by_k.get(k0 + i, 0)) for i in range(size)]
    # Light [1, 2, 1] / 4 smoothing: merges single-bucket jitter without moving a real mode.
    smooth = [0.0] + [(raw[i - 1] + 2 * raw[i] + raw[i + 1]) / 4 for i in range(1, size - 1)] + [0.0]
    peaks = [i for i in range(1, size - 1) if smooth[i] > smooth[i - 1] and smooth[i] >= smooth[i + 1]]
    min_gap = per_octave * math.log2(min_separation)

    where = {i: i + _peak_offset(smooth, i) for i in peaks}
    best: tuple[tuple[float, float], Bimodal] | None = None
    for a, low in enumerate(peaks):
        for high in peaks[a + 1 :]:
            gap = where[high] - where[low]
            if gap < min_gap - 1e-9:
                continue
            valley = min(range(low, high + 1), key=lambda i: smooth[i])
            ratio = smooth[valley] / min(smooth[low], smooth[high])
            if ratio >= max_valley:
                continue
            low_mass = (math.fsum(raw[:valley]) + raw[valley] / 2) / total
            high_mass = (math.fsum(raw[valley + 1 :]) + raw[valley] / 2) / total
            if low_mass < min_mass or high_mass < min_mass:
                continue
            found = Bimodal(
                low_mode_us=_centre_us(k0 + where[low], per_octave),
                high_mode_us=_centre_us(k0 + where[high], per_octave),
                low_mass=low_mass,
                high_mass=high_mass,
                valley_us=_centre_us(k0 + valley, per_octave),
                valley_ratio=ratio,
                separation=2.0 ** (gap / per_octave),
            )
            # Pairs sharing a valley split the I/O alike; the taller peaks then name each side's
            # mode, not a small spike beside it (a cache hit, or I/O answered at once).
            score = (min(low_mass, high_mass), smooth[low] + smooth[high])
            if best is None or score > best[0]:
                best = (score, found)
    return None if best is None else best[1]

"""Burst knee detection: when a bursting volume ran out of credits, and what that did.

Field study 4 saw gp2 hold its 3,000 IOPS burst for a few minutes and then fall to its
baseline, so a number means little until we know which side of that knee it was taken on.
The knee is found by an exact two-segment piecewise-constant least-squares fit over a 1 s
rate series (IOPS or MiB/s): every split is scored in O(1) from prefix sums, O(n) overall.

A split is only reported as a knee when it is a *burst -> baseline* drop and not noise or a
ramp: the later level is materially lower, both segments have enough samples, the step
explains most of the variance, the step fits clearly better than a straight line, and each
segment is itself flat (a plateau), not part of a slide.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["Knee", "WindowLabel", "detect_knee", "fit_knee", "label_window"]

WindowLabel = Literal["burst", "baseline", "crossed-knee"]

_CHI2_95_1DF = 3.841
"""95 % point of chi-square(1): bounds the profile-likelihood range of the knee time."""


class Knee(BaseModel):
    """The best burst -> baseline split of a rate series, and whether it passed as a knee."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    knee_t: float = Field(description="time of the first baseline sample, on the series' clock")
    time_to_knee_s: float = Field(description="knee_t minus the first sample's time")
    knee_range: tuple[float, float] = Field(
        description="earliest and latest split times whose fit is within the ~95 % likelihood band"
    )
    before: float = Field(description="mean rate of the burst plateau")
    after: float = Field(description="mean rate of the baseline plateau")
    ratio: float = Field(description="after / before")
    n_before: int
    n_after: int
    r2: float = Field(description="share of the series' variance the step explains")
    step_vs_line: float = Field(
        description="step-fit residual / straight-line residual (inf when a line fits exactly)"
    )
    drift: float = Field(description="largest in-segment linear trend, as a fraction of the step")
    confidence: float = Field(ge=0.0, le=1.0, description="min(r2, 1 - step_vs_line), 0 if rejected")
    accepted: bool
    rejected_because: list[str] = Field(default_factory=list)


def _linear_sse(ts: Sequence[float], xs: Sequence[float]) -> tuple[float, float]:
    """Slope and residual sum of squares of the least-squares line through (ts, xs)."""
    n = len(ts)
    mt = math.fsum(ts) / n
    mx = math.fsum(xs) / n
    stt = math.fsum((t - mt) ** 2 for t in ts)
    sxx = math.fsum((x - mx) ** 2 for x in xs)
    if stt == 0:
        return 0.0, sxx
    stx = math.fsum((t - mt) * (x - mx) for t, x in zip(ts, xs, strict=True))
    return stx / stt, max(0.0, sxx - stx * stx / stt)


def _split_costs(xs: Sequence[float], min_segment: int) -> tuple[list[tuple[int, float]], float]:
    """Residual sum of squares of the two-plateau fit at every allowed split, and the total SS.

    Prefix sums make each split O(1): SSE = sum x^2 - S_left^2 / i - S_right^2 / (n - i).
    """
    n = len(xs)
    prefix_s = [0.0]
    prefix_q = [0.0]
    for x in xs:
        prefix_s.append(prefix_s[-1] + x)
        prefix_q.append(prefix_q[-1] + x * x)
    total_s, total_q = prefix_s[-1], prefix_q[-1]
    splits: list[tuple[int, float]] = []
    for i in range(min_segment, n - min_segment + 1):
        left, right = prefix_s[i], total_s - prefix_s[i]
        splits.append((i, max(0.0, total_q - left * left / i - right * right / (n - i))))
    return splits, max(0.0, total_q - total_s * total_s / n)


def fit_knee(
    series: Sequence[tuple[float, float]],
    *,
    max_ratio: float = 0.7,
    min_segment: int = 3,
    min_r2: float = 0.5,
    max_step_vs_line: float = 0.8,
    max_drift: float = 0.5,
) -> Knee | None:
    """Best two-plateau fit with its acceptance verdict; None if the series is too short to split.

    ``series`` is (time_s, rate) pairs, any order. Thresholds: ``max_ratio`` (after/before must be
    below it: a material drop), ``min_segment`` samples per side, ``min_r2`` variance explained,
    ``max_step_vs_line`` (step residual over line residual; a ramp scores ~1 or more) and
    ``max_drift`` (trend inside a segment relative to the step; plateaus score ~0).
    """
    if min_segment < 1:
        raise ValueError("min_segment must be at least 1")
    points = sorted((float(t), float(x)) for t, x in series)
    if not all(math.isfinite(t) and math.isfinite(x) for t, x in points):
        raise ValueError("series must be finite")
    n = len(points)
    if n < 2 * min_segment:
        return None
    ts = [t for t, _ in points]
    offset = math.fsum(x for _, x in points) / n
    xs = [x - offset for _, x in points]  # centred: keeps the prefix-sum SSE well conditioned

    splits, sst = _split_costs(xs, min_segment)
    best_i, best_sse = min(splits, key=lambda s: s[1])
    total_s = math.fsum(xs)
    left_s = math.fsum(xs[:best_i])

    # Profile-likelihood band of the split: n * ln(SSE_i / SSE_best) <= chi2(1, 0.95).
    limit = best_sse * math.exp(_CHI2_95_1DF / n) + 1e-12 * sst
    in_band = [ts[i] for i, sse in splits if sse <= limit]

    before = left_s / best_i + offset
    after = (total_s - left_s) / (n - best_i) + offset
    r2 = 1.0 - best_sse / sst if sst > 0 else 0.0
    _, line_sse = _linear_sse(ts, xs)
    step_vs_line = best_sse / line_sse if line_sse > 0 else math.inf
    step = before - after
    drifts: list[float] = []
    for seg_t, seg_x in ((ts[:best_i], xs[:best_i]), (ts[best_i:], xs[best_i:])):
        slope, _ = _linear_sse(seg_t, seg_x)
        span = seg_t[-1] - seg_t[0]
        drifts.append(abs(slope * span) / step if step > 0 else math.inf)
    drift = max(drifts)
    ratio = after / before if before > 0 else math.inf

    reasons: list[str] = []
    if sst == 0:
        reasons.append("constant series")
    if not before > 0:
        reasons.append("burst level is not positive")
    elif not ratio < max_ratio:
        reasons.append(f"drop not material: after/before {ratio:.2f} >= {max_ratio}")
    if r2 < min_r2:
        reasons.append(f"step explains {r2:.0%} of the variance (< {min_r2:.0%})")
    if not step_vs_line <= max_step_vs_line:
        reasons.append(f"a straight line fits nearly as well (step/line residual {step_vs_line:.2f}): a ramp")
    if not drift <= max_drift:
        reasons.append(f"segments are not plateaus: in-segment trend {drift:.2f} of the step")

    accepted = not reasons
    confidence = max(0.0, min(r2, 1.0 - step_vs_line)) if accepted else 0.0
    return Knee(
        knee_t=ts[best_i],
        time_to_knee_s=ts[best_i] - ts[0],
        knee_range=(min(in_band), max(in_band)),
        before=before,
        after=after,
        ratio=ratio,
        n_before=best_i,
        n_after=n - best_i,
        r2=r2,
        step_vs_line=step_vs_line,
        drift=drift,
        confidence=confidence,
        accepted=accepted,
        rejected_because=reasons,
    )


def detect_knee(
    series: Sequence[tuple[float, float]],
    *,
    max_ratio: float = 0.7,
    min_segment: int = 3,
    min_r2: float = 0.5,
    max_step_vs_line: float = 0.8,
    max_drift: float = 0.5,
) -> Knee | None:
    """The burst -> baseline knee of ``series``, or None when there is none worth reporting."""
    knee = fit_knee(
        series,
        max_ratio=max_ratio,
        min_segment=min_segment,
        min_r2=min_r2,
        max_step_vs_line=max_step_vs_line,
        max_drift=max_drift,
    )
    return knee if knee is not None and knee.accepted else None


def label_window(start_s: float, end_s: float, knee: Knee | float, margin_s: float = 0.0) -> WindowLabel:
    """Which side of the knee a record's measurement window [start_s, end_s] lies on.

    Times must be on the series' clock. With a ``Knee`` its likelihood range widens the knee, so a
    window that ends inside the uncertainty is "crossed-knee" rather than a confident "burst".
    """
    if end_s < start_s:
        raise ValueError("window ends before it starts")
    if isinstance(knee, Knee):
        first, last = knee.knee_range[0] - margin_s, knee.knee_range[1] + margin_s
    else:
        first, last = knee - margin_s, knee + margin_s
    if end_s <= first:
        return "burst"
    if start_s >= last:
        return "baseline"
    return "crossed-knee"

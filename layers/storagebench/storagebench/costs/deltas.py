"""One metric of one workload against the baseline: the delta of the repetition means and whether it is
significant, by Welch's t-test over the repetitions (``analysis.significance``; see ``costs.compare``'s
module notes)."""

from __future__ import annotations

from collections.abc import Mapping

from pydantic import Field

from storagebench.analysis.significance import welch_test
from storagebench.analysis.stats import Aggregate, Summary
from storagebench.costs.measures import (
    INTENT_METRICS,
    METRICS,
    RATE_FIRST,
    Frozen,
    MeasureKey,
    Noise,
    measurement_name,
)

# ------------------------------------------------------------------------------ deltas


class MetricDelta(Frozen):
    """One metric of one measurement: config against baseline."""

    workload: str
    measurement: str = Field(description="phase, sweep point, direction or target; '' when the only one")
    metric: str
    label: str
    higher_is_better: bool
    baseline_mean: float
    mean: float
    baseline_ci95: tuple[float, float] | None
    ci95: tuple[float, float] | None
    baseline_n: int
    n: int
    delta_pct: float | None = Field(description="(mean - baseline mean) / |baseline mean| x 100")
    p_value: float | None = Field(
        default=None, description="Welch's t-test; null with one repetition on a side"
    )
    better: bool | None = Field(description="None unless the difference is significant")
    noise: Noise = Field(
        description="outside: a significant difference (p < 0.05); overlap: no significant difference; "
        "unknown: one repetition on a side, no test"
    )
    assessment: str


def _ci(summary: Summary) -> tuple[float, float] | None:
    if summary.ci95_low is None or summary.ci95_high is None:
        return None
    return (summary.ci95_low, summary.ci95_high)


def pct(value: float) -> str:
    a = abs(value)
    return f"{a:.1f}" if a < 1 else f"{a:.0f}"


def metric_delta(workload: str, measurement: str, metric: str, base: Summary, other: Summary) -> MetricDelta:
    spec = METRICS[metric]
    delta = (other.mean - base.mean) / abs(base.mean) * 100.0 if base.mean != 0 else None
    base_ci, ci = _ci(base), _ci(other)
    # Welch's t-test needs 2 repetitions a side; with fewer the difference is untested
    test = welch_test(base.values, other.values) if base.n >= 2 and other.n >= 2 else None
    noise: Noise = "unknown" if test is None else "outside" if test.significant else "overlap"
    better: bool | None = None
    if noise == "outside" and other.mean != base.mean:
        better = (other.mean > base.mean) == spec.higher_is_better
    if test is not None and noise == "overlap":
        assessment = f"no significant difference (p = {test.p_value:.2g})"
    elif delta is None:
        assessment = "baseline is 0: no relative difference"
    else:
        direction = "higher" if delta > 0 else "lower"
        assessment = f"{pct(delta)} % {direction} {spec.label}" + (
            " (single repetition: no test, noise unknown)" if noise == "unknown" else ""
        )
    return MetricDelta(
        workload=workload,
        measurement=measurement,
        metric=metric,
        label=spec.label,
        higher_is_better=spec.higher_is_better,
        baseline_mean=base.mean,
        mean=other.mean,
        baseline_ci95=base_ci,
        ci95=ci,
        baseline_n=base.n,
        n=other.n,
        delta_pct=delta,
        p_value=test.p_value if test is not None else None,
        better=better,
        noise=noise,
        assessment=assessment,
    )


def importance(d: MetricDelta) -> tuple[int, float]:
    """Sort key: significant differences by size, then untested ones (one repetition), then the rest."""
    return ({"outside": 0, "unknown": 1, "overlap": 2}[d.noise], -abs(d.delta_pct or 0.0))


class WorkloadComparison(Frozen):
    workload: str
    name: str
    intent: str
    headline: MetricDelta | None = Field(description="the difference the verdict speaks of")
    several_measurements: bool = Field(description="the headline's measurement is named in the verdict")
    deltas: list[MetricDelta]


def compare_workload(
    workload: str,
    name: str,
    intent: str,
    base: Mapping[MeasureKey, Aggregate],
    other: Mapping[MeasureKey, Aggregate],
) -> WorkloadComparison | None:
    keys = [k for k in base if k.workload == workload and k in other]
    if not keys:
        return None
    directions = {k.direction for k in keys}
    deltas: list[MetricDelta] = []
    by_metric: dict[str, list[tuple[MeasureKey, MetricDelta]]] = {}
    for key in keys:
        for metric in METRICS:
            b, o = base[key].metrics.get(metric), other[key].metrics.get(metric)
            if b is None or o is None:
                continue
            # A synthesized read+write total carries rates only; latency stays per direction.
            d = metric_delta(workload, measurement_name(key, totals=len(directions) > 1), metric, b, o)
            deltas.append(d)
            by_metric.setdefault(metric, []).append((key, d))
    headline: MetricDelta | None = None
    several = False
    for metric in INTENT_METRICS.get(intent, RATE_FIRST):
        candidates = by_metric.get(metric)
        if not candidates:
            continue
        if METRICS[metric].kind == "rate" and any(k.direction == "mixed" for k, _ in candidates):
            candidates = [(k, d) for k, d in candidates if k.direction == "mixed"]
        several = len(candidates) > 1
        headline = min((d for _, d in candidates), key=importance)
        break
    return WorkloadComparison(
        workload=workload,
        name=name,
        intent=intent,
        headline=headline,
        several_measurements=several,
        deltas=deltas,
    )

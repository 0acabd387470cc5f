"""Cost against performance: each config against the request's baseline, in numbers and one line.

For every config this gives the monthly cost delta, and for each workload the delta of every
headline metric from the repetition means (``analysis.stats.aggregate``) with its 95 % confidence
intervals: when the two intervals overlap the difference is reported as "no measurable
difference" (a conservative rule: overlapping intervals can still hide a real difference, but
non-overlapping ones do not arise from noise alone at this level). With a single repetition there
is no interval and the difference is marked as of unknown noise.

Metrics: IOPS and MiB/s (higher is better); mean, p95 and p99 latency and a timed command's
``real_s`` (lower is better). A workload that records reads and writes separately is also judged
on their per-repetition total (the device-level rate, as ``analysis.delivery.combined_rate``).

Verdict wording (one line per config, see :func:`verdict`):

1. The cost first: "N % cheaper", "N % more expensive" (from 2x: "2.9x the cost"), or "same
   monthly cost" below 0.5 %; "(cost partly unpriced)" when either side has unpriced parts or
   missing prices.
2. Then at most :data:`MAX_VERDICT_ITEMS` workload differences, most important first: the largest
   differences that are not inside the noise (a single-run one, of unknown noise, is marked
   "(1 run)"), then "within noise on W". Workloads left over are summed up as "within noise on N
   more" when they all are, else "N more not shown".
   Items are joined by ", ", or by "; " when a workload's name holds a comma.
3. Each workload is judged on its intent's metric (IOPS for IOPS and mixed workloads, MiB/s for
   throughput, p95 latency for latency probes, run time for timed commands and metadata; the next
   available metric when that one was not measured), on its measurement (phase, sweep point,
   direction, read+write total) with the most important difference; that measurement is named in
   parentheses when the workload has several.
4. Rates: "N % faster" / "N % slower" (from 2x: "2.4x faster"); latency: "N % lower p95 latency" /
   "N % higher p95 latency" (from 2x: "2.4x the p95 latency"); run time: "N % shorter" /
   "N % longer" (from 2x: "2.4x longer"). Percentages are whole numbers (one decimal below 1 %).
5. Workloads are named by the request's workload id when the request renamed the profile (e.g.
   "cellranger-count"), else by the profile's title without its trailing parenthesis
   ("4 jobs x 2 files, 4k random, 25 % reads").

Price-performance is the monthly cost per 1,000 IOPS and per MiB/s a workload delivered, at the
measurement where the baseline did best (the best operating point of a sweep). The Pareto frontier
of a workload metric holds the configs no other config beats on both monthly cost and the metric
(repetition means, same measurement as price-performance).
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal, NamedTuple

from pydantic import BaseModel, ConfigDict, Field, model_validator

from storagebench.analysis.stats import Aggregate, Summary, aggregate
from storagebench.costs.monthly import ConfigCost, cost_delta_pct, costs_by_id, fmt_usd
from storagebench.request.model import BenchmarkRequest
from storagebench.results.records import ResultRecord
from storagebench.workloads import get_profile

__all__ = [
    "MAX_VERDICT_ITEMS",
    "METRICS",
    "CandidateCheck",
    "Comparison",
    "ConfigComparison",
    "MeasureKey",
    "MetricDelta",
    "MetricSpec",
    "ParetoFrontier",
    "ParetoPoint",
    "PricePerformance",
    "Target",
    "TargetResult",
    "WorkloadComparison",
    "cheapest_meeting",
    "compare",
    "index_aggregates",
    "measurement_name",
    "metric_delta",
    "pareto_frontier",
    "representative_measure",
    "verdict",
    "with_totals",
    "workload_names",
]

MAX_VERDICT_ITEMS = 3
SAME_COST_BELOW_PCT = 0.5
Noise = Literal["outside", "overlap", "unknown"]


@dataclass(frozen=True)
class MetricSpec:
    name: str
    label: str
    higher_is_better: bool
    kind: Literal["rate", "latency", "time"]
    unit: str


METRICS: dict[str, MetricSpec] = {
    "iops": MetricSpec("iops", "IOPS", True, "rate", "IOPS"),
    "bw_mibps": MetricSpec("bw_mibps", "MiB/s", True, "rate", "MiB/s"),
    "lat_mean_us": MetricSpec("lat_mean_us", "mean latency", False, "latency", "us"),
    "lat_p95_us": MetricSpec("lat_p95_us", "p95 latency", False, "latency", "us"),
    "lat_p99_us": MetricSpec("lat_p99_us", "p99 latency", False, "latency", "us"),
    "real_s": MetricSpec("real_s", "run time", False, "time", "s"),
}
"""The metrics compared, and which way is better."""

_RATE_FIRST = ("iops", "bw_mibps", "real_s", "lat_p95_us", "lat_mean_us", "lat_p99_us")
INTENT_METRICS: dict[str, tuple[str, ...]] = {
    "iops": _RATE_FIRST,
    "mixed": _RATE_FIRST,
    "throughput": ("bw_mibps", "real_s", "iops", "lat_p95_us", "lat_mean_us", "lat_p99_us"),
    "latency": ("lat_p95_us", "lat_mean_us", "lat_p99_us", "iops", "bw_mibps", "real_s"),
    "metadata": ("real_s", "bw_mibps", "iops", "lat_p95_us", "lat_mean_us", "lat_p99_us"),
    "application": ("real_s", "bw_mibps", "iops", "lat_p95_us", "lat_mean_us", "lat_p99_us"),
}
"""Which metric judges a workload of each intent (the first one measured)."""

TOTAL_LABEL = "read+write total"


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


# ------------------------------------------------------------------------------ measurements


class MeasureKey(NamedTuple):
    """A measurement as configs share it; ``target`` is '' when the workload ran on one target."""

    workload: str
    target: str
    variant: str
    phase: str
    direction: str
    group: int | None


def with_totals(records: Iterable[ResultRecord]) -> list[ResultRecord]:
    """The records plus, for each repetition that recorded several directions (and no total), a
    ``mixed`` record with their summed IOPS and MiB/s: the device-level rate limits apply to."""
    out = list(records)
    groups: dict[tuple[object, ...], list[ResultRecord]] = {}
    for r in out:
        variant = ",".join(f"{k}={v}" for k, v in sorted(r.variant.items()))
        key = (r.config_id, r.target_id, r.workload, variant, r.phase, r.group, r.repetition)
        groups.setdefault(key, []).append(r)
    totals: list[ResultRecord] = []
    for members in groups.values():
        directions = {m.direction for m in members}
        if len(directions) < 2 or "mixed" in directions:
            continue
        iops = [m.iops for m in members if m.iops is not None]
        bw = [m.bw_mibps for m in members if m.bw_mibps is not None]
        if not iops and not bw:
            continue
        first = members[0]
        ios = [m.ios for m in members if m.ios is not None]
        totals.append(
            ResultRecord(
                config_id=first.config_id,
                target_id=first.target_id,
                workload=first.workload,
                profile=first.profile,
                variant=dict(first.variant),
                repetition=first.repetition,
                phase=first.phase,
                direction="mixed",
                engine=first.engine,
                group=first.group,
                jobs=first.jobs,
                iops=math.fsum(iops) if iops else None,
                bw_mibps=math.fsum(bw) if bw else None,
                bytes=sum(m.bytes for m in members),
                ios=sum(ios) if ios else None,
                runtime_s=max(m.runtime_s for m in members),
                labels=[*first.labels, TOTAL_LABEL],
            )
        )
    return out + totals


def index_aggregates(aggregates: Iterable[Aggregate]) -> dict[str, dict[MeasureKey, Aggregate]]:
    """Aggregates by config, then by measurement (target id dropped when a workload used one)."""
    targets: dict[tuple[str, str], set[str]] = {}
    aggs = list(aggregates)
    for a in aggs:
        targets.setdefault((a.config_id, a.workload), set()).add(a.target_id)
    out: dict[str, dict[MeasureKey, Aggregate]] = {}
    for a in aggs:
        single = len(targets[(a.config_id, a.workload)]) == 1
        key = MeasureKey(a.workload, "" if single else a.target_id, a.variant, a.phase, a.direction, a.group)
        out.setdefault(a.config_id, {})[key] = a
    return out


def measurement_name(key: MeasureKey, totals: bool = True) -> str:
    parts: list[str] = []
    if key.target:
        parts.append(f"target {key.target}")
    if key.phase not in ("run", ""):
        parts.append(f"{key.phase} phase")
    if key.variant:
        parts.append(key.variant)
    if key.direction == "mixed":
        if totals:
            parts.append(TOTAL_LABEL)
    else:
        parts.append(key.direction)
    if key.group is not None:
        parts.append(f"group {key.group}")
    return ", ".join(parts)


def workload_names(request: BenchmarkRequest | None) -> dict[str, str]:
    """Workload id -> its name in verdicts: the id when the request renamed the profile, else the
    profile's title without a trailing parenthesis."""
    names: dict[str, str] = {}
    if request is None:
        return names
    for w in request.resolved_workloads():
        if w.id != w.profile:
            names[w.id] = w.id
            continue
        try:
            title = get_profile(w.profile).title
        except KeyError:
            names[w.id] = w.id
            continue
        names[w.id] = re.sub(r"\s*\([^)]*\)$", "", title) or w.id
    return names


def _intents(request: BenchmarkRequest | None) -> dict[str, str]:
    out: dict[str, str] = {}
    if request is None:
        return out
    for w in request.resolved_workloads():
        try:
            out[w.id] = get_profile(w.profile).intent
        except KeyError:
            out[w.id] = "mixed"
    return out


# ------------------------------------------------------------------------------ deltas


class MetricDelta(_Frozen):
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
    better: bool | None = Field(description="None when within the noise or equal")
    noise: Noise = Field(description="outside: intervals apart; overlap: inside the noise; unknown: n = 1")
    assessment: str


def _ci(summary: Summary) -> tuple[float, float] | None:
    if summary.ci95_low is None or summary.ci95_high is None:
        return None
    return (summary.ci95_low, summary.ci95_high)


def _pct(value: float) -> str:
    a = abs(value)
    return f"{a:.1f}" if a < 1 else f"{a:.0f}"


def metric_delta(workload: str, measurement: str, metric: str, base: Summary, other: Summary) -> MetricDelta:
    spec = METRICS[metric]
    delta = (other.mean - base.mean) / abs(base.mean) * 100.0 if base.mean != 0 else None
    base_ci, ci = _ci(base), _ci(other)
    noise: Noise
    if base_ci is None or ci is None:
        noise = "unknown"
    elif base_ci[0] <= ci[1] and ci[0] <= base_ci[1]:
        noise = "overlap"
    else:
        noise = "outside"
    better: bool | None = None
    if noise != "overlap" and other.mean != base.mean:
        better = (other.mean > base.mean) == spec.higher_is_better
    if noise == "overlap":
        assessment = "no measurable difference (95 % intervals overlap)"
    elif delta is None:
        assessment = "baseline is 0: no relative difference"
    else:
        direction = "higher" if delta > 0 else "lower"
        assessment = f"{_pct(delta)} % {direction} {spec.label}" + (
            " (single repetition: noise unknown)" if noise == "unknown" else ""
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
        better=better,
        noise=noise,
        assessment=assessment,
    )


def _importance(d: MetricDelta) -> tuple[int, float]:
    """Sort key: differences (outside the noise, or of unknown noise) by size, then those within."""
    return (1 if d.noise == "overlap" else 0, -abs(d.delta_pct or 0.0))


class WorkloadComparison(_Frozen):
    workload: str
    name: str
    intent: str
    headline: MetricDelta | None = Field(description="the difference the verdict speaks of")
    several_measurements: bool = Field(description="the headline's measurement is named in the verdict")
    deltas: list[MetricDelta]


def _compare_workload(
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
    for metric in INTENT_METRICS.get(intent, _RATE_FIRST):
        candidates = by_metric.get(metric)
        if not candidates:
            continue
        if METRICS[metric].kind == "rate" and any(k.direction == "mixed" for k, _ in candidates):
            candidates = [(k, d) for k, d in candidates if k.direction == "mixed"]
        several = len(candidates) > 1
        headline = min((d for _, d in candidates), key=_importance)
        break
    return WorkloadComparison(
        workload=workload,
        name=name,
        intent=intent,
        headline=headline,
        several_measurements=several,
        deltas=deltas,
    )


# ------------------------------------------------------------------------------ verdict


def _cost_clause(delta: float | None) -> str:
    if delta is None:
        return "cost not comparable (baseline costs $0)"
    if abs(delta) < SAME_COST_BELOW_PCT:
        return "same monthly cost"
    if delta < 0:
        return f"{_pct(delta)} % cheaper"
    if delta >= 100:
        return f"{1 + delta / 100:.1f}x the cost"
    return f"{_pct(delta)} % more expensive"


def _difference(w: WorkloadComparison) -> str:
    d = w.headline
    assert d is not None
    where = w.name + (f" ({d.measurement})" if w.several_measurements and d.measurement else "")
    if d.noise == "overlap":
        return f"within noise on {where}"
    if d.delta_pct is None:
        return f"not comparable on {where} (baseline 0)"
    if d.delta_pct == 0:
        return f"no change on {where}"
    spec = METRICS[d.metric]
    ratio = 1 + d.delta_pct / 100
    up = d.delta_pct > 0
    if spec.kind == "rate":
        text = (
            f"{ratio:.1f}x faster" if ratio >= 2 else f"{_pct(d.delta_pct)} % {'faster' if up else 'slower'}"
        )
    elif spec.kind == "latency":
        text = (
            f"{ratio:.1f}x the {spec.label}"
            if ratio >= 2
            else f"{_pct(d.delta_pct)} % {'higher' if up else 'lower'} {spec.label}"
        )
    else:
        text = (
            f"{ratio:.1f}x longer" if ratio >= 2 else f"{_pct(d.delta_pct)} % {'longer' if up else 'shorter'}"
        )
    return f"{text} on {where}" + (" (1 run)" if d.noise == "unknown" else "")


def verdict(
    cost_delta_pct: float | None,
    workloads: Sequence[WorkloadComparison],
    *,
    cost_partial: bool = False,
    max_items: int = MAX_VERDICT_ITEMS,
) -> str:
    """One line: the cost difference, then the most important workload differences (module doc)."""
    clause = _cost_clause(cost_delta_pct) + (" (cost partly unpriced)" if cost_partial else "")
    judged = sorted(
        (w for w in workloads if w.headline is not None),
        key=lambda w: _importance(w.headline) if w.headline is not None else (3, 0.0),
    )
    if not judged:
        return f"{clause}; no results to compare"
    shown, rest = judged[:max_items], judged[max_items:]
    parts = [clause, *(_difference(w) for w in shown)]
    if rest:
        if all(w.headline is not None and w.headline.noise == "overlap" for w in rest):
            parts.append(f"within noise on {len(rest)} more")
        else:
            parts.append(f"{len(rest)} more not shown")
    # Workload titles can hold commas ("4k random read, IOPS-bound"): then items split on "; "
    return ("; " if any("," in part for part in parts) else ", ").join(parts)


# ------------------------------------------------------------------------------ price-performance


class PricePerformance(_Frozen):
    """Monthly dollars per unit of delivered performance on one workload."""

    workload: str
    measurement: str
    iops: float | None
    mibps: float | None
    usd_per_1000_iops_month: float | None
    usd_per_mibps_month: float | None


def representative_measure(
    workload: str, metric: str, index: Mapping[str, Mapping[MeasureKey, Aggregate]], baseline: str
) -> MeasureKey | None:
    """The measurement a workload metric is compared on across configs: read+write totals for
    rates when recorded, the one most configs share, and among those where the baseline (else
    the average config) did best."""
    spec = METRICS[metric]
    present: dict[MeasureKey, list[float]] = {}
    for aggs in index.values():
        for key, agg in aggs.items():
            summary = agg.metrics.get(metric)
            if key.workload == workload and summary is not None:
                present.setdefault(key, []).append(summary.mean)
    if not present:
        return None
    keys = list(present)
    if spec.kind == "rate" and any(k.direction == "mixed" for k in keys):
        keys = [k for k in keys if k.direction == "mixed"]
    most = max(len(present[k]) for k in keys)
    keys = [k for k in keys if len(present[k]) == most]

    def score(key: MeasureKey) -> float:
        base = index.get(baseline, {}).get(key)
        summary = base.metrics.get(metric) if base is not None else None
        value = summary.mean if summary is not None else math.fsum(present[key]) / len(present[key])
        return value if spec.higher_is_better else -value

    return max(keys, key=score)


def _price_performance(
    workload: str,
    cost: ConfigCost,
    index: Mapping[str, Mapping[MeasureKey, Aggregate]],
    baseline: str,
) -> PricePerformance | None:
    aggs = index.get(cost.config_id, {})
    values: dict[str, float | None] = {}
    measurement = ""
    for metric in ("iops", "bw_mibps"):
        key = representative_measure(workload, metric, index, baseline)
        agg = aggs.get(key) if key is not None else None
        summary = agg.metrics.get(metric) if agg is not None else None
        values[metric] = summary.mean if summary is not None else None
        if key is not None and summary is not None and not measurement:
            measurement = measurement_name(key)
    iops, mibps = values["iops"], values["bw_mibps"]
    if iops is None and mibps is None:
        return None
    monthly = cost.monthly_usd
    return PricePerformance(
        workload=workload,
        measurement=measurement,
        iops=iops,
        mibps=mibps,
        usd_per_1000_iops_month=monthly / (iops / 1000) if iops else None,
        usd_per_mibps_month=monthly / mibps if mibps else None,
    )


# ------------------------------------------------------------------------------ Pareto


class ParetoPoint(_Frozen):
    config_id: str
    monthly_usd: float
    value: float
    on_frontier: bool
    dominated_by: list[str] = Field(
        description="configs at most as expensive and at least as good, one strictly"
    )


class ParetoFrontier(_Frozen):
    workload: str
    metric: str
    label: str
    higher_is_better: bool
    measurement: str
    frontier: list[str] = Field(description="configs not dominated, cheapest first")
    points: list[ParetoPoint]
    missing: list[str] = Field(default_factory=list, description="configs without this measurement")


def pareto_frontier(
    workload: str,
    metric: str,
    points: Mapping[str, tuple[float, float]],
    *,
    measurement: str = "",
    missing: Sequence[str] = (),
) -> ParetoFrontier:
    """Configs not dominated on (monthly cost, metric): ``points`` maps config id -> (usd, value)."""
    spec = METRICS[metric]

    def at_least_as_good(a: float, b: float) -> bool:
        return a >= b if spec.higher_is_better else a <= b

    out: list[ParetoPoint] = []
    for cid, (usd, value) in points.items():
        dominated_by = [
            other
            for other, (o_usd, o_value) in points.items()
            if other != cid
            and o_usd <= usd
            and at_least_as_good(o_value, value)
            and (o_usd < usd or o_value != value)
        ]
        out.append(
            ParetoPoint(
                config_id=cid,
                monthly_usd=usd,
                value=value,
                on_frontier=not dominated_by,
                dominated_by=dominated_by,
            )
        )
    frontier = [p.config_id for p in sorted(out, key=lambda p: p.monthly_usd) if p.on_frontier]
    return ParetoFrontier(
        workload=workload,
        metric=metric,
        label=spec.label,
        higher_is_better=spec.higher_is_better,
        measurement=measurement,
        frontier=frontier,
        points=out,
        missing=list(missing),
    )


def _frontiers(
    workloads: Sequence[str],
    costs: Mapping[str, ConfigCost],
    index: Mapping[str, Mapping[MeasureKey, Aggregate]],
    baseline: str,
) -> list[ParetoFrontier]:
    out: list[ParetoFrontier] = []
    for workload in workloads:
        for metric in METRICS:
            key = representative_measure(workload, metric, index, baseline)
            if key is None:
                continue
            points: dict[str, tuple[float, float]] = {}
            missing: list[str] = []
            for cid, cost in costs.items():
                agg = index.get(cid, {}).get(key)
                summary = agg.metrics.get(metric) if agg is not None else None
                if summary is None:
                    missing.append(cid)
                else:
                    points[cid] = (cost.monthly_usd, summary.mean)
            if len(points) >= 2:
                out.append(
                    pareto_frontier(
                        workload, metric, points, measurement=measurement_name(key), missing=missing
                    )
                )
    return out


# ------------------------------------------------------------------------------ targets


class Target(BaseModel):
    """What a config must deliver on one measurement (a phase and sweep point of a workload), e.g.
    ``Target(p95_latency_below_ms=2, iops_at_least=3000)``: p95 below 2 ms at 3,000 IOPS or more.

    ``basis="ci"`` (the default) judges the edge of the 95 % interval a bet would lose on: the
    lower bound of IOPS and MiB/s, the upper bound of latency and run time (the mean when a
    single repetition gives no interval). ``basis="mean"`` judges repetition means.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    workload: str | None = Field(default=None, description="judge only this workload id (default: any)")
    iops_at_least: float | None = Field(default=None, gt=0)
    mibps_at_least: float | None = Field(default=None, gt=0)
    mean_latency_below_ms: float | None = Field(default=None, gt=0)
    p95_latency_below_ms: float | None = Field(default=None, gt=0)
    p99_latency_below_ms: float | None = Field(default=None, gt=0)
    real_s_below: float | None = Field(default=None, gt=0)
    basis: Literal["ci", "mean"] = "ci"

    @model_validator(mode="after")
    def _something(self) -> Target:
        if all(getattr(self, name) is None for name, _, _, _ in _CONDITIONS):
            raise ValueError(
                "a target needs at least one condition (e.g. p95_latency_below_ms, iops_at_least)"
            )
        return self

    def describe(self) -> str:
        parts: list[str] = []
        for name, metric, _, _ in _CONDITIONS:
            value = getattr(self, name)
            if value is None:
                continue
            spec = METRICS[metric]
            if spec.kind == "latency":
                parts.append(f"{spec.label} below {value:g} ms")
            elif spec.kind == "time":
                parts.append(f"run time below {value:g} s")
            else:
                parts.append(f"{value:,.0f} {spec.unit} or more")
        text = " at ".join(parts) if len(parts) == 2 else ", ".join(parts)
        return text + (f" on {self.workload}" if self.workload else "")


# (field, metric, scale from the record's unit to the target's, format)
_CONDITIONS: tuple[tuple[str, str, float, str], ...] = (
    ("p95_latency_below_ms", "lat_p95_us", 1e-3, "{:.2f} ms"),
    ("p99_latency_below_ms", "lat_p99_us", 1e-3, "{:.2f} ms"),
    ("mean_latency_below_ms", "lat_mean_us", 1e-3, "{:.2f} ms"),
    ("iops_at_least", "iops", 1.0, "{:,.0f} IOPS"),
    ("mibps_at_least", "bw_mibps", 1.0, "{:,.1f} MiB/s"),
    ("real_s_below", "real_s", 1.0, "{:,.1f} s"),
)


class CandidateCheck(_Frozen):
    config_id: str
    monthly_usd: float
    qualifies: bool
    workload: str | None
    measurement: str | None
    values: dict[str, float] = Field(description="the judged value of each condition, in the target's units")
    reason: str


class TargetResult(_Frozen):
    target: Target
    description: str
    met: bool
    config_id: str | None
    monthly_usd: float | None
    workload: str | None
    measurement: str | None
    explanation: str
    candidates: list[CandidateCheck]


def _judged(summary: Summary, higher_is_better: bool, basis: str) -> tuple[float, bool]:
    """The value a target is judged on, and whether it is an interval bound."""
    if basis == "ci" and summary.ci95_low is not None and summary.ci95_high is not None:
        return (summary.ci95_low if higher_is_better else summary.ci95_high), True
    return summary.mean, False


def _check_point(
    target: Target, aggs: Sequence[Aggregate]
) -> tuple[list[str], list[str], dict[str, float], bool]:
    """(failed conditions, met conditions, judged values, any single-run value) at one point."""
    failed: list[str] = []
    met: list[str] = []
    values: dict[str, float] = {}
    single = False
    total = [a for a in aggs if a.direction == "mixed"]
    for name, metric, scale, fmt in _CONDITIONS:
        limit = getattr(target, name)
        if limit is None:
            continue
        spec = METRICS[metric]
        if spec.kind == "rate":
            # Rates are judged on the read+write total when directions were recorded apart.
            pool = total or list(aggs)
            summaries = [a.metrics[metric] for a in pool if metric in a.metrics]
            if len(summaries) > 1:
                failed.append(f"{spec.label} recorded per direction without a total (use with_totals)")
                continue
        else:
            # Latency and run time: the worst direction must meet the limit.
            summaries = [a.metrics[metric] for a in aggs if metric in a.metrics]
        if not summaries:
            failed.append(f"no {spec.label} measured")
            continue
        judged = [_judged(s, spec.higher_is_better, target.basis) for s in summaries]
        worst = min(judged) if spec.higher_is_better else max(judged)
        value = worst[0] * scale
        single = single or not worst[1]
        values[name] = value
        text = fmt.format(value)
        if spec.higher_is_better:
            (met if value >= limit else failed).append(
                f"{text} ({'>=' if value >= limit else '<'} {limit:,g})"
            )
        else:
            (met if value < limit else failed).append(
                f"{spec.label} {text} ({'<' if value < limit else '>='} {limit:g})"
            )
    return failed, met, values, single


def cheapest_meeting(
    target: Target,
    costs: Mapping[str, ConfigCost] | Iterable[ConfigCost],
    records: Iterable[ResultRecord] | None = None,
    *,
    aggregates: Iterable[Aggregate] | None = None,
    names: Mapping[str, str] | None = None,
) -> TargetResult:
    """The cheapest config (monthly) with a measurement meeting every condition of ``target``, or
    why none qualifies (each config's closest measurement and what it missed)."""
    priced = costs_by_id(costs)
    if aggregates is None:
        aggregates = aggregate(with_totals(records or []))
    points: dict[str, dict[tuple[str, str, str, str, int | None], list[Aggregate]]] = {}
    for a in aggregates:
        if target.workload is not None and a.workload != target.workload:
            continue
        if target.workload is None and a.phase == "prewarm":
            continue  # the pre-warm read is not a workload anyone asked to be judged on
        point = (a.workload, a.target_id, a.variant, a.phase, a.group)
        points.setdefault(a.config_id, {}).setdefault(point, []).append(a)
    targets_used: dict[tuple[str, str], set[str]] = {}
    for cid, by_point in points.items():
        for workload, target_id, *_ in by_point:
            targets_used.setdefault((cid, workload), set()).add(target_id)
    labels = names or {}
    basis = "95 % interval bound" if target.basis == "ci" else "mean"
    checks: list[CandidateCheck] = []
    for cid, cost in priced.items():
        best: tuple[tuple[int, int], CandidateCheck] | None = None
        for (workload, target_id, variant, phase, group), aggs in points.get(cid, {}).items():
            failed, met, values, single = _check_point(target, aggs)
            shown_target = target_id if len(targets_used[(cid, workload)]) > 1 else ""
            key = MeasureKey(workload, shown_target, variant, phase, "mixed", group)
            measurement = measurement_name(key, totals=False)
            where = labels.get(workload, workload) + (f" ({measurement})" if measurement else "")
            if failed:
                reason = f"{'; '.join(failed)} on {where}"
            else:
                reason = f"{', '.join(met)} on {where}" + (" (single run)" if single else "")
            check = CandidateCheck(
                config_id=cid,
                monthly_usd=cost.monthly_usd,
                qualifies=not failed,
                workload=workload,
                measurement=measurement,
                values=values,
                reason=reason,
            )
            rank = (len(failed), 0 if not single else 1)
            if best is None or rank < best[0]:
                best = (rank, check)
        if best is None:
            checks.append(
                CandidateCheck(
                    config_id=cid,
                    monthly_usd=cost.monthly_usd,
                    qualifies=False,
                    workload=None,
                    measurement=None,
                    values={},
                    reason="no results" + (f" for {target.workload}" if target.workload else ""),
                )
            )
        else:
            checks.append(best[1])
    description = target.describe()
    winners = sorted((c for c in checks if c.qualifies), key=lambda c: c.monthly_usd)
    if winners:
        win = winners[0]
        cost = priced[win.config_id]
        caveat = "" if cost.complete and not cost.unpriced else " (cost partly unpriced)"
        return TargetResult(
            target=target,
            description=description,
            met=True,
            config_id=win.config_id,
            monthly_usd=win.monthly_usd,
            workload=win.workload,
            measurement=win.measurement,
            explanation=(
                f"{win.config_id} at {fmt_usd(win.monthly_usd)}/month{caveat} meets {description}: "
                f"{win.reason} (judged on the {basis})"
            ),
            candidates=checks,
        )
    why = "; ".join(f"{c.config_id}: {c.reason}" for c in checks) or "no configs"
    return TargetResult(
        target=target,
        description=description,
        met=False,
        config_id=None,
        monthly_usd=None,
        workload=None,
        measurement=None,
        explanation=f"no config meets {description} (judged on the {basis}): {why}",
        candidates=checks,
    )


# ------------------------------------------------------------------------------ the comparison


class ConfigComparison(_Frozen):
    config_id: str
    is_baseline: bool
    monthly_usd: float
    delta_monthly_pct: float | None
    price_source: str
    price_date: str | None
    cost_partial: bool = Field(description="unpriced parts or missing prices on this config or the baseline")
    workloads: list[WorkloadComparison]
    price_performance: list[PricePerformance]
    verdict: str


class Comparison(_Frozen):
    baseline: str
    configs: list[ConfigComparison]
    frontiers: list[ParetoFrontier]
    notes: list[str] = Field(default_factory=list)
    aggregates: list[Aggregate] = Field(exclude=True, repr=False)
    costs: dict[str, ConfigCost] = Field(exclude=True, repr=False)
    names: dict[str, str] = Field(exclude=True, repr=False)

    def config(self, config_id: str) -> ConfigComparison:
        for c in self.configs:
            if c.config_id == config_id:
                return c
        raise KeyError(config_id)

    def frontier(self, workload: str, metric: str) -> ParetoFrontier:
        for f in self.frontiers:
            if f.workload == workload and f.metric == metric:
                return f
        raise KeyError((workload, metric))

    def cheapest_meeting(self, target: Target) -> TargetResult:
        return cheapest_meeting(target, self.costs, aggregates=self.aggregates, names=self.names)


def compare(
    request: BenchmarkRequest | None,
    costs: Mapping[str, ConfigCost] | Iterable[ConfigCost],
    records: Iterable[ResultRecord],
    *,
    baseline: str | None = None,
    names: Mapping[str, str] | None = None,
) -> Comparison:
    """Every config against the baseline (the request's, else ``baseline``, else the first priced).

    Workloads are the request's (in its order); without a request, those found in the records.
    """
    priced = costs_by_id(costs)
    if not priced:
        raise ValueError("nothing to compare: no priced configs")
    base_id = baseline or (request.baseline_id if request is not None else next(iter(priced)))
    if base_id not in priced:
        raise KeyError(f"baseline {base_id!r} has no cost; priced: {', '.join(priced)}")
    aggs = aggregate(with_totals(records))
    index = index_aggregates(aggs)
    label = {**workload_names(request), **(names or {})}
    intents = _intents(request)
    if request is not None:
        workloads = [w.id for w in request.resolved_workloads()]
    else:
        workloads = list(dict.fromkeys(a.workload for a in aggs if a.phase != "prewarm"))
    notes: list[str] = []
    base_cost = priced[base_id]
    base_index = index.get(base_id, {})
    if not base_index:
        notes.append(f"baseline {base_id} has no results: only costs are compared")
    rows: list[ConfigComparison] = []
    for cid, cost in priced.items():
        partial = bool(cost.unpriced or cost.missing_prices or base_cost.unpriced or base_cost.missing_prices)
        delta = cost_delta_pct(cost, base_cost)
        compared: list[WorkloadComparison] = []
        if cid != base_id:
            for w in workloads:
                row = _compare_workload(
                    w, label.get(w, w), intents.get(w, "mixed"), base_index, index.get(cid, {})
                )
                if row is not None:
                    compared.append(row)
        perf = [p for w in workloads if (p := _price_performance(w, cost, index, base_id)) is not None]
        rows.append(
            ConfigComparison(
                config_id=cid,
                is_baseline=cid == base_id,
                monthly_usd=cost.monthly_usd,
                delta_monthly_pct=delta,
                price_source=cost.price_source,
                price_date=cost.price_date,
                cost_partial=partial,
                workloads=compared,
                price_performance=perf,
                verdict="baseline" if cid == base_id else verdict(delta, compared, cost_partial=partial),
            )
        )
    return Comparison(
        baseline=base_id,
        configs=rows,
        frontiers=_frontiers(workloads, priced, index, base_id),
        notes=notes,
        aggregates=aggs,
        costs=priced,
        names=label,
    )

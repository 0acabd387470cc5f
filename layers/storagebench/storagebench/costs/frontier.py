"""Price-performance (monthly cost per 1,000 IOPS and per MiB/s) and the Pareto frontier of cost against
a workload metric, at the measurement where the baseline did best."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

from pydantic import Field

from storagebench.analysis.stats import Aggregate
from storagebench.costs.measures import METRICS, Frozen, MeasureKey, measurement_name
from storagebench.costs.monthly import ConfigCost

# ------------------------------------------------------------------------------ price-performance


class PricePerformance(Frozen):
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


def price_performance(
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


class ParetoPoint(Frozen):
    config_id: str
    monthly_usd: float
    value: float
    on_frontier: bool
    dominated_by: list[str] = Field(
        description="configs at most as expensive and at least as good, one strictly"
    )


class ParetoFrontier(Frozen):
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


def frontiers(
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

"""The run-wide parts of a report, built from a :class:`~storagebench.report.build_run.ParsedRun`:
the header, every measurement with its delta, the bar and cost-performance charts of each workload,
the regression findings and the recommendation.
"""

from __future__ import annotations

from collections.abc import Mapping

from storagebench.analysis.grades import grade
from storagebench.costs.monthly import combine_sources, oldest_date
from storagebench.costs.recommend import ConfigPrice, Recommendation, recommend
from storagebench.costs.recommend_run import stored_prices
from storagebench.report.build_run import ParsedRun
from storagebench.report.build_values import (
    value_of,
)
from storagebench.report.findings import (
    regression_text,
)
from storagebench.report.inputs import (
    seconds_between,
)
from storagebench.report.model import (
    METRIC_INFO,
    Bar,
    BarChart,
    Finding,
    Header,
    MeasurementRow,
    Scatter,
    ScatterPoint,
    WorkloadInfo,
)
from storagebench.request.repetitions import Repetitions, most_repetitions
from storagebench.request.requirements import RequirementError

__all__ = [
    "bar_chart",
    "header",
    "measurements",
    "recommendation",
    "regression_findings",
    "repetitions_text",
    "scatter",
]


def measurements(parsed: ParsedRun) -> list[MeasurementRow]:
    """Every aggregated measurement, with its delta against the baseline's same measurement."""
    rows: list[MeasurementRow] = []
    base_index = parsed.index.get(parsed.baseline, {})
    for cid in parsed.config_ids:
        for key, agg in parsed.index.get(cid, {}).items():
            base = base_index.get(key) if cid != parsed.baseline else None
            deltas: dict[str, float | None] = {}
            for metric, summary in agg.metrics.items():
                base_summary = base.metrics.get(metric) if base is not None else None
                deltas[metric] = None
                if base_summary is not None and base_summary.mean != 0:
                    deltas[metric] = (summary.mean - base_summary.mean) / abs(base_summary.mean) * 100.0
            p95 = agg.metrics.get("lat_p95_us")
            rows.append(
                MeasurementRow(
                    config_id=cid,
                    storage_option=parsed.options.get((cid, agg.target_id)) or parsed.storage[cid][0],
                    workload=agg.workload,
                    target_id=agg.target_id,
                    variant=agg.variant,
                    phase=agg.phase,
                    direction=agg.direction,
                    group=agg.group,
                    metrics={m: v for m, s in agg.metrics.items() if (v := value_of(s)) is not None},
                    delta_pct=deltas,
                    grade=grade(p95.mean).letter if p95 is not None else None,
                    labels=sorted({label for r in parsed.members.get(agg.key(), []) for label in r.labels}),
                    monthly_usd=parsed.monthly.get(cid),
                    warnings=list(agg.warnings),
                )
            )
    return rows


def bar_chart(parsed: ParsedRun, info: WorkloadInfo) -> BarChart | None:
    if info.id not in parsed.headline or info.metric is None:
        return None
    metric, key = parsed.headline[info.id]
    bars: list[Bar] = []
    missing: list[str] = []
    for cid in parsed.config_ids:
        agg = parsed.index.get(cid, {}).get(key)
        value = value_of(agg.metrics.get(metric)) if agg is not None else None
        if value is None:
            missing.append(cid)
        else:
            bars.append(Bar(config_id=cid, value=value, is_baseline=cid == parsed.baseline))
    return BarChart(
        workload=info.id,
        name=info.name,
        metric=info.metric,
        measurement=info.measurement,
        bars=bars,
        missing=missing,
    )


def scatter(parsed: ParsedRun, info: WorkloadInfo) -> Scatter | None:
    """The comparison's Pareto frontier of the workload's headline metric."""
    if info.id not in parsed.headline:
        return None
    metric = parsed.headline[info.id][0]
    frontier = next(
        (
            f
            for f in (parsed.comparison or {}).get("frontiers") or []
            if isinstance(f, Mapping) and f.get("workload") == info.id and f.get("metric") == metric
        ),
        None,
    )
    if frontier is None:
        return None
    points = [
        ScatterPoint(
            config_id=str(p["config_id"]),
            monthly_usd=float(p["monthly_usd"]),
            value=float(p["value"]),
            on_frontier=bool(p.get("on_frontier")),
            is_baseline=str(p["config_id"]) == parsed.baseline,
        )
        for p in frontier.get("points") or []
        if isinstance(p, Mapping)
        and isinstance(p.get("monthly_usd"), int | float)
        and isinstance(p.get("value"), int | float)
    ]
    return Scatter(
        workload=info.id,
        name=info.name,
        metric=METRIC_INFO[metric],
        measurement=parsed.where(parsed.headline[info.id][1], ""),
        points=points,
        frontier=[str(c) for c in frontier.get("frontier") or []],
        missing=[str(c) for c in frontier.get("missing") or []],
    )


def regression_findings(parsed: ParsedRun) -> list[Finding]:
    found: list[Finding] = []
    for row in parsed.regression_rows:
        where = ", ".join(row.config_ids) or row.storage_option
        name = parsed.workload_name.get(row.workload, row.workload)
        found.append(
            Finding(
                severity="warning" if row.verdict == "regression" else "info",
                category="regression",
                config_id=row.config_ids[0] if len(row.config_ids) == 1 else None,
                workload=row.workload,
                text=f"{where} {name} ({row.measurement}): {regression_text(row)}",
            )
        )
    return found


def header(parsed: ParsedRun) -> Header:
    run, request = parsed.run, parsed.request
    sources = [str(c["price_source"]) for c in parsed.compared.values() if c.get("price_source")]
    dates = [str(c["price_date"]) if c.get("price_date") else None for c in parsed.compared.values()]
    cost_source = parsed.run_cost.get("price_source") if parsed.run_cost is not None else None
    return Header(
        run_id=run.run_id or "unknown run",
        suite=run.suite or (request.name if request is not None else None),
        name=request.name if request is not None else None,
        description=request.description if request is not None else None,
        status=run.status,
        started_at=run.started_at,
        ended_at=run.ended_at,
        duration_s=seconds_between(run.started_at, run.ended_at) if run.ended_at else None,
        region=request.region if request is not None else None,
        baseline=parsed.baseline or None,
        price_source=combine_sources(sources) if sources else None,
        price_date=oldest_date(dates),
        repetitions=most_repetitions(request.repetitions) if request is not None else None,
        repetitions_shown=repetitions_text(request.repetitions) if request is not None else None,
        records=len(parsed.records),
        run_cost_usd=parsed.run_total,
        run_cost_source=str(cost_source) if cost_source else None,
    )


def recommendation(parsed: ParsedRun) -> Recommendation | None:
    """The request's requirements judged on this run, at the comparison's monthly costs."""
    if parsed.request is None or not parsed.request.requirements:
        return None
    prices = stored_prices(list(parsed.compared.values()))
    try:
        return recommend(
            parsed.request.requirements,
            parsed.records,
            [prices.get(cid, ConfigPrice(cid, None)) for cid in parsed.config_ids],
            workloads=[w.id for w in parsed.request.resolved_workloads()],
            run_id=parsed.run.run_id,
        )
    except RequirementError as exc:  # the request validated, so only a request of older code
        parsed.notes.append(f"no recommendation: {exc}")
        return None


def repetitions_text(repetitions: Repetitions) -> str:
    """A request's repetitions as the header reads them: ``3``, or the adaptive policy."""
    if isinstance(repetitions, int):
        return str(repetitions)
    until = f"until the 95 % interval's half-width is under {repetitions.ci_pct:g} % of the mean"
    return f"{repetitions.min}-{repetitions.max}, {until}"

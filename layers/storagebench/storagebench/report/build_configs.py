"""One config's part of a report, built from a :class:`~storagebench.report.build_run.ParsedRun`:
its row (status, storage, costs and a cell per workload), the latency rows, histograms and time
series of its headline measurements, and the findings about it.
"""

from __future__ import annotations

from collections.abc import Mapping

from storagebench.costs.deltas import metric_delta
from storagebench.report.build_run import ParsedRun
from storagebench.report.build_series import series_lines
from storagebench.report.build_values import (
    bimodal_text,
    grade_info,
    latency_keys,
    merge_histograms,
    percentile_value,
    value_of,
    worst_p95,
)
from storagebench.report.findings import (
    cell_flags,
    label_findings,
)
from storagebench.report.inputs import (
    PROBLEMS_SHOWN,
    ConfigState,
    mapping,
)
from storagebench.report.model import (
    Cell,
    ConfigRow,
    Delta,
    Finding,
    Histogram,
    LatencyRow,
    SeriesChart,
    Severity,
)

__all__ = ["cell", "config_findings", "config_row", "histogram", "latency", "series_charts"]


def cell(parsed: ParsedRun, cid: str, wid: str) -> Cell:
    if wid not in parsed.headline:
        return Cell(workload=wid, value=None, delta=None, grade=None)
    metric, key = parsed.headline[wid]
    aggs = parsed.index.get(cid, {})
    agg = aggs.get(key)
    summary = agg.metrics.get(metric) if agg is not None else None
    delta: Delta | None = None
    base = parsed.index.get(parsed.baseline, {}).get(key)
    base_summary = base.metrics.get(metric) if base is not None else None
    if cid != parsed.baseline and summary is not None and base_summary is not None:
        found = metric_delta(wid, "", metric, base_summary, summary)  # as the comparison judges it
        delta = Delta(pct=found.delta_pct, noise=found.noise, better=found.better)
    worst = worst_p95(aggs, key)
    graded = None
    if worst is not None:
        graded = grade_info(aggs[worst].metrics["lat_p95_us"].mean, parsed.where(worst))
    return Cell(
        workload=wid,
        value=value_of(summary),
        delta=delta,
        grade=graded,
        flags=cell_flags(parsed.labels.get((cid, wid), {})),
        regressions=parsed.regressions_of.get((cid, wid), []),
    )


def latency(parsed: ParsedRun, cid: str, wid: str) -> list[LatencyRow]:
    """Percentiles at the headline's point, one row per direction."""
    if wid not in parsed.headline:
        return []
    aggs = parsed.index.get(cid, {})
    rows: list[LatencyRow] = []
    for key in sorted(latency_keys(aggs, parsed.headline[wid][1]), key=lambda k: k.direction):
        agg = aggs[key]
        rows.append(
            LatencyRow(
                config_id=cid,
                workload=wid,
                measurement=parsed.where(key),
                n=agg.repetitions,
                mean_us=value_of(agg.metrics.get("lat_mean_us")),
                p50_us=value_of(agg.metrics.get("lat_p50_us")),
                p90_us=percentile_value(parsed.members.get(agg.key(), []), "p90_us"),
                p95_us=value_of(agg.metrics.get("lat_p95_us")),
                p99_us=value_of(agg.metrics.get("lat_p99_us")),
                p999_us=value_of(agg.metrics.get("lat_p999_us")),
                grade=grade_info(agg.metrics["lat_p95_us"].mean, parsed.where(key)),
            )
        )
    return rows


def histogram(parsed: ParsedRun, cid: str, wid: str) -> Histogram | None:
    """The graded measurement's histogram, repetitions summed."""
    if wid not in parsed.headline:
        return None
    aggs = parsed.index.get(cid, {})
    worst = worst_p95(aggs, parsed.headline[wid][1])
    if worst is None:
        return None
    agg = aggs[worst]
    buckets = merge_histograms(parsed.members.get(agg.key(), []))
    if not buckets:
        return None

    def mean(name: str) -> float | None:
        summary = agg.metrics.get(name)
        return summary.mean if summary is not None else None

    return Histogram(
        config_id=cid,
        workload=wid,
        measurement=parsed.where(worst),
        buckets=buckets,
        total=sum(count for _, count in buckets),
        p50_us=mean("lat_p50_us"),
        p95_us=mean("lat_p95_us"),
        p99_us=mean("lat_p99_us"),
        bimodal=bimodal_text(buckets),
    )


def series_charts(parsed: ParsedRun, cid: str) -> list[SeriesChart]:
    document = parsed.series.get(cid)
    if not isinstance(document, Mapping):
        return []
    charts: list[SeriesChart] = []
    for info in parsed.workloads:
        key = parsed.headline[info.id][1] if info.id in parsed.headline else None
        lines, omitted, measurement = series_lines(document, info.id, key, parsed.where)
        if lines:
            charts.append(
                SeriesChart(
                    config_id=cid, workload=info.id, measurement=measurement, lines=lines, omitted=omitted
                )
            )
    return charts


def config_row(parsed: ParsedRun, cid: str) -> ConfigRow:
    config = parsed.request_configs.get(cid)
    state = parsed.states.get(cid, ConfigState())
    compared = parsed.compared.get(cid, {})
    storage, detail = parsed.storage[cid]
    records = (
        state.records if state.records is not None else sum(1 for r in parsed.records if r.config_id == cid)
    )
    delta = compared.get("delta_monthly_pct")
    storage_usd, storage_delta = compared.get("storage_only_usd"), compared.get("delta_storage_pct")
    return ConfigRow(
        config_id=cid,
        is_baseline=cid == parsed.baseline,
        status=state.status or ("succeeded" if records else "no results"),
        storage_option=storage,
        storage_detail=detail,
        instance_type=config.instance_type if config is not None else None,
        monthly_usd=parsed.monthly[cid],
        delta_monthly_pct=float(delta) if isinstance(delta, int | float) else None,
        storage_only_usd=float(storage_usd) if isinstance(storage_usd, int | float) else None,
        delta_storage_pct=float(storage_delta) if isinstance(storage_delta, int | float) else None,
        cost_partial=bool(compared.get("cost_partial")),
        run_cost_usd=parsed.run_costs.get(cid),
        verdict=str(compared.get("verdict") or ("baseline" if cid == parsed.baseline else "-")),
        records=records,
        cells=[cell(parsed, cid, w.id) for w in parsed.workloads],
        errors=state.errors,
        environment=sorted(parsed.environment.get(cid, set())),
    )


def config_findings(parsed: ParsedRun, row: ConfigRow) -> list[Finding]:
    cid = row.config_id
    state = parsed.states.get(cid, ConfigState())
    found: list[Finding] = []

    def add(severity: Severity, category: str, text: str, workload: str | None = None) -> None:
        found.append(
            Finding(severity=severity, category=category, config_id=cid, workload=workload, text=text)
        )

    if row.status == "failed":
        add("error", "config", f"{cid} failed: {'; '.join(state.errors) or 'no error was recorded'}")
    elif state.errors:
        add("warning", "config", f"{cid} ({row.status}): {'; '.join(state.errors)}")
    elif not parsed.index.get(cid):
        add("warning", "config", f"{cid}: no results stored (status {row.status})")
    if state.leftovers:
        add("error", "config", f"{cid} left resources behind: {', '.join(state.leftovers)}")
    for interruption in state.interruptions:  # what was measured is kept; the relaunch ran the rest
        add("info", "spot", f"{cid}: {interruption}")
    if state.problems:
        shown = state.problems[:PROBLEMS_SHOWN]
        more = len(state.problems) - len(shown)
        add(
            "warning",
            "collect",
            f"{cid}: collect found {len(state.problems)} problem(s): {'; '.join(shown)}"
            + (f"; {more} more" if more else ""),
        )
    for info in parsed.workloads:
        labels = parsed.labels.get((cid, info.id), {})
        found.extend(label_findings(cid, info.id, info.name, labels, parsed.runs.get((cid, info.id), 0)))
    if row.cost_partial:
        add("warning", "cost", f"{cid}: the monthly cost is partly unpriced (here or on the baseline)")
    cost = parsed.computed_costs.get(cid)
    if cost is not None:
        for text in [*cost.unpriced, *(f"no price for {m}" for m in cost.missing_prices)]:
            add("info", "cost", f"{cid}: {text}")
    for key, agg in parsed.index.get(cid, {}).items():
        for warning in agg.warnings:
            add(
                "warning",
                "data",
                f"{cid} {agg.workload} ({parsed.where(key)}): {warning}",
                agg.workload,
            )
    problems = [str(p) for p in mapping(parsed.series.get(cid)).get("problems") or []]
    if problems:
        add(
            "info",
            "data",
            f"{cid}: {len(problems)} time series problem(s): {'; '.join(problems[:PROBLEMS_SHOWN])}",
        )
    return found

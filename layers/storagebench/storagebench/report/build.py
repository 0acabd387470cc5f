"""``build_report``: one run's stored results (and its comparison, run cost, regressions and time
series) into a ``Report`` the renderers lay out without computing anything.

Numbers come from the same functions the rest of the system uses, so the report cannot disagree
with them: repetition statistics from ``analysis.stats.aggregate`` over ``costs.compare.with_totals``
(exactly what ``costs.compare.compare`` aggregates), deltas and their noise verdicts from
``costs.compare``, grades from ``analysis.grades``, knees from the stored series, bimodality from
``analysis.bimodal``.

Each workload is shown on one *headline* measurement, the same for every config: its intent's
metric (IOPS for IOPS and mixed workloads, MiB/s for throughput, p95 latency for latency probes,
run time for timed commands; the next one measured when that one was not) on the measurement the
comparison's price-performance and Pareto frontiers use (read+write totals for rates when recorded,
the one most configs share, and among those where the baseline did best). The grade is the p95 of
that measurement's worst direction. Every other measurement is in ``measurements`` (the CSV).

What the report shows of one measurement is ``report.build_values``; the time-series lines
``report.build_series``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from storagebench.analysis.grades import grade
from storagebench.analysis.stats import aggregate
from storagebench.costs.deltas import metric_delta
from storagebench.costs.measures import TOTAL_LABEL, MeasureKey, index_aggregates, with_totals, workload_names
from storagebench.costs.monthly import combine_sources, oldest_date
from storagebench.costs.recommend import ConfigPrice, Recommendation, recommend
from storagebench.costs.recommend_run import stored_prices
from storagebench.report.build_series import series_lines
from storagebench.report.build_values import (
    MeasureIndex,
    bimodal_text,
    grade_info,
    headline_of,
    latency_keys,
    measurement_text,
    merge_histograms,
    percentile_value,
    value_of,
    worst_p95,
)
from storagebench.report.findings import (
    FINDING_PREFIXES,
    cell_flags,
    label_findings,
    read_regressions,
    regression_text,
)
from storagebench.report.inputs import (
    PROBLEMS_SHOWN,
    ConfigState,
    mapping,
    read_comparison,
    read_config_states,
    read_request,
    run_cost_by_config,
    seconds_between,
    storage_text,
)
from storagebench.report.load_curves import build_curves
from storagebench.report.model import (
    METRIC_INFO,
    Bar,
    BarChart,
    Cell,
    ConfigRow,
    Delta,
    Finding,
    Header,
    Histogram,
    LatencyRow,
    MeasurementRow,
    Report,
    Scatter,
    ScatterPoint,
    SeriesChart,
    Severity,
    WorkloadInfo,
)
from storagebench.report.node_loss_notes import node_loss_notes
from storagebench.report.prewarm_notes import prewarm_notes
from storagebench.report.repetitions import in_config_order, repetition_findings
from storagebench.report.sla_searches import build_sla_limits
from storagebench.report.surfaces import build_surfaces
from storagebench.report.trends import RunValues, build_trends, history_runs, run_environment
from storagebench.request.model import BenchmarkRequest
from storagebench.request.repetitions import Repetitions, most_repetitions
from storagebench.request.requirements import RequirementError
from storagebench.results.records import ResultRecord
from storagebench.store.models import decode_run
from storagebench.store.repetitions import config_repetitions
from storagebench.workloads import get_profile

__all__ = ["METRIC_INFO", "build_report"]


RecordKey = tuple[str, str, str, str, str, str, int | None]


# ----------------------------------------------------------------------------- values


# ----------------------------------------------------------------------------- the report


def _label_counts(
    records: Iterable[ResultRecord],
) -> tuple[dict[tuple[str, str], dict[str, int]], dict[str, set[str]], dict[tuple[str, str], int]]:
    """Finding labels per (config, workload) counted in repetitions (whatever the directions or
    job groups that carry them), environment labels per config, and repetitions per pair."""
    label_reps: dict[tuple[str, str], dict[str, set[int]]] = {}
    environment: dict[str, set[str]] = {}
    runs: dict[tuple[str, str], set[int]] = {}
    for record in records:
        pair = (record.config_id, record.workload)
        runs.setdefault(pair, set()).add(record.repetition)
        for label in record.labels:
            if label.startswith(FINDING_PREFIXES):
                label_reps.setdefault(pair, {}).setdefault(label, set()).add(record.repetition)
            elif label != TOTAL_LABEL:
                environment.setdefault(record.config_id, set()).add(label)
    counts = {pair: {label: len(reps) for label, reps in found.items()} for pair, found in label_reps.items()}
    return counts, environment, {pair: len(reps) for pair, reps in runs.items()}


class _Run:
    """The run's inputs, parsed and aggregated once; each section of the report is built from it."""

    def __init__(
        self,
        stored: Mapping[str, Any],
        request: BenchmarkRequest | None,
        comparison: Mapping[str, Any] | None,
        run_cost: Mapping[str, Any] | None,
        regressions: Sequence[Mapping[str, Any]],
        series: Mapping[str, Mapping[str, Any]],
        history: Mapping[str, Any] | None = None,
    ) -> None:
        self.notes: list[str] = []
        self.history = history
        self.findings: list[Finding] = []
        document = decode_run(stored)
        self.notes += document.notes
        self.run = document.run
        self.records, self.options = document.records, document.options
        self.request = read_request(request, self.run, self.notes)
        self.states = read_config_states(self.run, document.configs)
        self.stops, unread = config_repetitions(document.configs)  # adaptive series, steady state
        self.notes += unread
        self.comparison, self.computed_costs = read_comparison(
            comparison, self.request, self.records, self.notes
        )
        self.compared: dict[str, Mapping[str, Any]] = {
            str(c.get("config_id")): c
            for c in (self.comparison or {}).get("configs") or []
            if isinstance(c, Mapping)
        }
        self.run_cost = run_cost
        self.run_costs, self.run_total = run_cost_by_config(run_cost)
        self.series = series
        self.config_ids = self._config_ids()
        self.baseline = str(
            (self.comparison or {}).get("baseline")
            or (self.request.baseline_id if self.request is not None else None)
            or (self.config_ids[0] if self.config_ids else "")
        )
        self.request_configs = {c.id: c for c in self.request.configs} if self.request is not None else {}

        totals = with_totals(self.records)
        self.index: MeasureIndex = index_aggregates(aggregate(totals))
        self.members: dict[RecordKey, list[ResultRecord]] = {}
        for record in totals:
            self.members.setdefault(record.key(), []).append(record)
        self.groups: dict[str, set[int | None]] = {}
        for by_key in self.index.values():
            for key in by_key:
                self.groups.setdefault(key.workload, set()).add(key.group)
        self.labels, self.environment, self.runs = _label_counts(self.records)
        self.workloads, self.headline = self._workloads()
        self.workload_name = {w.id: w.name for w in self.workloads}
        self.regression_rows, self.regression_counts = read_regressions(regressions, self.groups)
        self.regressions_of: dict[tuple[str, str], list[str]] = {}
        for row in self.regression_rows:
            for cid in row.config_ids:
                self.regressions_of.setdefault((cid, row.workload), []).append(regression_text(row))
        self.current = RunValues(
            run_id=self.run.run_id or "unknown run",
            started_at=self.run.started_at or "",
            index=self.index,
            environment=run_environment(
                document, {cid: mapping(doc).get("environment") for cid, doc in series.items()}
            ),
        )
        self.storage: dict[str, tuple[str, str]] = {
            cid: storage_text(self.request_configs.get(cid), cid, self.options) for cid in self.config_ids
        }
        self.monthly: dict[str, float | None] = {}
        for cid in self.config_ids:
            cost = self.compared.get(cid, {}).get("monthly_usd")
            self.monthly[cid] = float(cost) if isinstance(cost, int | float) else None

    # ------------------------------------------------------------------ identities

    def where(self, key: MeasureKey, empty: str = "the only measurement") -> str:
        return measurement_text(key, self.groups, empty)

    def _config_ids(self) -> list[str]:
        """Configs in the request's order, then any others the store or the results name."""
        found: list[str] = []
        candidates = [
            *(c.id for c in (self.request.configs if self.request is not None else [])),
            *self.run.configs,
            *self.states,
            *self.compared,
            *(r.config_id for r in self.records),
        ]
        for cid in candidates:
            if isinstance(cid, str) and cid not in found:
                found.append(cid)
        return found

    def _workloads(self) -> tuple[list[WorkloadInfo], dict[str, tuple[str, MeasureKey]]]:
        names = workload_names(self.request)
        if self.request is not None:
            ids = [(w.id, w.profile) for w in self.request.resolved_workloads()]
        else:
            seen: dict[str, str] = {}
            for record in self.records:
                if record.phase != "prewarm":
                    seen.setdefault(record.workload, record.profile)
            ids = list(seen.items())
        infos: list[WorkloadInfo] = []
        headline: dict[str, tuple[str, MeasureKey]] = {}
        for wid, profile in ids:
            try:
                intent = get_profile(profile).intent
            except KeyError:
                intent = "mixed"
            metric, key = headline_of(wid, intent, self.index, self.baseline)
            if metric is not None and key is not None:
                headline[wid] = (metric, key)
            infos.append(
                WorkloadInfo(
                    id=wid,
                    name=names.get(wid, wid),
                    intent=intent,
                    metric=METRIC_INFO[metric] if metric is not None else None,
                    measurement=self.where(key, "") if key is not None else "",
                )
            )
        return infos, headline

    # ------------------------------------------------------------------ one config

    def cell(self, cid: str, wid: str) -> Cell:
        if wid not in self.headline:
            return Cell(workload=wid, value=None, delta=None, grade=None)
        metric, key = self.headline[wid]
        aggs = self.index.get(cid, {})
        agg = aggs.get(key)
        summary = agg.metrics.get(metric) if agg is not None else None
        delta: Delta | None = None
        base = self.index.get(self.baseline, {}).get(key)
        base_summary = base.metrics.get(metric) if base is not None else None
        if cid != self.baseline and summary is not None and base_summary is not None:
            found = metric_delta(wid, "", metric, base_summary, summary)  # as the comparison judges it
            delta = Delta(pct=found.delta_pct, noise=found.noise, better=found.better)
        worst = worst_p95(aggs, key)
        graded = None
        if worst is not None:
            graded = grade_info(aggs[worst].metrics["lat_p95_us"].mean, self.where(worst))
        return Cell(
            workload=wid,
            value=value_of(summary),
            delta=delta,
            grade=graded,
            flags=cell_flags(self.labels.get((cid, wid), {})),
            regressions=self.regressions_of.get((cid, wid), []),
        )

    def latency(self, cid: str, wid: str) -> list[LatencyRow]:
        """Percentiles at the headline's point, one row per direction."""
        if wid not in self.headline:
            return []
        aggs = self.index.get(cid, {})
        rows: list[LatencyRow] = []
        for key in sorted(latency_keys(aggs, self.headline[wid][1]), key=lambda k: k.direction):
            agg = aggs[key]
            rows.append(
                LatencyRow(
                    config_id=cid,
                    workload=wid,
                    measurement=self.where(key),
                    n=agg.repetitions,
                    mean_us=value_of(agg.metrics.get("lat_mean_us")),
                    p50_us=value_of(agg.metrics.get("lat_p50_us")),
                    p90_us=percentile_value(self.members.get(agg.key(), []), "p90_us"),
                    p95_us=value_of(agg.metrics.get("lat_p95_us")),
                    p99_us=value_of(agg.metrics.get("lat_p99_us")),
                    p999_us=value_of(agg.metrics.get("lat_p999_us")),
                    grade=grade_info(agg.metrics["lat_p95_us"].mean, self.where(key)),
                )
            )
        return rows

    def histogram(self, cid: str, wid: str) -> Histogram | None:
        """The graded measurement's histogram, repetitions summed."""
        if wid not in self.headline:
            return None
        aggs = self.index.get(cid, {})
        worst = worst_p95(aggs, self.headline[wid][1])
        if worst is None:
            return None
        agg = aggs[worst]
        buckets = merge_histograms(self.members.get(agg.key(), []))
        if not buckets:
            return None

        def mean(name: str) -> float | None:
            summary = agg.metrics.get(name)
            return summary.mean if summary is not None else None

        return Histogram(
            config_id=cid,
            workload=wid,
            measurement=self.where(worst),
            buckets=buckets,
            total=sum(count for _, count in buckets),
            p50_us=mean("lat_p50_us"),
            p95_us=mean("lat_p95_us"),
            p99_us=mean("lat_p99_us"),
            bimodal=bimodal_text(buckets),
        )

    def series_charts(self, cid: str) -> list[SeriesChart]:
        document = self.series.get(cid)
        if not isinstance(document, Mapping):
            return []
        charts: list[SeriesChart] = []
        for info in self.workloads:
            key = self.headline[info.id][1] if info.id in self.headline else None
            lines, omitted, measurement = series_lines(document, info.id, key, self.where)
            if lines:
                charts.append(
                    SeriesChart(
                        config_id=cid, workload=info.id, measurement=measurement, lines=lines, omitted=omitted
                    )
                )
        return charts

    def config_row(self, cid: str) -> ConfigRow:
        config = self.request_configs.get(cid)
        state = self.states.get(cid, ConfigState())
        compared = self.compared.get(cid, {})
        storage, detail = self.storage[cid]
        records = (
            state.records if state.records is not None else sum(1 for r in self.records if r.config_id == cid)
        )
        delta = compared.get("delta_monthly_pct")
        storage_usd, storage_delta = compared.get("storage_only_usd"), compared.get("delta_storage_pct")
        return ConfigRow(
            config_id=cid,
            is_baseline=cid == self.baseline,
            status=state.status or ("succeeded" if records else "no results"),
            storage_option=storage,
            storage_detail=detail,
            instance_type=config.instance_type if config is not None else None,
            monthly_usd=self.monthly[cid],
            delta_monthly_pct=float(delta) if isinstance(delta, int | float) else None,
            storage_only_usd=float(storage_usd) if isinstance(storage_usd, int | float) else None,
            delta_storage_pct=float(storage_delta) if isinstance(storage_delta, int | float) else None,
            cost_partial=bool(compared.get("cost_partial")),
            run_cost_usd=self.run_costs.get(cid),
            verdict=str(compared.get("verdict") or ("baseline" if cid == self.baseline else "-")),
            records=records,
            cells=[self.cell(cid, w.id) for w in self.workloads],
            errors=state.errors,
            environment=sorted(self.environment.get(cid, set())),
        )

    def config_findings(self, row: ConfigRow) -> list[Finding]:
        cid = row.config_id
        state = self.states.get(cid, ConfigState())
        found: list[Finding] = []

        def add(severity: Severity, category: str, text: str, workload: str | None = None) -> None:
            found.append(
                Finding(severity=severity, category=category, config_id=cid, workload=workload, text=text)
            )

        if row.status == "failed":
            add("error", "config", f"{cid} failed: {'; '.join(state.errors) or 'no error was recorded'}")
        elif state.errors:
            add("warning", "config", f"{cid} ({row.status}): {'; '.join(state.errors)}")
        elif not self.index.get(cid):
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
        for info in self.workloads:
            labels = self.labels.get((cid, info.id), {})
            found.extend(label_findings(cid, info.id, info.name, labels, self.runs.get((cid, info.id), 0)))
        if row.cost_partial:
            add("warning", "cost", f"{cid}: the monthly cost is partly unpriced (here or on the baseline)")
        cost = self.computed_costs.get(cid)
        if cost is not None:
            for text in [*cost.unpriced, *(f"no price for {m}" for m in cost.missing_prices)]:
                add("info", "cost", f"{cid}: {text}")
        for key, agg in self.index.get(cid, {}).items():
            for warning in agg.warnings:
                add(
                    "warning",
                    "data",
                    f"{cid} {agg.workload} ({self.where(key)}): {warning}",
                    agg.workload,
                )
        problems = [str(p) for p in mapping(self.series.get(cid)).get("problems") or []]
        if problems:
            add(
                "info",
                "data",
                f"{cid}: {len(problems)} time series problem(s): {'; '.join(problems[:PROBLEMS_SHOWN])}",
            )
        return found

    # ------------------------------------------------------------------ run-wide sections

    def measurements(self) -> list[MeasurementRow]:
        """Every aggregated measurement, with its delta against the baseline's same measurement."""
        rows: list[MeasurementRow] = []
        base_index = self.index.get(self.baseline, {})
        for cid in self.config_ids:
            for key, agg in self.index.get(cid, {}).items():
                base = base_index.get(key) if cid != self.baseline else None
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
                        storage_option=self.options.get((cid, agg.target_id)) or self.storage[cid][0],
                        workload=agg.workload,
                        target_id=agg.target_id,
                        variant=agg.variant,
                        phase=agg.phase,
                        direction=agg.direction,
                        group=agg.group,
                        metrics={m: v for m, s in agg.metrics.items() if (v := value_of(s)) is not None},
                        delta_pct=deltas,
                        grade=grade(p95.mean).letter if p95 is not None else None,
                        labels=sorted({label for r in self.members.get(agg.key(), []) for label in r.labels}),
                        monthly_usd=self.monthly.get(cid),
                        warnings=list(agg.warnings),
                    )
                )
        return rows

    def bar_chart(self, info: WorkloadInfo) -> BarChart | None:
        if info.id not in self.headline or info.metric is None:
            return None
        metric, key = self.headline[info.id]
        bars: list[Bar] = []
        missing: list[str] = []
        for cid in self.config_ids:
            agg = self.index.get(cid, {}).get(key)
            value = value_of(agg.metrics.get(metric)) if agg is not None else None
            if value is None:
                missing.append(cid)
            else:
                bars.append(Bar(config_id=cid, value=value, is_baseline=cid == self.baseline))
        return BarChart(
            workload=info.id,
            name=info.name,
            metric=info.metric,
            measurement=info.measurement,
            bars=bars,
            missing=missing,
        )

    def scatter(self, info: WorkloadInfo) -> Scatter | None:
        """The comparison's Pareto frontier of the workload's headline metric."""
        if info.id not in self.headline:
            return None
        metric = self.headline[info.id][0]
        frontier = next(
            (
                f
                for f in (self.comparison or {}).get("frontiers") or []
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
                is_baseline=str(p["config_id"]) == self.baseline,
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
            measurement=self.where(self.headline[info.id][1], ""),
            points=points,
            frontier=[str(c) for c in frontier.get("frontier") or []],
            missing=[str(c) for c in frontier.get("missing") or []],
        )

    def regression_findings(self) -> list[Finding]:
        found: list[Finding] = []
        for row in self.regression_rows:
            where = ", ".join(row.config_ids) or row.storage_option
            name = self.workload_name.get(row.workload, row.workload)
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

    def header(self) -> Header:
        run, request = self.run, self.request
        sources = [str(c["price_source"]) for c in self.compared.values() if c.get("price_source")]
        dates = [str(c["price_date"]) if c.get("price_date") else None for c in self.compared.values()]
        cost_source = self.run_cost.get("price_source") if self.run_cost is not None else None
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
            baseline=self.baseline or None,
            price_source=combine_sources(sources) if sources else None,
            price_date=oldest_date(dates),
            repetitions=most_repetitions(request.repetitions) if request is not None else None,
            repetitions_shown=repetitions_text(request.repetitions) if request is not None else None,
            records=len(self.records),
            run_cost_usd=self.run_total,
            run_cost_source=str(cost_source) if cost_source else None,
        )

    def recommendation(self) -> Recommendation | None:
        """The request's requirements judged on this run, at the comparison's monthly costs."""
        if self.request is None or not self.request.requirements:
            return None
        prices = stored_prices(list(self.compared.values()))
        try:
            return recommend(
                self.request.requirements,
                self.records,
                [prices.get(cid, ConfigPrice(cid, None)) for cid in self.config_ids],
                workloads=[w.id for w in self.request.resolved_workloads()],
                run_id=self.run.run_id,
            )
        except RequirementError as exc:  # the request validated, so only a request of older code
            self.notes.append(f"no recommendation: {exc}")
            return None

    def report(self) -> Report:
        rows = [self.config_row(cid) for cid in self.config_ids]
        findings = [f for row in rows for f in self.config_findings(row)]
        findings += self.regression_findings()
        stops = in_config_order(self.stops, self.config_ids)
        findings += repetition_findings(stops)
        findings += [
            Finding(severity="info", category="cost", text=str(n))
            for n in (self.comparison or {}).get("notes") or []
        ]
        if self.run_cost is not None:
            findings += [
                Finding(severity="warning", category="cost", text=f"run cost: no price for {m}")
                for m in self.run_cost.get("missing_prices") or []
            ]
            self.notes += [f"run cost: {n}" for n in self.run_cost.get("notes") or []]
        if self.comparison is None:
            self.notes.append(
                "no comparison: monthly costs, cost deltas, verdicts and the cost-performance charts "
                "are left out"
            )
        rank = {"error": 0, "warning": 1, "info": 2}
        findings.sort(key=lambda f: rank[f.severity])
        pairs = [(cid, w.id) for cid in self.config_ids for w in self.workloads]
        self.notes += prewarm_notes(self.records)
        self.notes += node_loss_notes(self.records)
        earlier, _ = history_runs(self.history, self.notes)
        return Report(
            trends=build_trends(
                self.config_ids, self.workloads, self.headline, self.current, earlier, self.where
            ),
            trend_runs=len(earlier),
            curves=build_curves(
                self.config_ids, self.workloads, self.index, lambda wid: len(self.groups.get(wid, ()))
            ),
            sla_limits=build_sla_limits(
                self.records,
                config_ids=self.config_ids,
                workload_ids=[w.id for w in self.workloads],
                names=self.workload_name,
            ),
            recommendation=self.recommendation(),
            surfaces=build_surfaces(self.request, rows, self.workloads),
            repetition_stops=stops,
            header=self.header(),
            workloads=self.workloads,
            configs=rows,
            measurements=self.measurements(),
            latency=[row for cid, wid in pairs for row in self.latency(cid, wid)],
            histograms=[h for cid, wid in pairs if (h := self.histogram(cid, wid)) is not None],
            series=[chart for cid in self.config_ids for chart in self.series_charts(cid)],
            bars=[b for w in self.workloads if (b := self.bar_chart(w)) is not None],
            scatters=[s for w in self.workloads if (s := self.scatter(w)) is not None],
            warnings=findings,
            regressions=self.regression_rows,
            regression_counts=self.regression_counts,
            notes=self.notes,
        )


def repetitions_text(repetitions: Repetitions) -> str:
    """A request's repetitions as the header reads them: ``3``, or the adaptive policy."""
    if isinstance(repetitions, int):
        return str(repetitions)
    until = f"until the 95 % interval's half-width is under {repetitions.ci_pct:g} % of the mean"
    return f"{repetitions.min}-{repetitions.max}, {until}"


def build_report(
    stored: Mapping[str, Any],
    *,
    request: BenchmarkRequest | None = None,
    comparison: Mapping[str, Any] | None = None,
    run_cost: Mapping[str, Any] | None = None,
    regressions: Sequence[Mapping[str, Any]] = (),
    series: Mapping[str, Mapping[str, Any]] | None = None,
    history: Mapping[str, Any] | None = None,
) -> Report:
    """Everything the renderers need about one run (module doc). Pure: no I/O, no clock.

    ``stored`` is ``ResultsStore.get_run``'s answer; ``comparison`` a ``Comparison`` dump (computed
    here from the request and the bundled price snapshot when None); ``run_cost`` a ``RunCost``
    dump; ``regressions`` the run's ``Regression`` dumps; ``series`` config id -> the document
    ``analysis.series.extract_series`` wrote; ``history`` the suite's earlier runs as
    ``workflow.run_outputs.report_history`` reads them (``{"runs": [{"stored", "environment"}],
    "notes", "requested"}``), for the trends.
    """
    return _Run(stored, request, comparison, run_cost, regressions, series or {}, history).report()

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

The run is parsed once in ``report.build_run``; one config's sections are ``report.build_configs``,
the run-wide ones ``report.build_sections``. What the report shows of one measurement is
``report.build_values``; the time-series lines ``report.build_series``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from storagebench.report.build_configs import config_findings, config_row, histogram, latency, series_charts
from storagebench.report.build_run import ParsedRun
from storagebench.report.build_sections import (
    bar_chart,
    header,
    measurements,
    recommendation,
    regression_findings,
    repetitions_text,
    scatter,
)
from storagebench.report.load_curves import build_curves
from storagebench.report.model import (
    METRIC_INFO,
    Finding,
    Report,
)
from storagebench.report.node_loss_notes import node_loss_notes
from storagebench.report.prewarm_notes import prewarm_notes
from storagebench.report.repetitions import in_config_order, repetition_findings
from storagebench.report.sla_searches import build_sla_limits
from storagebench.report.surfaces import build_surfaces
from storagebench.report.trends import build_trends, history_runs
from storagebench.request.model import BenchmarkRequest

__all__ = ["METRIC_INFO", "build_report", "repetitions_text"]


def _report(parsed: ParsedRun) -> Report:
    """The sections in the order the report lists them; findings ranked errors first."""
    rows = [config_row(parsed, cid) for cid in parsed.config_ids]
    findings = [f for row in rows for f in config_findings(parsed, row)]
    findings += regression_findings(parsed)
    stops = in_config_order(parsed.stops, parsed.config_ids)
    findings += repetition_findings(stops)
    findings += [
        Finding(severity="info", category="cost", text=str(n))
        for n in (parsed.comparison or {}).get("notes") or []
    ]
    if parsed.run_cost is not None:
        findings += [
            Finding(severity="warning", category="cost", text=f"run cost: no price for {m}")
            for m in parsed.run_cost.get("missing_prices") or []
        ]
        parsed.notes += [f"run cost: {n}" for n in parsed.run_cost.get("notes") or []]
    if parsed.comparison is None:
        parsed.notes.append(
            "no comparison: monthly costs, cost deltas, verdicts and the cost-performance charts are left out"
        )
    rank = {"error": 0, "warning": 1, "info": 2}
    findings.sort(key=lambda f: rank[f.severity])
    pairs = [(cid, w.id) for cid in parsed.config_ids for w in parsed.workloads]
    parsed.notes += prewarm_notes(parsed.records)
    parsed.notes += node_loss_notes(parsed.records)
    earlier, _ = history_runs(parsed.history, parsed.notes)
    return Report(
        trends=build_trends(
            parsed.config_ids, parsed.workloads, parsed.headline, parsed.current, earlier, parsed.where
        ),
        trend_runs=len(earlier),
        curves=build_curves(
            parsed.config_ids, parsed.workloads, parsed.index, lambda wid: len(parsed.groups.get(wid, ()))
        ),
        sla_limits=build_sla_limits(
            parsed.records,
            config_ids=parsed.config_ids,
            workload_ids=[w.id for w in parsed.workloads],
            names=parsed.workload_name,
        ),
        recommendation=recommendation(parsed),
        surfaces=build_surfaces(parsed.request, rows, parsed.workloads),
        repetition_stops=stops,
        header=header(parsed),
        workloads=parsed.workloads,
        configs=rows,
        measurements=measurements(parsed),
        latency=[row for cid, wid in pairs for row in latency(parsed, cid, wid)],
        histograms=[h for cid, wid in pairs if (h := histogram(parsed, cid, wid)) is not None],
        series=[chart for cid in parsed.config_ids for chart in series_charts(parsed, cid)],
        bars=[b for w in parsed.workloads if (b := bar_chart(parsed, w)) is not None],
        scatters=[s for w in parsed.workloads if (s := scatter(parsed, w)) is not None],
        warnings=findings,
        regressions=parsed.regression_rows,
        regression_counts=parsed.regression_counts,
        notes=parsed.notes,
    )


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
    return _report(ParsedRun(stored, request, comparison, run_cost, regressions, series or {}, history))

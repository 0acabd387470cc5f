"""The report as Markdown: the HTML's tables and findings as text (for a chat message, a ticket or a
terminal), with the same numbers formatted the same way. Charts are left to the HTML.

Text from the data is escaped so it cannot break a table or inject markup: HTML-significant
characters become entities, Markdown punctuation gets a backslash, newlines become spaces.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from storagebench.report.findings import caveats, emulated_configs, mark_emulated
from storagebench.report.fmt import (
    DASH,
    INTERVAL_NOTE,
    delta_text,
    grade_text,
    metric_title,
    metric_value,
    pct,
    seconds,
    usd,
    value_text,
    verdict_counts,
)
from storagebench.report.history_text import (
    CHANGES_HEAD,
    CURVE_HEAD,
    change_row,
    curve_rows,
    curves_intro,
    trend_summary,
    trends_intro,
)
from storagebench.report.html_surfaces import SURFACES_INTRO
from storagebench.report.model import METRIC_INFO, Cell, LatencyRow, MetricInfo, Report, Value, WorkloadInfo
from storagebench.report.repetitions import repetition_tables, repetitions_title
from storagebench.report.sla_searches import SLA_INTRO, probe_rows

__all__ = ["render_markdown"]

_SPECIAL = re.compile(r"([\\`*_\[\]|~])")
_LATENCY = MetricInfo(
    name="latency", label="latency", unit="ms", scale=1e-3, stored_unit="us", higher_is_better=False
)


def md(text: object) -> str:
    """Escape text for a Markdown table cell or paragraph."""
    plain = " ".join(str(text).split())
    plain = plain.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return _SPECIAL.sub(r"\\\1", plain)


def _table(head: Sequence[str], rows: Sequence[Sequence[str]], align: Sequence[str] | None = None) -> str:
    align = align or ["l"] * len(head)
    rule = ["---:" if a == "r" else "---" for a in align]
    lines = ["| " + " | ".join(head) + " |", "| " + " | ".join(rule) + " |"]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines)


def _cell(info: WorkloadInfo, cell: Cell, emulated: bool = False) -> str:
    if info.metric is None or cell.value is None:
        return DASH
    parts = [md(value_text(info.metric, cell.value))]
    if cell.delta is not None:
        parts.append(md(mark_emulated(delta_text(cell.delta), emulated and cell.delta.better is not None)))
    if cell.grade is not None:
        parts.append(
            f"**{grade_text(cell.grade.letter, emulated)}** "
            f"({md(cell.grade.rule.removesuffix(' -> ' + cell.grade.letter))})"
        )
    parts += [md(flag) for flag in cell.flags]
    parts += ["**regression**" for r in cell.regressions if r.startswith("regression")]
    return "<br>".join(parts)


def _comparison(report: Report) -> str:
    head = ["Config", "Storage option", "Instance", "Monthly cost", "Run cost"]
    for info in report.workloads:
        metric = metric_title(info.metric) if info.metric is not None else "nothing measured"
        head.append(f"{md(info.name)} ({md(metric)})")
    head.append("Verdict")
    rows = []
    emulated = emulated_configs(report)
    for row in report.configs:
        name = (
            f"**{md(row.config_id)}**" + (" (baseline)" if row.is_baseline else "") + f"<br>{md(row.status)}"
        )
        monthly = md(usd(row.monthly_usd))
        if not row.is_baseline and row.delta_monthly_pct is not None:
            monthly += f" ({md(pct(row.delta_monthly_pct))})"
        if row.storage_only_usd is not None:
            monthly += f"<br>storage only {md(usd(row.storage_only_usd))}"
            if not row.is_baseline and row.delta_storage_pct is not None:
                monthly += f" ({md(pct(row.delta_storage_pct))})"
        if row.cost_partial:
            monthly += " partly unpriced"
        verdict = md(mark_emulated(row.verdict, row.config_id in emulated and not row.is_baseline))
        verdict += "".join(f"<br>{md(e)}" for e in row.errors[:3])
        rows.append(
            [
                name,
                md(row.storage_option),
                md(row.instance_type or DASH),
                monthly,
                md(usd(row.run_cost_usd)),
                *(
                    _cell(info, cell, row.config_id in emulated)
                    for info, cell in zip(report.workloads, row.cells, strict=True)
                ),
                verdict,
            ]
        )
    align = ["l", "l", "l", "r", "r", *(["r"] * len(report.workloads)), "l"]
    return _table(head, rows, align)


def _latency_value(value: Value | None) -> str:
    if value is None:
        return DASH
    return md(value_text(_LATENCY, value, unit=False))


def _latency(rows: Sequence[LatencyRow], emulated: frozenset[str] = frozenset()) -> str:
    head = [
        "Config",
        "Measurement",
        "mean, ms",
        "p50, ms",
        "p90, ms",
        "p95, ms",
        "p99, ms",
        "p99.9, ms",
        "Grade",
    ]
    body = [
        [
            md(r.config_id),
            md(r.measurement),
            *(
                _latency_value(getattr(r, f))
                for f in ("mean_us", "p50_us", "p90_us", "p95_us", "p99_us", "p999_us")
            ),
            grade_text(r.grade.letter, r.config_id in emulated) if r.grade is not None else DASH,
        ]
        for r in rows
    ]
    return _table(head, body, ["l", "l", "r", "r", "r", "r", "r", "r", "l"])


def _header(report: Report) -> list[str]:
    h = report.header
    out = [f"# {md(h.name or h.suite or h.run_id)}: storagebench run report", ""]
    out += [line for caveat in caveats(report) for line in (f"> **Caveat: {md(caveat)}**", "")]
    if h.description:
        out += [md(h.description), ""]
    price = DASH
    if h.price_source:
        price = h.price_source + (f", as of {h.price_date}" if h.price_date else "")
    ended = h.ended_at or "not finished"
    if h.duration_s is not None:
        ended += f" ({seconds(h.duration_s)})"
    for key, value in (
        ("Run", h.run_id),
        ("Suite", h.suite or DASH),
        ("Status", h.status or DASH),
        ("Started", h.started_at or DASH),
        ("Ended", ended),
        ("Region", h.region or DASH),
        ("Baseline", h.baseline or DASH),
        ("Prices", price),
        ("Repetitions", h.repetitions_shown or (str(h.repetitions) if h.repetitions is not None else DASH)),
        ("Records", f"{h.records:,}"),
        ("Run cost", usd(h.run_cost_usd)),
    ):
        out.append(f"- **{key}**: {md(value)}")
    errors = [f for f in report.warnings if f.severity == "error"]
    if errors:
        out += ["", f"**{len(errors)} error(s)**: " + "; ".join(md(f.text) for f in errors[:5])]
    return out


def _latency_section(report: Report) -> list[str]:
    out: list[str] = []
    for info in report.workloads:
        rows = [r for r in report.latency if r.workload == info.id]
        if not rows:
            continue
        out += [f"### {md(info.name)}", "", _latency(rows, emulated_configs(report)), ""]
        bimodal = [h for h in report.histograms if h.workload == info.id and h.bimodal]
        out += [f"- {md(h.config_id)}: {md(h.bimodal)}" for h in bimodal]
        out += [""] if bimodal else []
    return out or ["No latency was recorded."]


def _cost_section(report: Report) -> list[str]:
    out: list[str] = []
    emulated = emulated_configs(report)
    for scatter in report.scatters:
        metric = scatter.metric
        on_emulated = any(p.config_id in emulated for p in scatter.points)
        out.append(
            f"- **{md(scatter.name)}** ({md(metric.label)}, {md(metric.unit)}): "
            + md(mark_emulated("Pareto frontier", on_emulated))
            + " "
            + (", ".join(md(c) for c in scatter.frontier) or "none")
        )
        for point in sorted(scatter.points, key=lambda p: p.monthly_usd):
            mark = " (frontier)" if point.on_frontier else ""
            out.append(
                f"  - {md(point.config_id)}: {md(usd(point.monthly_usd))}/month, "
                f"{md(metric_value(metric, point.value))} {md(metric.unit)}{mark}"
            )
    return out or ["No cost comparison."]


def _regressions(report: Report) -> list[str]:
    if not report.regression_counts:
        return ["No comparison with earlier runs was recorded."]
    out = [f"{md(verdict_counts(report.regression_counts))}."]
    if not report.regressions:
        return [*out, "", "None left its noise band."]
    names = {w.id: w.name for w in report.workloads}
    body = []
    for row in report.regressions:
        m = row.metric
        band = (
            DASH if row.band is None else f"{metric_value(m, row.band[0])} to {metric_value(m, row.band[1])}"
        )
        body.append(
            [
                md(row.verdict),
                md(", ".join(row.config_ids) or row.storage_option),
                md(f"{names.get(row.workload, row.workload)} ({row.measurement})"),
                md(f"{m.label}, {m.unit}"),
                md(metric_value(m, row.value)),
                md(metric_value(m, row.baseline)),
                md(pct(row.delta_pct)),
                md(band),
                str(row.history_n),
            ]
        )
    head = ["Verdict", "Config", "Workload", "Metric", "This run", "Median before", "Change", "Band", "Runs"]
    return [*out, "", _table(head, body, ["l", "l", "l", "l", "r", "r", "r", "r", "r"])]


def _recommendation(report: Report) -> list[str]:
    """The answer to the request's requirements, right under the header (emulation first)."""
    answer = report.recommendation
    if answer is None:
        return []
    notes = list(answer.notes)
    out = ["", "## Recommendation", ""]
    if answer.emulated:
        out += [f"> **Emulated**: {md(notes.pop(0))}", ""]
    out += [f"**{md(answer.summary)}**", ""]
    ranked = [(answer.recommended, "cheapest")] if answer.recommended is not None else []
    ranked += [(v, "also meets") for v in answer.runners_up] + [(v, "fails") for v in answer.failed]
    rows = []
    for verdict, role in ranked:
        assert verdict is not None
        checks = "<br>".join(
            f"{'meets' if c.met else '**fails**'} `{c.requirement}`"
            + (f" ({md(c.measurement)})" if c.measurement else "")
            + f": {md(c.reason)}"
            for c in verdict.checks
        )
        cost = md(usd(verdict.monthly_usd)) + (" partly unpriced" if verdict.cost_partial else "")
        rows.append([f"**{md(verdict.config_id)}**", cost, role, checks])
    out.append(
        _table(["Config", "Monthly", "Result", "Requirements (95 % bound)"], rows, ["l", "r", "l", "l"])
    )
    if notes:
        out += ["", *(f"- {md(n)}" for n in notes)]
    return out


NOTES = (
    INTERVAL_NOTE,
    "A difference from the baseline counts when Welch's t-test finds it significant (p < 0.05); "
    "else “not significant”; a single repetition has no test (“1 run”).",
    "Grades: p95 latency, A < 2 ms, B < 6 ms, C <= 14 ms, D > 14 ms.",
)


def _curves(report: Report) -> list[str]:
    if not report.curves:
        return [
            "No sweep in this run: a workload swept over queue depth or jobs is reported here as a curve."
        ]
    out = [md(curves_intro())]
    for curve in report.curves:
        out += [
            "",
            f"**{md(curve.config_id)}**, {md(curve.name)} ({md(curve.measurement)}): {md(curve.reading)}.",
        ]
        head = [curve.axis_label, *CURVE_HEAD[1:]]
        out += ["", _table(head, [[md(v) for v in row] for row in curve_rows(curve)], ["r"] * len(head))]
    return out


def _surfaces(report: Report) -> list[str]:
    """Each matrix's grids (``report.surfaces``): mean and monthly cost per point, skipped points."""
    out = [md(SURFACES_INTRO)]
    for surface in report.surfaces:
        metric = METRIC_INFO[surface.metric]
        out += [
            "",
            f"**{md(surface.base_id)}**, {md(surface.workload_name)}: {md(metric.label)} ({md(metric.unit)})",
        ]
        for table in surface.tables:
            fixed = ", ".join(f"{axis} {value}" for axis, value in table.fixed.items())
            corner = table.rows_axis + (f" \\ {table.columns_axis}" if table.columns_axis else "")
            head = (
                [md(corner), *(md(c) for c in table.columns)]
                if table.columns_axis
                else [md(corner), md(metric.label)]
            )
            rows = [
                [md(row)]
                + [
                    "skipped"
                    if cell.skipped
                    else DASH
                    if cell.config_id is None
                    else f"{metric_value(metric, cell.value)} · {usd(cell.monthly_usd)}/mo"
                    for cell in cells
                ]
                for row, cells in zip(table.rows, table.cells, strict=True)
            ]
            out += [
                "",
                *([f"{md(fixed)}:", ""] if fixed else []),
                _table(head, rows, ["l"] + ["r"] * (len(head) - 1)),
            ]
    return out


def _repetitions(report: Report) -> list[str]:
    """How each config's repetitions stopped (``report.repetitions``): a paragraph and a table each."""
    out: list[str] = []
    for table in repetition_tables(report.repetition_stops):
        align = ["r" if numeric else "l" for numeric in table.numeric]
        rows = [[md(v) for v in row] for row in table.rows]
        out += [*([""] if out else []), md(table.intro), "", _table([md(h) for h in table.head], rows, align)]
    return out


def _sla_limits(report: Report) -> list[str]:
    out = [md(SLA_INTRO)]
    emulated = emulated_configs(report)
    for limit in report.sla_limits:
        where = f" ({md(limit.measurement)})" if limit.measurement else ""
        answer = mark_emulated(limit.answer, limit.config_id in emulated)
        out += [
            "",
            f"**{md(limit.config_id)}**, {md(limit.name)}{where}, target `{limit.sla}`: {md(answer)}.",
            "",
        ]
        for repetition in limit.repetitions:
            prefix = f"repetition {repetition.repetition}: " if len(limit.repetitions) > 1 else ""
            out.append(f"- {prefix}the limit lies {md(repetition.bracket)}.")
            out.append(f"- {prefix}stopped: {md(repetition.stopped)}.")
        head, rows = probe_rows(limit)
        align = ["l" if h == "SLA" else "r" for h in head]
        out += ["", _table([md(h) for h in head], [[md(v) for v in row] for row in rows], align)]
    return out


def _trends(report: Report) -> list[str]:
    if not report.trends:
        return ["No headline number to follow over runs."]
    out = [md(trends_intro(report)), ""]
    for trend in report.trends:
        values = " → ".join(metric_value(trend.metric, p.value) for p in trend.points[-8:])
        shown = (
            f" ({md(values)} {md(trend.metric.unit)}, last {min(8, len(trend.points))} runs)"
            if trend.has_history
            else ""
        )
        notes = "".join(f" {md(n)}." for n in trend.notes)
        out.append(
            f"- **{md(trend.config_id)}** {md(trend.name)}, {md(trend.metric.label)}: "
            f"{md(trend_summary(trend))}{shown}.{notes}"
        )
    rows = [[md(v) for v in change_row(trend, change)] for trend in report.trends for change in trend.changes]
    if rows:
        out += ["", _table(CHANGES_HEAD, rows, ["l", "l", "l", "l", "r", "r", "r", "r", "l"])]
    else:
        out += ["", "No change point in any history."]
    return out


def render_markdown(report: Report) -> str:
    """The report as GitHub-flavoured Markdown."""
    out = _header(report) + _recommendation(report)
    out += ["", "## Configs against the baseline", "", _comparison(report)]
    if report.repetition_stops:
        out += ["", f"## {repetitions_title(report.repetition_stops)}", "", *_repetitions(report)]
    if report.sla_limits:
        out += ["", "## Limits under a latency SLA", "", *_sla_limits(report)]
    if report.surfaces:
        out += ["", "## Matrix surfaces", "", *_surfaces(report)]
    out += ["", "## Latency", "", *_latency_section(report)]
    out += ["", "## Latency against load", "", *_curves(report)]
    out += ["", "## Cost against performance", "", *_cost_section(report)]
    out += ["", "## Warnings", ""]
    if report.warnings:
        out += [f"- **{f.severity}** ({md(f.category)}): {md(f.text)}" for f in report.warnings]
    else:
        out.append("Nothing to warn about.")
    out += ["", "## Against earlier runs", "", *_regressions(report)]
    out += ["", "## Trends and change points", "", *_trends(report)]
    out += ["", "## Notes", "", *(f"- {md(n)}" for n in NOTES), *(f"- {md(n)}" for n in report.notes)]
    return "\n".join(out) + "\n"

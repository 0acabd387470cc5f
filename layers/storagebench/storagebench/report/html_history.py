"""The HTML report's trend and latency-vs-load sections: small line charts (``svg.xy_chart``) with
their captions and tables. Every piece of text from the data goes through ``html.escape``."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from html import escape

from storagebench.report.fmt import metric_title, metric_value, num
from storagebench.report.history_text import (
    CHANGES_HEAD,
    CURVE_HEAD,
    change_row,
    curve_rows,
    curves_intro,
    trend_summary,
    trends_intro,
)
from storagebench.report.model import Curve, Report, Trend
from storagebench.report.svg import Marker, XYLine, xy_chart

__all__ = ["curves_html", "trends_html"]


def _e(value: object) -> str:
    return escape(str(value), quote=True)


def _fig_title(title: str, detail: str) -> str:
    more = f" <small>· {_e(detail)}</small>" if detail else ""
    return f'<p class="fig-title">{_e(title)}{more}</p>'


def data_table(head: Sequence[str], rows: Sequence[Sequence[str]], numeric: Sequence[bool]) -> str:
    """A table of escaped cells, ``numeric`` columns right-aligned, scrolling inside its own box."""
    cells = "".join(
        f'<th class="num">{_e(h)}</th>' if n else f"<th>{_e(h)}</th>"
        for h, n in zip(head, numeric, strict=True)
    )
    body = "".join(
        "<tr>"
        + "".join(
            f'<td class="num">{_e(v)}</td>' if n else f"<td>{_e(v)}</td>"
            for v, n in zip(row, numeric, strict=True)
        )
        + "</tr>"
        for row in rows
    )
    return f'<div class="scroll"><table><thead><tr>{cells}</tr></thead><tbody>{body}</tbody></table></div>'


def _run_ticks(count: int) -> list[float]:
    """Whole run numbers from 1 to ``count``, about six of them."""
    step = max(1, -(-(count - 1) // 6))
    ticks = [float(i) for i in range(1, count + 1, step)]
    return ticks if ticks[-1] == count else [*ticks, float(count)]


def _trend_chart(trend: Trend, chart_id: str) -> str:
    metric = trend.metric
    values = [(float(i), p.value * metric.scale) for i, p in enumerate(trend.points, start=1)]
    tooltips = [
        f"run {i}: {p.run_id} ({p.started_at[:16]}): {metric_value(metric, p.value)} {metric.unit}"
        + (" (this run)" if p.is_current else "")
        for i, p in enumerate(trend.points, start=1)
    ]
    band = None if trend.band is None else (trend.band[0] * metric.scale, trend.band[1] * metric.scale)
    markers = [
        Marker(
            x=change.index + 0.5,  # between the last run before and the first after
            label=f"change {'+' if change.after >= change.before else '-'}",
            tooltip=f"change point from {change.run_id}: {metric_value(metric, change.before)} -> "
            f"{metric_value(metric, change.after)} {metric.unit}"
            + (f"; possible cause: {'; '.join(change.causes)}" if change.causes else ""),
            cls="change",
        )
        for change in trend.changes
    ]
    better = "higher is better" if metric.higher_is_better else "lower is better"
    return xy_chart(
        chart_id,
        "trend",
        f"{trend.config_id}: {metric.label} of {trend.name} over the suite's runs",
        f"{len(trend.points)} runs, oldest first, this run last; {trend_summary(trend)}.",
        [XYLine(label=metric.label, points=values, tooltips=tooltips)],
        x_ticks=_run_ticks(len(values)),
        x_label=lambda v: f"{v:g}",
        x_title="run of the suite, oldest first",
        y_title=f"{metric_title(metric)} ({better})",
        band=band,
        band_tooltip="" if band is None else f"noise band of the earlier runs: {num(band[0])}–{num(band[1])}",
        markers=markers,
        highlight=(values[-1][0], values[-1][1], "this run"),
    )


def trends_html(report: Report, ids: Iterator[int]) -> str:
    if not report.trends:
        return "<p class=muted>No headline number to follow over runs.</p>"
    out = [f"<p>{_e(trends_intro(report))}</p>"]
    by_workload: dict[str, list[Trend]] = {}
    for trend in report.trends:
        by_workload.setdefault(trend.workload, []).append(trend)
    for trends in by_workload.values():
        figures = []
        for trend in trends:
            notes = "".join(f" {_e(n)}." for n in trend.notes)
            if not trend.has_history:
                figures.append(
                    f'<figure class="no-history">{_fig_title(trend.config_id, trend.measurement)}'
                    f"<p class=muted>{_e(trend_summary(trend))}.</p></figure>"
                )
                continue
            svg = _trend_chart(trend, f"chart{next(ids)}")
            figures.append(
                f"<figure>{_fig_title(trend.config_id, trend.measurement)}{svg}"
                f"<figcaption>{_e(trend_summary(trend))}.{notes}</figcaption></figure>"
            )
        out.append(f'<h3>{_e(trends[0].name)}</h3><div class="charts">{"".join(figures)}</div>')
    rows = [change_row(trend, change) for trend in report.trends for change in trend.changes]
    if rows:
        numeric = [False, False, False, False, True, True, True, True, False]
        out.append("<h3>Change points</h3>" + data_table(CHANGES_HEAD, rows, numeric))
    else:
        out.append("<p>No change point in any history.</p>")
    return "".join(out)


def _curve_charts(curve: Curve, ids: Iterator[int]) -> str:
    loads = [p.load for p in curve.points]
    log2 = all(load > 0 for load in loads) and max(loads) / min(loads) >= 4
    markers = (
        [
            Marker(
                x=curve.knee.load,
                label=f"knee {curve.knee.load:g}",
                tooltip=curve.knee.text,
                cls="load-knee",
            )
        ]
        if curve.knee is not None
        else []
    )

    def draw(kind: str, title: str, desc: str, lines: Sequence[XYLine], y_title: str) -> str:
        return xy_chart(
            f"chart{next(ids)}",
            kind,
            title,
            desc,
            lines,
            x_ticks=loads,
            x_label=lambda v: f"{v:g}",
            x_title=curve.axis_label,
            y_title=y_title,
            log2_x=log2,
            markers=markers,
            y_from_zero=True,
        )

    charts = []
    iops = [(p.load, p.iops) for p in curve.points if p.iops is not None]
    if iops:
        tips = [f"{curve.axis_label} {x:g}: {num(y)} IOPS" for x, y in iops]
        charts.append(
            draw(
                "curve-iops",
                f"{curve.config_id}: IOPS against {curve.axis_label}, {curve.name}",
                f"IOPS at each {curve.axis_label} of the sweep; {curve.reading}.",
                [XYLine("IOPS", iops, tips)],
                "IOPS (higher is better)",
            )
        )
    lines = []
    for label, field in (("p50", "p50_us"), ("p95", "p95_us"), ("p99", "p99_us")):
        points = [(p.load, getattr(p, field) / 1000) for p in curve.points if getattr(p, field) is not None]
        if points:
            tips = [f"{label} at {curve.axis_label} {x:g}: {num(y)} ms" for x, y in points]
            lines.append(XYLine(label, points, tips))
    if lines:
        charts.append(
            draw(
                "curve-latency",
                f"{curve.config_id}: latency against {curve.axis_label}, {curve.name}",
                f"p50, p95 and p99 latency at each {curve.axis_label}; {curve.reading}.",
                lines,
                "latency, ms (lower is better)",
            )
        )
    return "".join(
        f"<figure>{_fig_title(curve.config_id, curve.measurement)}{svg}</figure>" for svg in charts
    )


def curves_html(report: Report, ids: Iterator[int]) -> str:
    if not report.curves:
        return (
            "<p class=muted>No sweep in this run: a workload swept over queue depth or jobs "
            "(sweep-qd-randread-4k, sweep-jobs-randread-4k, or params such as "
            '<code>"iodepth": [1, 4, 16, 64]</code>) is drawn here as a curve.</p>'
        )
    out = [f"<p>{_e(curves_intro())}</p>"]
    by_workload: dict[str, list[Curve]] = {}
    for curve in report.curves:
        by_workload.setdefault(curve.workload, []).append(curve)
    for curves in by_workload.values():
        out.append(f"<h3>{_e(curves[0].name)}</h3>")
        for curve in curves:
            head = [curve.axis_label, *CURVE_HEAD[1:]]
            out.append(
                f'<div class="charts">{_curve_charts(curve, ids)}</div>'
                f"<p><b>{_e(curve.config_id)}</b>: {_e(curve.reading)}.</p>"
                + data_table(head, curve_rows(curve), [True] * len(head))
            )
    return "".join(out)

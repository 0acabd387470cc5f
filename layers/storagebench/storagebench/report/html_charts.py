"""The HTML report's figures, drawn by ``report.svg``: the bars of each metric, the latency
histograms with the latency table, the IOPS and bandwidth series, and the price-performance
scatters.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

from storagebench.report.findings import emulated_configs, mark_emulated
from storagebench.report.fmt import ci_text, metric_title, metric_value, num, usd, value_text
from storagebench.report.html_tables import latency_table
from storagebench.report.model import Histogram, Report, SeriesChart
from storagebench.report.svg import (
    STEP,
    BarSpec,
    HistogramSpec,
    LineSpec,
    PointSpec,
    bar_chart,
    histogram_chart,
    scatter_chart,
    series_chart,
    series_extent,
    tick,
)
from storagebench.report.svg_kit import esc as _e


def _fig_title(title: str, detail: str) -> str:
    more = f" <small>· {_e(detail)}</small>" if detail else ""
    return f'<p class="fig-title">{_e(title)}{more}</p>'


def bars_html(report: Report, ids: Iterable[int]) -> str:
    figures = []
    for chart, n in zip(report.bars, ids, strict=False):
        metric = chart.metric
        better = "higher is better" if metric.higher_is_better else "lower is better"
        specs = [
            BarSpec(
                label=bar.config_id,
                value=bar.value.mean * metric.scale,
                low=None if bar.value.ci_low is None else bar.value.ci_low * metric.scale,
                high=None if bar.value.ci_high is None else bar.value.ci_high * metric.scale,
                n=bar.value.n,
                baseline=bar.is_baseline,
                tooltip=f"{bar.config_id}: {value_text(metric, bar.value)}; {ci_text(metric, bar.value)}",
            )
            for bar in chart.bars
        ]
        title = f"{chart.name}: {metric.label} by config"
        desc = f"Horizontal bars, {better}. " + "; ".join(
            f"{b.config_id}{' (baseline)' if b.is_baseline else ''} {value_text(metric, b.value)}"
            for b in chart.bars
        )
        svg = bar_chart(f"chart{n}", title, desc, f"{metric_title(metric)} ({better})", specs)
        missing = f"No result: {', '.join(chart.missing)}." if chart.missing else ""
        where = f" · {chart.measurement}" if chart.measurement else ""
        figures.append(
            f"<figure>{_fig_title(chart.name, metric_title(metric) + where)}{svg}"
            f"{f'<figcaption>{_e(missing)}</figcaption>' if missing else ''}</figure>"
        )
    if not figures:
        return "<p class=muted>No headline results to chart.</p>"
    return (
        "<p>Each workload's headline metric by config: the mean of the repetitions with its 95 % confidence "
        "interval (Student t, clipped at 0) as a whisker; no whisker where a single run gives no "
        f'interval. The baseline is hatched.</p><div class="charts wide">{"".join(figures)}</div>'
    )


def _histograms(histograms: Sequence[Histogram], ids: Iterable[int]) -> str:
    if not histograms:
        return ""
    low = min(h.buckets[0][0] / STEP for h in histograms)
    high = max(h.buckets[-1][0] for h in histograms)
    low, high = 10 ** math.floor(math.log10(low)), 10 ** math.ceil(math.log10(high))
    top = max(count / h.total * 100 for h in histograms for _, count in h.buckets if h.total)
    figures = []
    for histogram, n in zip(histograms, ids, strict=False):
        markers = [
            (name, value)
            for name, value in (
                ("p50", histogram.p50_us),
                ("p95", histogram.p95_us),
                ("p99", histogram.p99_us),
            )
            if value is not None
        ]
        spec = HistogramSpec(buckets=histogram.buckets, markers=markers)
        title = f"{histogram.config_id}: latency histogram"
        stated = ", ".join(f"{name} {num(value / 1000)} ms" for name, value in markers)
        desc = (
            f"Share of {histogram.total:,} I/Os per latency bucket (log scale), "
            f"{histogram.measurement}; {stated}" + (f"; {histogram.bimodal}" if histogram.bimodal else "")
        )
        svg = histogram_chart(f"chart{n}", title, desc, spec, (low, high), top)
        bimodal = f" <b>{_e(histogram.bimodal)}</b>." if histogram.bimodal else ""
        figures.append(
            f"<figure>{_fig_title(histogram.config_id, histogram.measurement)}{svg}<figcaption>"
            f"{histogram.total:,} I/Os, repetitions summed; {_e(stated)}.{bimodal}</figcaption></figure>"
        )
    return f'<div class="charts">{"".join(figures)}</div>'


def latency_html(report: Report, ids: Iterable[int]) -> str:
    out = []
    ids = iter(ids)
    for info in report.workloads:
        rows = [r for r in report.latency if r.workload == info.id]
        if not rows:
            continue
        histograms = [h for h in report.histograms if h.workload == info.id]
        out.append(f"<h3>{_e(info.name)}</h3>")
        out.append(latency_table(rows, emulated_configs(report)))
        out.append(_histograms(histograms, ids))
    if not out:
        return "<p class=muted>No latency was recorded (dd and timed commands record none).</p>"
    return (
        "<p>Percentiles are means over the repetitions (each repetition's from fio's merged histogram), "
        "with their 95 % interval [low–high] (clipped at 0) and n, the number of repetitions: few "
        "repetitions make a wide interval. Histograms share one latency axis per workload; "
        "the red line is p95, the basis of the grade.</p>" + "".join(out)
    )


def series_html(report: Report, ids: Iterable[int]) -> str:
    out = []
    ids = iter(ids)
    names = {w.id: w.name for w in report.workloads}
    by_workload: dict[str, list[SeriesChart]] = {}
    for chart in report.series:
        by_workload.setdefault(chart.workload, []).append(chart)
    for workload, charts in by_workload.items():
        figures = []
        drawn = [
            [
                LineSpec(
                    label=ln.label, t0_s=ln.t0_s, interval_s=ln.interval_s, values=ln.iops, knee_s=ln.knee_s
                )
                for ln in chart.lines
            ]
            for chart in charts
        ]
        extents = [series_extent(lines) for lines in drawn]
        x_max, y_max = max(e[0] for e in extents), max(e[1] for e in extents)
        for chart, lines in zip(charts, drawn, strict=True):
            knees = [f"{tick(ln.knee_s)} s ({ln.label})" for ln in chart.lines if ln.knee_s is not None]
            knee_text = "burst knee at " + ", ".join(knees) if knees else "no burst knee detected"
            title = f"{chart.config_id}: IOPS over time, {names.get(workload, workload)}"
            desc = f"Total IOPS per {num(lines[0].interval_s)} s of {len(lines)} repetition(s); {knee_text}."
            svg = series_chart(
                f"chart{next(ids)}", title, desc, lines, "IOPS, all directions", x_max=x_max, y_max=y_max
            )
            omitted = f" {chart.omitted} more not drawn." if chart.omitted else ""
            figures.append(
                f"<figure>{_fig_title(chart.config_id, chart.measurement)}{svg}<figcaption>One point per "
                f"{_e(tick(lines[0].interval_s))} s; {_e(knee_text)}.{_e(omitted)}</figcaption></figure>"
            )
        out.append(
            f'<h3>{_e(names.get(workload, workload))}</h3><div class="charts wide">{"".join(figures)}</div>'
        )
    if not out:
        return (
            "<p class=muted>No time series were stored for this run "
            "(fio phases write them; dd and commands do not).</p>"
        )
    return (
        "<p>fio's 1 s IOPS logs, summed over jobs and directions. A dashed vertical line marks a burst knee: "
        "where a volume ran out of burst credits and fell to its baseline.</p>" + "".join(out)
    )


def scatters_html(report: Report, ids: Iterable[int]) -> str:
    figures = []
    emulated = emulated_configs(report)
    for chart, n in zip(report.scatters, ids, strict=False):
        metric = chart.metric
        frontier_name = mark_emulated("Pareto frontier", any(p.config_id in emulated for p in chart.points))
        better = "higher is better" if metric.higher_is_better else "lower is better"
        points = [
            PointSpec(
                label=p.config_id,
                x=p.monthly_usd,
                y=p.value * metric.scale,
                frontier=p.on_frontier,
                baseline=p.is_baseline,
                tooltip=(
                    f"{p.config_id}: {usd(p.monthly_usd)}/month, "
                    f"{metric_value(metric, p.value)} {metric.unit}"
                    + (" (on the Pareto frontier)" if p.on_frontier else "")
                ),
            )
            for p in chart.points
        ]
        title = f"{chart.name}: monthly cost against {metric.label}"
        desc = (
            f"Scatter of {len(points)} configs; Pareto frontier: {', '.join(chart.frontier) or 'none'}. "
            + "; ".join(f"{p.label} {usd(p.x)} {num(p.y)} {metric.unit}" for p in points)
        )
        svg = scatter_chart(
            f"chart{n}",
            title,
            desc,
            points,
            "monthly cost, USD",
            f"{metric_title(metric)} ({better})",
            metric.higher_is_better,
            lambda v: usd(v).removesuffix(".00"),
        )
        where = f" · {chart.measurement}" if chart.measurement else ""
        missing = f" Not measured: {', '.join(chart.missing)}." if chart.missing else ""
        figures.append(
            f"<figure>{_fig_title(chart.name, metric_title(metric) + where)}{svg}<figcaption>Filled points "
            "are on the Pareto frontier (no other config is both cheaper and better); the line steps through "
            f"them, cheapest first. The square is the baseline. {_e(frontier_name)}: "
            f"{_e(', '.join(chart.frontier) or 'none')}.{_e(missing)}</figcaption></figure>"
        )
    if not figures:
        return (
            "<p class=muted>No cost comparison: the run has no prices or fewer than two configs "
            "with results.</p>"
        )
    return f'<div class="charts wide">{"".join(figures)}</div>'

"""Inline SVG charts drawn in Python: no script, no fonts or images fetched, readable in print.

Every chart is an ``<svg role="img">`` with a ``<title>`` and ``<desc>`` (what it shows, in words
a screen reader can say), labelled axes with units, and a ``<title>`` tooltip on each mark.
Colours are the Okabe-Ito palette (distinguishable with the common colour-vision deficiencies)
and never the only cue: the baseline bar is hatched and labelled, lines also differ by dash,
frontier points are filled and others hollow.

Marks carry classes the browser test counts: ``bar``, ``ci``, ``hist``, ``series-line``, ``knee``,
``point`` (``frontier`` when on the Pareto frontier), ``frontier-line``, and on trends,
latency-vs-load curves and latency-SLA searches ``xy-line``, ``xy-point`` (``missed`` when hollow),
``band``, ``change``, ``load-knee``, ``sla-line`` and ``current``.

The palette, ticks, canvas and axes are ``report.svg_kit``; the x-y chart is ``report.svg_xy``
(re-exported here).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from storagebench.report.fmt import num
from storagebench.report.svg_kit import (
    BASELINE_GREY,
    BLUE,
    INK,
    LINE_COLOURS,
    LINE_DASHES,
    LOG_SLACK,
    MUTED,
    SKY,
    VERMILLION,
    Svg,
    coord,
    esc,
    latency_label,
    legend,
    log_ticks,
    nice_ticks,
    tag,
    tick,
    x_axis,
    y_axis,
)
from storagebench.report.svg_xy import Level, Marker, XYLine, xy_chart

__all__ = [
    "LOG_SLACK",
    "BarSpec",
    "HistogramSpec",
    "Level",
    "LineSpec",
    "Marker",
    "PointSpec",
    "XYLine",
    "bar_chart",
    "histogram_chart",
    "log_ticks",
    "nice_ticks",
    "scatter_chart",
    "series_chart",
    "series_extent",
    "tick",
    "xy_chart",
]


# ----------------------------------------------------------------------------- bars


@dataclass(frozen=True)
class BarSpec:
    label: str
    value: float
    low: float | None
    high: float | None
    n: int
    baseline: bool
    tooltip: str


def bar_chart(chart_id: str, title: str, desc: str, axis_title: str, bars: Sequence[BarSpec]) -> str:
    """Horizontal bars (one per config) from zero, with 95 % interval whiskers; the baseline hatched."""
    label_w, value_w, row_h, top = 140, 104, 26, 12
    width = 560
    plot_left, plot_right = label_w, width - value_w
    height = top + max(1, len(bars)) * row_h + 46
    svg = Svg(chart_id, "bars", width, height, title, desc)
    hatch = f"{chart_id}-hatch"
    svg.add(
        f'<defs><pattern id="{esc(hatch)}" width="6" height="6" patternUnits="userSpaceOnUse" '
        f'patternTransform="rotate(45)"><rect width="6" height="6" fill="{BASELINE_GREY}"/>'
        f'<line x1="0" y1="0" x2="0" y2="6" stroke="#ffffff" stroke-width="2"/></pattern></defs>'
    )
    highest = max([b.value for b in bars] + [b.high or 0.0 for b in bars] + [0.0])
    ticks = nice_ticks(0.0, highest or 1.0)
    scale_max = ticks[-1]

    def to_x(value: float) -> float:
        return plot_left + (max(0.0, value) / scale_max) * (plot_right - plot_left)

    bottom = top + len(bars) * row_h + 4
    x_axis(svg, ticks, to_x, top, bottom, tick, axis_title)
    for i, bar in enumerate(bars):
        y = top + i * row_h + 5
        centre = y + 8
        name = bar.label if len(bar.label) <= 16 else bar.label[:15] + "…"
        svg.text(
            label_w - 8,
            centre + 4,
            name,
            anchor="end",
            cls="bar-label baseline-label" if bar.baseline else "bar-label",
        )
        fill = f"url(#{esc(hatch)})" if bar.baseline else BLUE
        x1 = to_x(bar.value)
        svg.add(
            tag(
                "rect",
                bar.tooltip,
                class_="bar baseline" if bar.baseline else "bar",
                data_config=bar.label,
                x=float(plot_left),
                y=float(y),
                width=max(0.5, x1 - plot_left),
                height=16,
                fill=fill,
                stroke=INK if bar.baseline else BLUE,
                stroke_width=1 if bar.baseline else 0,
            )
        )
        end = x1
        if bar.low is not None and bar.high is not None and bar.n > 1:
            lo, hi = to_x(bar.low), to_x(bar.high)
            whisker = (
                f"M{coord(lo)} {coord(centre)}H{coord(hi)}"
                f"M{coord(lo)} {coord(centre - 5)}V{coord(centre + 5)}"
                f"M{coord(hi)} {coord(centre - 5)}V{coord(centre + 5)}"
            )
            interval = f"95 % confidence interval: {num(bar.low)} to {num(bar.high)}"
            svg.add(tag("path", interval, class_="ci", d=whisker, stroke=INK, stroke_width=1.5, fill="none"))
            end = max(end, hi)
        note = num(bar.value) + ("  (1 run)" if bar.n < 2 else "")
        svg.text(end + 6, centre + 4, note, cls="bar-value")
    middle = (top + bottom) / 2  # the categories' axis: one bar per config, named on its left
    svg.add('<g class="axis axis-y">')
    svg.text(
        12,
        middle,
        "config",
        anchor="middle",
        cls="axis-title",
        extra=f' transform="rotate(-90 12 {coord(middle)})"',
    )
    svg.add("</g>")
    return svg.render()


# ----------------------------------------------------------------------------- histograms


@dataclass(frozen=True)
class HistogramSpec:
    buckets: Sequence[tuple[float, int]]
    markers: Sequence[tuple[str, float]]  # (p50 / p95 / p99, us)


STEP = 2 ** (1 / 4)


def histogram_chart(
    chart_id: str, title: str, desc: str, spec: HistogramSpec, x_range: tuple[float, float], y_max_pct: float
) -> str:
    """Share of I/O per latency bucket on a log axis (shared across a workload's configs), with
    p50/p95/p99 markers."""
    width, height = 360, 196
    left, right, top, bottom = 62, width - 10, 24, height - 44
    svg = Svg(chart_id, "histogram", width, height, title, desc)
    low, high = x_range
    lo_log, hi_log = math.log10(low), math.log10(high)

    def to_x(us: float) -> float:
        return left + (math.log10(max(us, low)) - lo_log) / (hi_log - lo_log) * (right - left)

    y_ticks = nice_ticks(0.0, y_max_pct or 1.0, 4)

    def to_y(pct: float) -> float:
        return bottom - pct / y_ticks[-1] * (bottom - top)

    x_ticks = [t for t in log_ticks(low, high) if low <= t <= high] or [low, high]
    x_axis(svg, x_ticks, to_x, top, bottom, latency_label, "latency (log scale)")
    y_axis(svg, y_ticks, to_y, left, right, lambda v: f"{tick(v)} %", "share of I/O")
    total = sum(count for _, count in spec.buckets) or 1
    path = []
    for le, count in spec.buckets:
        if count <= 0:
            continue
        x0, x1 = to_x(le / STEP), to_x(le)
        path.append(
            f"M{coord(x0)} {coord(bottom)}V{coord(to_y(count / total * 100))}H{coord(x1)}V{coord(bottom)}Z"
        )
    svg.add(tag("path", class_="hist", d="".join(path), fill=SKY, stroke=BLUE, stroke_width=0.6))
    for i, (name, us) in enumerate(spec.markers):
        x = to_x(us)
        strong = name == "p95"
        svg.add(
            tag(
                "line",
                f"{name} {latency_label(us)}",
                class_=f"marker marker-{name}",
                x1=x,
                y1=float(top),
                x2=x,
                y2=float(bottom),
                stroke=VERMILLION if strong else INK,
                stroke_width=1.5 if strong else 1,
                stroke_dasharray="" if strong else "3 2",
            )
        )
        svg.text(x + 3, top + 10 + i * 12, name, cls="marker-label")
    return svg.render()


# ----------------------------------------------------------------------------- time series


@dataclass(frozen=True)
class LineSpec:
    label: str
    t0_s: float
    interval_s: float
    values: Sequence[float | None]
    knee_s: float | None


def series_extent(lines: Sequence[LineSpec]) -> tuple[float, float]:
    """(last second, highest value) of the lines."""
    x_end = max([ln.t0_s + len(ln.values) * ln.interval_s for ln in lines] + [1.0])
    highest = max([v for ln in lines for v in ln.values if v is not None] + [0.0])
    return x_end, highest


def _time_label(seconds: float, minutes: bool) -> str:
    return f"{tick(seconds / 60)} min" if minutes else f"{tick(seconds)} s"


def series_chart(
    chart_id: str,
    title: str,
    desc: str,
    lines: Sequence[LineSpec],
    y_title: str,
    *,
    x_max: float | None = None,
    y_max: float | None = None,
) -> str:
    """Total IOPS over the phase, one line per repetition; burst knees as labelled vertical markers.
    ``x_max`` / ``y_max`` share the axes of a workload's charts so configs compare at a glance."""
    width = 560
    legend_h = 16 * math.ceil(len(lines) / 3)
    height = 212 + legend_h
    left, right, top, bottom = 62, width - 14, 22, 166
    svg = Svg(chart_id, "timeseries", width, height, title, desc)
    x_end = x_max or series_extent(lines)[0]
    highest = y_max or series_extent(lines)[1]
    minutes = x_end > 900
    x_ticks = nice_ticks(0.0, x_end / 60 if minutes else x_end)
    if minutes:
        x_ticks = [t * 60 for t in x_ticks]
    y_ticks = nice_ticks(0.0, highest or 1.0, 4)

    x_scale = (right - left) / x_ticks[-1]
    y_scale = (bottom - top) / y_ticks[-1]

    def to_x(t: float) -> float:
        return left + t * x_scale

    def to_y(v: float) -> float:
        return bottom - v * y_scale

    x_axis(svg, x_ticks, to_x, top, bottom, lambda t: _time_label(t, minutes), "time into the phase")
    y_axis(svg, y_ticks, to_y, left, right, tick, y_title)
    for i, line in enumerate(lines):
        colour, dash = LINE_COLOURS[i % len(LINE_COLOURS)], LINE_DASHES[i % len(LINE_DASHES)]
        # one path, pen lifted over gaps; whole-pixel coordinates inline (the hot loop of a large report)
        segments: list[str] = []
        pen_down = False
        x0 = left + (line.t0_s + (line.interval_s - 1) / 2) * x_scale
        dx = line.interval_s * x_scale
        for j, value in enumerate(line.values):
            if value is None:
                pen_down = False
                continue
            segments.append(f"{'L' if pen_down else 'M'}{x0 + j * dx:.0f} {bottom - value * y_scale:.0f}")
            pen_down = True
        svg.add(
            tag(
                "path",
                line.label,
                class_="series-line",
                d="".join(segments),
                fill="none",
                stroke=colour,
                stroke_width=1.6,
                stroke_dasharray=dash,
            )
        )
    legend(svg, [line.label for line in lines], float(left), float(right), float(bottom + 48))
    knees: dict[float, list[str]] = {}
    for line in lines:
        if line.knee_s is not None:
            knees.setdefault(line.knee_s, []).append(line.label)
    for k, (knee, which) in enumerate(sorted(knees.items())):
        x = to_x(knee)
        why = f"burst knee of {', '.join(which)} at {num(knee)} s: credits ran out, the rate fell to baseline"
        svg.add(
            tag(
                "line",
                why,
                class_="knee",
                x1=x,
                y1=float(top),
                x2=x,
                y2=float(bottom),
                stroke=INK,
                stroke_width=1.2,
                stroke_dasharray="5 3",
            )
        )
        anchor = "end" if x > (left + right) / 2 else "start"
        label = f"burst knee {_time_label(knee, minutes)}" + (f" ({which[0]})" if len(lines) > 1 else "")
        svg.text(
            x + (-4 if anchor == "end" else 4), top + 10 + k * 12, label, anchor=anchor, cls="knee-label"
        )
    return svg.render()


# ----------------------------------------------------------------------------- scatter


@dataclass(frozen=True)
class PointSpec:
    label: str
    x: float
    y: float
    frontier: bool
    baseline: bool
    tooltip: str


def scatter_chart(
    chart_id: str,
    title: str,
    desc: str,
    points: Sequence[PointSpec],
    x_title: str,
    y_title: str,
    higher_is_better: bool,
    x_label: Callable[[float], str],
) -> str:
    """Monthly cost against a metric; the Pareto frontier as a step line through its points."""
    width, height = 560, 320
    left, right, top, bottom = 70, width - 24, 20, height - 50
    svg = Svg(chart_id, "scatter", width, height, title, desc)
    costs = [p.x for p in points] or [0.0, 1.0]
    spread = (max(costs) - min(costs)) or max(costs) or 1.0
    x_ticks = nice_ticks(max(0.0, min(costs) - spread * 0.12), max(costs) + spread * 0.12, 5)
    y_ticks = nice_ticks(0.0, max([p.y for p in points] + [0.0]) * 1.05 or 1.0, 4)

    def to_x(v: float) -> float:
        return left + (v - x_ticks[0]) / (x_ticks[-1] - x_ticks[0]) * (right - left)

    def to_y(v: float) -> float:
        return bottom - v / y_ticks[-1] * (bottom - top)

    x_axis(svg, x_ticks, to_x, top, bottom, x_label, x_title)
    y_axis(svg, y_ticks, to_y, left, right, tick, y_title)
    frontier = sorted(
        (p for p in points if p.frontier), key=lambda p: (p.x, -p.y if higher_is_better else p.y)
    )
    if frontier:
        steps = [f"M{coord(to_x(frontier[0].x))} {coord(to_y(frontier[0].y))}"]
        steps += [f"H{coord(to_x(p.x))}V{coord(to_y(p.y))}" for p in frontier[1:]]
        names = ", ".join(p.label for p in frontier)
        svg.add(
            tag(
                "path",
                f"Pareto frontier: {names}",
                class_="frontier-line",
                d="".join(steps),
                fill="none",
                stroke=VERMILLION,
                stroke_width=1.8,
            )
        )
    label_all = len(points) <= 8
    for point in points:
        x, y = to_x(point.x), to_y(point.y)
        cls = "point frontier" if point.frontier else "point"
        fill = VERMILLION if point.frontier else "#ffffff"
        stroke = VERMILLION if point.frontier else MUTED
        if point.baseline:  # a square, so the baseline is not told by colour alone
            marker = tag(
                "rect",
                point.tooltip,
                class_=f"{cls} baseline",
                x=x - 5,
                y=y - 5,
                width=10,
                height=10,
                fill=fill,
                stroke=INK,
                stroke_width=1.5,
            )
        else:
            marker = tag(
                "circle",
                point.tooltip,
                class_=cls,
                cx=x,
                cy=y,
                r=5,
                fill=fill,
                stroke=stroke,
                stroke_width=1.5,
            )
        svg.add(marker)
        if label_all or point.frontier or point.baseline:
            text = point.label if len(point.label) <= 20 else point.label[:19] + "…"
            anchor = "end" if x > right - 90 else "start"
            svg.text(
                x + (-8 if anchor == "end" else 8),
                y - 7,
                text + (" (baseline)" if point.baseline else ""),
                anchor=anchor,
                cls="point-label",
            )
    return svg.render()

"""The x-y chart of ``report.svg``: lines of points against a numeric x, with a shaded band,
vertical markers (a change point, a knee), a highlighted point and horizontal levels (a latency
target): what the trends, the latency-vs-load curves and the latency-SLA searches draw.
``report.svg`` re-exports it.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from storagebench.report.svg_kit import (
    INK,
    LINE_COLOURS,
    LINE_DASHES,
    LOG_SLACK,
    SKY,
    VERMILLION,
    Svg,
    coord,
    legend,
    log_ticks,
    nice_ticks,
    tag,
    tick,
    x_axis,
    y_axis,
)


@dataclass(frozen=True)
class XYLine:
    """A line through (x, y) points; each point's tooltip in ``tooltips`` (same order); points
    whose ``hollow`` entry is True are drawn as rings (class ``missed``: a probe that missed)."""

    label: str
    points: Sequence[tuple[float, float]]
    tooltips: Sequence[str]
    hollow: Sequence[bool] = ()


@dataclass(frozen=True)
class Marker:
    """A labelled vertical line at ``x`` (a change point, a knee)."""

    x: float
    label: str
    tooltip: str
    cls: str


@dataclass(frozen=True)
class Level:
    """A labelled horizontal line at ``y`` (a latency target)."""

    y: float
    label: str
    tooltip: str
    cls: str


def xy_chart(
    chart_id: str,
    kind: str,
    title: str,
    desc: str,
    lines: Sequence[XYLine],
    *,
    x_ticks: Sequence[float],
    x_label: Callable[[float], str],
    x_title: str,
    y_title: str,
    y_label: Callable[[float], str] = tick,
    log2_x: bool = False,
    band: tuple[float, float] | None = None,
    band_tooltip: str = "",
    markers: Sequence[Marker] = (),
    highlight: tuple[float, float, str] | None = None,
    highlight_cls: str = "current",
    y_from_zero: bool = False,
    levels: Sequence[Level] = (),
    log_y: bool = False,
) -> str:
    """Lines of points against a numeric x (log2 for loads that double), with an optional shaded
    band (``band``: y from-to, class ``band``), vertical ``markers``, one ``highlight``ed point
    (x, y, label: this run; class ``highlight_cls``) and horizontal ``levels``; a line of a single
    point is drawn as its point only. The y axis starts at 0 with ``y_from_zero``,
    else near the lowest value (a trend's changes are small against its level), or is logarithmic
    (powers of ten) with ``log_y`` for values over orders of magnitude (all y must be > 0). Marks:
    ``xy-line``, ``xy-point``, ``band``, the markers' and levels' classes, ``highlight_cls``."""
    width = 460
    legend_h = 16 * math.ceil(len(lines) / 3) if len(lines) > 1 else 0
    height = 232 + legend_h
    left, right, top, bottom = 64, width - 18, 24, 176
    svg = Svg(chart_id, kind, width, height, title, desc)
    ys = [y for line in lines for _, y in line.points] + (list(band) if band is not None else [])
    ys = (ys + [level.y for level in levels]) or [0.0, 1.0]
    low, high = min(ys), max(ys)
    if log_y:
        if low <= 0:
            raise ValueError(f"log_y: the lowest y is {low:g}; a logarithmic axis needs every y > 0")
        y_ticks = log_ticks(low, high, slack=LOG_SLACK)
    else:
        pad = (high - low) * 0.12 or abs(high) * 0.1 or 1.0
        floor = 0.0 if y_from_zero else (max(0.0, low - pad) if low >= 0 else low - pad)
        y_ticks = nice_ticks(floor, high + pad, 4)

    def fy(v: float) -> float:
        return math.log10(max(v, y_ticks[0])) if log_y else v

    def fx(v: float) -> float:
        return math.log2(v) if log2_x else v

    x_low, x_high = fx(x_ticks[0]), fx(x_ticks[-1])
    x_span = (x_high - x_low) or 1.0
    inset = 14.0

    def to_x(v: float) -> float:
        return left + inset + (fx(v) - x_low) / x_span * (right - left - 2 * inset)

    def to_y(v: float) -> float:
        y_low, y_high = fy(y_ticks[0]), fy(y_ticks[-1])
        return bottom - (fy(v) - y_low) / ((y_high - y_low) or 1.0) * (bottom - top)

    if band is not None:
        y0, y1 = to_y(max(band[0], y_ticks[0])), to_y(min(band[1], y_ticks[-1]))
        svg.add(
            tag(
                "rect",
                band_tooltip or None,
                class_="band",
                x=float(left),
                y=y1,
                width=float(right - left),
                height=max(0.0, y0 - y1),
                fill=SKY,
                fill_opacity="0.18",
            )
        )
    x_axis(svg, x_ticks, to_x, top, bottom, x_label, x_title)
    y_axis(svg, y_ticks, to_y, left, right, y_label, y_title)
    for k, marker in enumerate(markers):
        x = to_x(marker.x)
        svg.add(
            tag(
                "line",
                marker.tooltip,
                class_=marker.cls,
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
        svg.text(
            x + (-4 if anchor == "end" else 4),
            top + 10 + k * 12,
            marker.label,
            anchor=anchor,
            cls="marker-label",
        )
    for level in levels:
        y = to_y(level.y)
        svg.add(
            tag(
                "line",
                level.tooltip,
                class_=level.cls,
                x1=float(left),
                y1=y,
                x2=float(right),
                y2=y,
                stroke=VERMILLION,
                stroke_width=1.4,
                stroke_dasharray="6 3",
            )
        )
        svg.text(left + 4, y - 5, level.label, cls="marker-label")  # clear of the answer, right of centre
    for i, line in enumerate(lines):
        colour, dash = LINE_COLOURS[i % len(LINE_COLOURS)], LINE_DASHES[i % len(LINE_DASHES)]
        path = "".join(
            f"{'L' if j else 'M'}{coord(to_x(x))} {coord(to_y(y))}" for j, (x, y) in enumerate(line.points)
        )
        if len(line.points) > 1:
            svg.add(
                tag(
                    "path",
                    line.label,
                    class_="xy-line",
                    d=path,
                    fill="none",
                    stroke=colour,
                    stroke_width=1.8,
                    stroke_dasharray=dash,
                )
            )
        hollow = list(line.hollow) or [False] * len(line.points)
        for (x, y), tooltip, ring in zip(line.points, line.tooltips, hollow, strict=True):
            svg.add(
                tag(
                    "circle",
                    tooltip,
                    class_="xy-point missed" if ring else "xy-point",
                    cx=to_x(x),
                    cy=to_y(y),
                    r=3.0,
                    fill="#ffffff" if ring else colour,
                    stroke=colour if ring else None,
                    stroke_width=1.5 if ring else None,
                )
            )
    if highlight is not None:
        x, y = to_x(highlight[0]), to_y(highlight[1])
        svg.add(
            tag(
                "circle",
                highlight[2],
                class_=highlight_cls,
                cx=x,
                cy=y,
                r=6.5,
                fill="none",
                stroke=INK,
                stroke_width=2.0,
            )
        )
        anchor = "end" if x > (left + right) / 2 else "start"
        svg.text(x + (-9 if anchor == "end" else 9), y - 8, highlight[2], anchor=anchor, cls="point-label")
    if len(lines) > 1:
        legend(svg, [line.label for line in lines], float(left), float(right), float(bottom + 48))
    return svg.render()

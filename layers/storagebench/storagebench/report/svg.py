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
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from html import escape

from storagebench.report.fmt import num

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

BLUE, ORANGE, GREEN, PURPLE, SKY, VERMILLION, YELLOW, BLACK = (
    "#0072B2",
    "#E69F00",
    "#009E73",
    "#CC79A7",
    "#56B4E9",
    "#D55E00",
    "#F0E442",
    "#000000",
)
LINE_COLOURS = (BLUE, VERMILLION, GREEN, PURPLE, ORANGE, SKY, BLACK)
LINE_DASHES = ("", "6 3", "2 2", "8 3 2 3", "4 4", "1 3", "10 4")
BASELINE_GREY = "#6e7781"
INK = "#1f2328"
MUTED = "#57606a"
GRID = "#e4e7eb"
LOG_SLACK = 0.02
"""How far past a power of ten a logarithmic axis stretches rather than open another decade."""
FONT = 11


def _e(text: object) -> str:
    return escape(str(text), quote=True)


def _f(value: float) -> str:
    """A coordinate: one decimal, no trailing zeros."""
    text = f"{value:.1f}"
    return text[:-2] if text.endswith(".0") else text


def nice_ticks(low: float, high: float, count: int = 5) -> list[float]:
    """About ``count`` round tick values covering [low, high] (1, 2, 2.5, 5 x 10^k steps)."""
    if not (math.isfinite(low) and math.isfinite(high)):
        return [0.0, 1.0]
    if high <= low:
        high = low + (abs(low) or 1.0)
    raw = (high - low) / max(1, count)
    magnitude = 10 ** math.floor(math.log10(raw))
    step = next(m * magnitude for m in (1, 2, 2.5, 5, 10) if m * magnitude >= raw * 0.999)
    first = math.floor(low / step + 1e-9) * step
    ticks = []
    value = first
    while value < high + step * 0.999:
        ticks.append(round(value, 12))
        value += step
        if len(ticks) > 50:
            break
    return ticks


def tick(value: float) -> str:
    """A tick label: ``num`` without trailing zeros (0.25, not 0.250)."""
    text = num(value)
    return text.rstrip("0").rstrip(".") if "." in text else text


def log_ticks(low: float, high: float, slack: float = 0.0) -> list[float]:
    """Powers of ten covering [low, high] (both > 0); with ``slack`` (e.g. 0.02) a value within that
    fraction past a power of ten does not open another decade (99.97 IOPS starts at 100, not 10)."""
    first = math.floor(math.log10(low * (1 + slack)))
    last = max(first + 1, math.ceil(math.log10(high / (1 + slack))))
    return [10.0**k for k in range(first, last + 1)]


def latency_label(us: float) -> str:
    """An axis label: 100 µs, 1 ms, 10 ms, 1 s."""
    if us >= 1_000_000:
        return f"{tick(us / 1_000_000)} s"
    if us >= 1000:
        return f"{tick(us / 1000)} ms"
    return f"{tick(us)} µs"


_ATTRIBUTE = {
    "class_": "class",
    "stroke_width": "stroke-width",
    "stroke_dasharray": "stroke-dasharray",
    "fill_opacity": "fill-opacity",
}


def _tag(name: str, tooltip: str | None = None, **attrs: object) -> str:
    """One element; ``class_`` is ``class``, other underscores become hyphens (``stroke_width``).
    Floats are written with one decimal; None and '' attributes are left out."""
    parts = []
    for key, value in attrs.items():
        if value is None or value == "":
            continue
        if isinstance(value, float):
            shown = _f(value)
        elif isinstance(value, int):
            shown = str(value)
        else:
            shown = _e(value)
        parts.append(f' {_ATTRIBUTE.get(key) or key.rstrip("_").replace("_", "-")}="{shown}"')
    rendered = "".join(parts)
    if tooltip is None:
        return f"<{name}{rendered}/>"
    return f"<{name}{rendered}><title>{_e(tooltip)}</title></{name}>"


class _Svg:
    def __init__(self, chart_id: str, kind: str, width: int, height: int, title: str, desc: str) -> None:
        self.id = chart_id
        self.kind = kind
        self.width = width
        self.height = height
        self.title = title
        self.desc = desc
        self.parts: list[str] = []

    def add(self, markup: str) -> None:
        self.parts.append(markup)

    def text(
        self, x: float, y: float, content: str, *, anchor: str = "start", cls: str = "", extra: str = ""
    ) -> None:
        attrs = f' class="{cls}"' if cls else ""
        self.add(f'<text x="{_f(x)}" y="{_f(y)}" text-anchor="{anchor}"{attrs}{extra}>{_e(content)}</text>')

    def render(self) -> str:
        head = (
            f'<svg xmlns="http://www.w3.org/2000/svg" class="chart chart-{self.kind}" '
            f'data-chart="{self.kind}" id="{_e(self.id)}" viewBox="0 0 {self.width} {self.height}" '
            f'width="{self.width}" height="{self.height}" role="img" '
            f'aria-labelledby="{_e(self.id)}-title {_e(self.id)}-desc" font-size="{FONT}">'
            f'<title id="{_e(self.id)}-title">{_e(self.title)}</title>'
            f'<desc id="{_e(self.id)}-desc">{_e(self.desc)}</desc>'
        )
        return head + "".join(self.parts) + "</svg>"


def _x_axis(
    svg: _Svg,
    ticks: Sequence[float],
    to_x: Callable[[float], float],
    y_top: float,
    y_bottom: float,
    label: Callable[[float], str],
    title: str,
) -> None:
    svg.add('<g class="axis axis-x">')
    top, bottom, notch = _f(y_top), _f(y_bottom), _f(y_bottom + 4)
    for value in ticks:
        x = _f(to_x(value))
        svg.add(
            f'<line class="grid" x1="{x}" y1="{top}" x2="{x}" y2="{bottom}" stroke="{GRID}"/>'
            f'<line x1="{x}" y1="{bottom}" x2="{x}" y2="{notch}" stroke="{MUTED}"/>'
        )
        svg.text(to_x(value), y_bottom + 15, label(value), anchor="middle", cls="tick")
    left, right = to_x(ticks[0]), to_x(ticks[-1])
    svg.add(_tag("line", x1=left, y1=y_bottom, x2=right, y2=y_bottom, stroke=MUTED))
    svg.text((left + right) / 2, y_bottom + 31, title, anchor="middle", cls="axis-title")
    svg.add("</g>")


def _y_axis(
    svg: _Svg,
    ticks: Sequence[float],
    to_y: Callable[[float], float],
    x_left: float,
    x_right: float,
    label: Callable[[float], str],
    title: str,
) -> None:
    svg.add('<g class="axis axis-y">')
    left, right = _f(x_left), _f(x_right)
    for value in ticks:
        y = to_y(value)
        svg.add(f'<line class="grid" x1="{left}" y1="{_f(y)}" x2="{right}" y2="{_f(y)}" stroke="{GRID}"/>')
        svg.text(x_left - 6, y + 4, label(value), anchor="end", cls="tick")
    top, bottom = to_y(ticks[-1]), to_y(ticks[0])
    svg.add(_tag("line", x1=x_left, y1=top, x2=x_left, y2=bottom, stroke=MUTED))
    middle = (top + bottom) / 2
    svg.text(
        12,
        middle,
        title,
        anchor="middle",
        cls="axis-title",
        extra=f' transform="rotate(-90 12 {_f(middle)})"',
    )
    svg.add("</g>")


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
    svg = _Svg(chart_id, "bars", width, height, title, desc)
    hatch = f"{chart_id}-hatch"
    svg.add(
        f'<defs><pattern id="{_e(hatch)}" width="6" height="6" patternUnits="userSpaceOnUse" '
        f'patternTransform="rotate(45)"><rect width="6" height="6" fill="{BASELINE_GREY}"/>'
        f'<line x1="0" y1="0" x2="0" y2="6" stroke="#ffffff" stroke-width="2"/></pattern></defs>'
    )
    highest = max([b.value for b in bars] + [b.high or 0.0 for b in bars] + [0.0])
    ticks = nice_ticks(0.0, highest or 1.0)
    scale_max = ticks[-1]

    def to_x(value: float) -> float:
        return plot_left + (max(0.0, value) / scale_max) * (plot_right - plot_left)

    bottom = top + len(bars) * row_h + 4
    _x_axis(svg, ticks, to_x, top, bottom, tick, axis_title)
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
        fill = f"url(#{_e(hatch)})" if bar.baseline else BLUE
        x1 = to_x(bar.value)
        svg.add(
            _tag(
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
                f"M{_f(lo)} {_f(centre)}H{_f(hi)}M{_f(lo)} {_f(centre - 5)}V{_f(centre + 5)}"
                f"M{_f(hi)} {_f(centre - 5)}V{_f(centre + 5)}"
            )
            interval = f"95 % confidence interval: {num(bar.low)} to {num(bar.high)}"
            svg.add(_tag("path", interval, class_="ci", d=whisker, stroke=INK, stroke_width=1.5, fill="none"))
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
        extra=f' transform="rotate(-90 12 {_f(middle)})"',
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
    svg = _Svg(chart_id, "histogram", width, height, title, desc)
    low, high = x_range
    lo_log, hi_log = math.log10(low), math.log10(high)

    def to_x(us: float) -> float:
        return left + (math.log10(max(us, low)) - lo_log) / (hi_log - lo_log) * (right - left)

    y_ticks = nice_ticks(0.0, y_max_pct or 1.0, 4)

    def to_y(pct: float) -> float:
        return bottom - pct / y_ticks[-1] * (bottom - top)

    x_ticks = [t for t in log_ticks(low, high) if low <= t <= high] or [low, high]
    _x_axis(svg, x_ticks, to_x, top, bottom, latency_label, "latency (log scale)")
    _y_axis(svg, y_ticks, to_y, left, right, lambda v: f"{tick(v)} %", "share of I/O")
    total = sum(count for _, count in spec.buckets) or 1
    path = []
    for le, count in spec.buckets:
        if count <= 0:
            continue
        x0, x1 = to_x(le / STEP), to_x(le)
        path.append(f"M{_f(x0)} {_f(bottom)}V{_f(to_y(count / total * 100))}H{_f(x1)}V{_f(bottom)}Z")
    svg.add(_tag("path", class_="hist", d="".join(path), fill=SKY, stroke=BLUE, stroke_width=0.6))
    for i, (name, us) in enumerate(spec.markers):
        x = to_x(us)
        strong = name == "p95"
        svg.add(
            _tag(
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
    svg = _Svg(chart_id, "timeseries", width, height, title, desc)
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

    _x_axis(svg, x_ticks, to_x, top, bottom, lambda t: _time_label(t, minutes), "time into the phase")
    _y_axis(svg, y_ticks, to_y, left, right, tick, y_title)
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
            _tag(
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
    _legend(svg, [line.label for line in lines], float(left), float(right), float(bottom + 48))
    knees: dict[float, list[str]] = {}
    for line in lines:
        if line.knee_s is not None:
            knees.setdefault(line.knee_s, []).append(line.label)
    for k, (knee, which) in enumerate(sorted(knees.items())):
        x = to_x(knee)
        why = f"burst knee of {', '.join(which)} at {num(knee)} s: credits ran out, the rate fell to baseline"
        svg.add(
            _tag(
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
    svg = _Svg(chart_id, "scatter", width, height, title, desc)
    costs = [p.x for p in points] or [0.0, 1.0]
    spread = (max(costs) - min(costs)) or max(costs) or 1.0
    x_ticks = nice_ticks(max(0.0, min(costs) - spread * 0.12), max(costs) + spread * 0.12, 5)
    y_ticks = nice_ticks(0.0, max([p.y for p in points] + [0.0]) * 1.05 or 1.0, 4)

    def to_x(v: float) -> float:
        return left + (v - x_ticks[0]) / (x_ticks[-1] - x_ticks[0]) * (right - left)

    def to_y(v: float) -> float:
        return bottom - v / y_ticks[-1] * (bottom - top)

    _x_axis(svg, x_ticks, to_x, top, bottom, x_label, x_title)
    _y_axis(svg, y_ticks, to_y, left, right, tick, y_title)
    frontier = sorted(
        (p for p in points if p.frontier), key=lambda p: (p.x, -p.y if higher_is_better else p.y)
    )
    if frontier:
        steps = [f"M{_f(to_x(frontier[0].x))} {_f(to_y(frontier[0].y))}"]
        steps += [f"H{_f(to_x(p.x))}V{_f(to_y(p.y))}" for p in frontier[1:]]
        names = ", ".join(p.label for p in frontier)
        svg.add(
            _tag(
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
            marker = _tag(
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
            marker = _tag(
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


# ----------------------------------------------------------------------------- x-y lines


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


def _legend(svg: _Svg, labels: Sequence[str], left: float, right: float, y: float) -> None:
    x = left
    for i, label in enumerate(labels):
        colour, dash = LINE_COLOURS[i % len(LINE_COLOURS)], LINE_DASHES[i % len(LINE_DASHES)]
        slot = 40 + 6.2 * len(label)
        if x + slot > right and x > left:
            x, y = left, y + 16
        svg.add(
            _tag(
                "line",
                x1=x,
                y1=y - 4,
                x2=x + 22,
                y2=y - 4,
                stroke=colour,
                stroke_width=2,
                stroke_dasharray=dash,
            )
        )
        svg.text(x + 28, y, label, cls="legend")
        x += slot


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
    svg = _Svg(chart_id, kind, width, height, title, desc)
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
            _tag(
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
    _x_axis(svg, x_ticks, to_x, top, bottom, x_label, x_title)
    _y_axis(svg, y_ticks, to_y, left, right, y_label, y_title)
    for k, marker in enumerate(markers):
        x = to_x(marker.x)
        svg.add(
            _tag(
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
            _tag(
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
            f"{'L' if j else 'M'}{_f(to_x(x))} {_f(to_y(y))}" for j, (x, y) in enumerate(line.points)
        )
        if len(line.points) > 1:
            svg.add(
                _tag(
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
                _tag(
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
            _tag(
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
        _legend(svg, [line.label for line in lines], float(left), float(right), float(bottom + 48))
    return svg.render()

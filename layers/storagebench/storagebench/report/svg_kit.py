"""What every chart of ``report.svg`` draws with: the Okabe-Ito palette and dashes, escaping and
coordinates, linear and logarithmic ticks, one element with its tooltip (``tag``), the canvas
(``Svg``), the axes and the legend.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from html import escape

from storagebench.report.fmt import num

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


def esc(text: object) -> str:
    return escape(str(text), quote=True)


def coord(value: float) -> str:
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


def tag(name: str, tooltip: str | None = None, **attrs: object) -> str:
    """One element; ``class_`` is ``class``, other underscores become hyphens (``stroke_width``).
    Floats are written with one decimal; None and '' attributes are left out."""
    parts = []
    for key, value in attrs.items():
        if value is None or value == "":
            continue
        if isinstance(value, float):
            shown = coord(value)
        elif isinstance(value, int):
            shown = str(value)
        else:
            shown = esc(value)
        parts.append(f' {_ATTRIBUTE.get(key) or key.rstrip("_").replace("_", "-")}="{shown}"')
    rendered = "".join(parts)
    if tooltip is None:
        return f"<{name}{rendered}/>"
    return f"<{name}{rendered}><title>{esc(tooltip)}</title></{name}>"


class Svg:
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
        self.add(
            f'<text x="{coord(x)}" y="{coord(y)}" text-anchor="{anchor}"{attrs}{extra}>{esc(content)}</text>'
        )

    def render(self) -> str:
        head = (
            f'<svg xmlns="http://www.w3.org/2000/svg" class="chart chart-{self.kind}" '
            f'data-chart="{self.kind}" id="{esc(self.id)}" viewBox="0 0 {self.width} {self.height}" '
            f'width="{self.width}" height="{self.height}" role="img" '
            f'aria-labelledby="{esc(self.id)}-title {esc(self.id)}-desc" font-size="{FONT}">'
            f'<title id="{esc(self.id)}-title">{esc(self.title)}</title>'
            f'<desc id="{esc(self.id)}-desc">{esc(self.desc)}</desc>'
        )
        return head + "".join(self.parts) + "</svg>"


def x_axis(
    svg: Svg,
    ticks: Sequence[float],
    to_x: Callable[[float], float],
    y_top: float,
    y_bottom: float,
    label: Callable[[float], str],
    title: str,
) -> None:
    svg.add('<g class="axis axis-x">')
    top, bottom, notch = coord(y_top), coord(y_bottom), coord(y_bottom + 4)
    for value in ticks:
        x = coord(to_x(value))
        svg.add(
            f'<line class="grid" x1="{x}" y1="{top}" x2="{x}" y2="{bottom}" stroke="{GRID}"/>'
            f'<line x1="{x}" y1="{bottom}" x2="{x}" y2="{notch}" stroke="{MUTED}"/>'
        )
        svg.text(to_x(value), y_bottom + 15, label(value), anchor="middle", cls="tick")
    left, right = to_x(ticks[0]), to_x(ticks[-1])
    svg.add(tag("line", x1=left, y1=y_bottom, x2=right, y2=y_bottom, stroke=MUTED))
    svg.text((left + right) / 2, y_bottom + 31, title, anchor="middle", cls="axis-title")
    svg.add("</g>")


def y_axis(
    svg: Svg,
    ticks: Sequence[float],
    to_y: Callable[[float], float],
    x_left: float,
    x_right: float,
    label: Callable[[float], str],
    title: str,
) -> None:
    svg.add('<g class="axis axis-y">')
    left, right = coord(x_left), coord(x_right)
    for value in ticks:
        y = to_y(value)
        svg.add(
            f'<line class="grid" x1="{left}" y1="{coord(y)}" x2="{right}" y2="{coord(y)}" stroke="{GRID}"/>'
        )
        svg.text(x_left - 6, y + 4, label(value), anchor="end", cls="tick")
    top, bottom = to_y(ticks[-1]), to_y(ticks[0])
    svg.add(tag("line", x1=x_left, y1=top, x2=x_left, y2=bottom, stroke=MUTED))
    middle = (top + bottom) / 2
    svg.text(
        12,
        middle,
        title,
        anchor="middle",
        cls="axis-title",
        extra=f' transform="rotate(-90 12 {coord(middle)})"',
    )
    svg.add("</g>")


def legend(svg: Svg, labels: Sequence[str], left: float, right: float, y: float) -> None:
    x = left
    for i, label in enumerate(labels):
        colour, dash = LINE_COLOURS[i % len(LINE_COLOURS)], LINE_DASHES[i % len(LINE_DASHES)]
        slot = 40 + 6.2 * len(label)
        if x + slot > right and x > left:
            x, y = left, y + 16
        svg.add(
            tag(
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

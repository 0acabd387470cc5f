"""The HTML report's "Matrix surfaces" section: each config matrix on each workload's headline
metric, as grids along its axes (``report.surfaces``). A cell gives the point's mean, its monthly
cost and its config id; a skipped point says so, with the rule it breaks. Every piece of text from
the data goes through ``html.escape``."""

from __future__ import annotations

from collections.abc import Sequence
from html import escape

from storagebench.report.fmt import DASH, metric_value, usd
from storagebench.report.model import METRIC_INFO, MetricInfo
from storagebench.report.surface_models import Surface, SurfaceCell, SurfaceTable

__all__ = ["SURFACES_INTRO", "surfaces_html"]

SURFACES_INTRO = (
    "Each config matrix of the request, one grid per workload: its headline metric (the mean of the "
    "repetitions) and the monthly cost of every point, the first varied field down, the second "
    "across, one grid per value of any further one. A skipped point broke one of AWS's rules and "
    "was not run (matrix_invalid skip)."
)


def _e(value: object) -> str:
    return escape(str(value), quote=True)


def _cell(metric: MetricInfo, cell: SurfaceCell) -> str:
    if cell.skipped is not None:
        reason = _e(cell.skipped)
        return f'<td class="muted" title="{reason}">skipped<div class="sub">{reason}</div></td>'
    if cell.config_id is None:
        return f'<td class="muted">{DASH}</td>'
    value = (
        f'<span class="v">{_e(metric_value(metric, cell.value))}</span> <small>{_e(metric.unit)}</small>'
        if cell.value is not None
        else f'<span class="muted">{DASH}</span>'
    )
    cost = f"{usd(cell.monthly_usd)}/mo" if cell.monthly_usd is not None else ""
    repetitions = f"n={cell.n}" if cell.n is not None else "no result"
    details = " · ".join(part for part in (cost, repetitions) if part)
    return (
        f'<td class="num" title="{_e(cell.config_id)}">{value}<div class="sub">{_e(details)}</div>'
        f'<div class="sub">{_e(cell.config_id)}</div></td>'
    )


def _table(metric: MetricInfo, table: SurfaceTable) -> str:
    caption = ", ".join(f"{axis} {value}" for axis, value in table.fixed.items())
    corner = table.rows_axis + (f" \\ {table.columns_axis}" if table.columns_axis else "")
    head = f'<th scope="col">{_e(corner)}</th>' + "".join(
        f'<th scope="col" class="num">{_e(column)}</th>' for column in table.columns
    )
    if table.columns_axis is None:
        head += f'<th scope="col" class="num">{_e(metric.label)}</th>'
    body = "".join(
        f'<tr><th scope="row">{_e(row)}</th>{"".join(_cell(metric, cell) for cell in cells)}</tr>'
        for row, cells in zip(table.rows, table.cells, strict=True)
    )
    title = f"<caption>{_e(caption)}</caption>" if caption else ""
    return (
        f'<div class="scroll"><table class="surface">{title}<thead><tr>{head}</tr></thead>'
        f"<tbody>{body}</tbody></table></div>"
    )


def surfaces_html(surfaces: Sequence[Surface]) -> str:
    out = [f"<p>{_e(SURFACES_INTRO)}</p>"]
    for surface in surfaces:
        metric = METRIC_INFO[surface.metric]
        skipped = f"; {surface.skipped} point(s) skipped" if surface.skipped else ""
        out.append(
            f"<h3>{_e(surface.base_id)} · {_e(surface.workload_name)}: {_e(metric.label)} "
            f'({_e(metric.unit)})</h3><p class="sub">axes: {_e(" x ".join(surface.axes))}{_e(skipped)}</p>'
        )
        out += [_table(metric, table) for table in surface.tables]
    return "".join(out)

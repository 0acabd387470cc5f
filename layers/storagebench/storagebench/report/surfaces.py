"""A config matrix read as a surface: the headline result and monthly cost of every point, laid out
along the matrix's axes (``request.matrix``), so that 18 points read as one grid, not 18 configs.

The first varied field runs down the rows, the second across the columns, and each combination of
any further ones gets its own table (gp3 at 3 sizes x 3 IOPS x 2 throughputs: two tables of 3 x 3).
A point the matrix skipped keeps its cell, with the rule it breaks. The points come from the
request's ``MatrixOrigin``s, which only the expansion sets; the figures from the report's config rows,
so a surface cannot disagree with the comparison table.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Sequence
from typing import TYPE_CHECKING

from storagebench.report.surface_models import Surface, SurfaceCell, SurfaceTable
from storagebench.request.matrix_models import MatrixValue

if TYPE_CHECKING:
    from storagebench.report.model import ConfigRow, WorkloadInfo
    from storagebench.request.model import BenchmarkRequest


def _text(value: MatrixValue) -> str:
    return value if isinstance(value, str) else json.dumps(value)


def _key(point: dict[str, MatrixValue], axes: Sequence[str]) -> tuple[str, ...]:
    return tuple(_text(point[axis]) for axis in axes)


def build_surfaces(
    request: BenchmarkRequest | None, rows: Sequence[ConfigRow], workloads: Sequence[WorkloadInfo]
) -> list[Surface]:
    """A surface per matrix with at least one varied field and per workload with a headline metric."""
    if request is None:
        return []
    by_id = {row.config_id: row for row in rows}
    matrices: dict[int, tuple[str, dict[str, list[MatrixValue]]]] = {}
    points: dict[int, dict[tuple[str, ...], SurfaceCell | str]] = {}
    for config in request.configs:
        origin = config.origin
        if origin is None or not origin.axes:
            continue
        matrices.setdefault(origin.config_index, (origin.base_id, origin.axes))
        points.setdefault(origin.config_index, {})[_key(origin.point, list(origin.axes))] = config.id
    skipped_count: dict[int, int] = {}
    for skipped in request.matrix_skipped:
        if skipped.config_index in matrices:
            varied = list(matrices[skipped.config_index][1])
            cell = SurfaceCell(config_id=None, skipped=skipped.reason())
            points[skipped.config_index][_key(skipped.point, varied)] = cell
            skipped_count[skipped.config_index] = skipped_count.get(skipped.config_index, 0) + 1
    surfaces: list[Surface] = []
    for index, (base_id, axes) in sorted(matrices.items()):
        for info in workloads:
            if info.metric is None:
                continue
            surfaces.append(
                Surface(
                    base_id=base_id,
                    workload=info.id,
                    workload_name=info.name,
                    metric=info.metric.name,
                    axes=list(axes),
                    tables=_tables(axes, points[index], by_id, info.id),
                    skipped=skipped_count.get(index, 0),
                )
            )
    return surfaces


def _tables(
    axes: dict[str, list[MatrixValue]],
    points: dict[tuple[str, ...], SurfaceCell | str],
    by_id: dict[str, ConfigRow],
    workload: str,
) -> list[SurfaceTable]:
    names = list(axes)
    values = {axis: [_text(v) for v in axes[axis]] for axis in names}
    rows_axis, columns_axis, fixed_axes = names[0], (names[1] if len(names) > 1 else None), names[2:]
    columns = values[columns_axis] if columns_axis is not None else [""]
    tables: list[SurfaceTable] = []
    for fixed in itertools.product(*(values[axis] for axis in fixed_axes)):
        cells = [
            [
                _cell(
                    points.get((row, *(() if columns_axis is None else (column,)), *fixed)), by_id, workload
                )
                for column in columns
            ]
            for row in values[rows_axis]
        ]
        tables.append(
            SurfaceTable(
                fixed=dict(zip(fixed_axes, fixed, strict=True)),
                rows_axis=rows_axis,
                rows=values[rows_axis],
                columns_axis=columns_axis,
                columns=columns if columns_axis is not None else [],
                cells=cells,
            )
        )
    return tables


def _cell(point: SurfaceCell | str | None, by_id: dict[str, ConfigRow], workload: str) -> SurfaceCell:
    if isinstance(point, SurfaceCell):
        return point  # skipped
    if point is None:  # a point refused for a clash never reaches a run; shown empty
        return SurfaceCell(config_id=None)
    row = by_id.get(point)
    if row is None:
        return SurfaceCell(config_id=point)
    cell = next((c for c in row.cells if c.workload == workload), None)
    value = cell.value if cell is not None else None
    return SurfaceCell(
        config_id=point,
        value=value.mean if value is not None else None,
        n=value.n if value is not None else None,
        monthly_usd=row.monthly_usd,
    )

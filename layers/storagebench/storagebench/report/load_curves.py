"""Sweeps as curves: each config's IOPS and p50/p95/p99 latency against the swept queue depth or
job count, with the knee where latency turns up and the p95 growth per doubling of load
(``analysis.curves``). A sweep produces one record per variant (``iodepth=1``, ``iodepth=4``...);
the report's other sections show each variant as its own measurement, this one joins them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from storagebench.analysis.curves import (
    SWEEP_AXES,
    CurvePoint,
    curve_point,
    latency_curve,
    sweep_load,
    variant_params,
)
from storagebench.analysis.stats import Aggregate
from storagebench.costs.measures import MeasureKey
from storagebench.report.model import Curve, WorkloadInfo

__all__ = ["build_curves", "sweep_axis"]

_Line = tuple[str, str, str, int | None, str]
"""(target, phase, direction, group, the variant's other parameters): what a curve's points share."""


def sweep_axis(keys: Sequence[MeasureKey]) -> str | None:
    """The swept load parameter of a workload's measurements: a ``SWEEP_AXES`` key with two or more
    numeric values, None when the workload is not a load sweep."""
    for axis in SWEEP_AXES:
        values = {variant_params(k.variant).get(axis) for k in keys}
        loads = {load for v in values if v is not None and (load := sweep_load(v)) is not None}
        if len(loads) >= 2:
            return axis
    return None


def _lines(axis: str, aggs: Mapping[MeasureKey, Aggregate], workload: str) -> dict[_Line, list[CurvePoint]]:
    lines: dict[_Line, list[CurvePoint]] = {}
    for key, agg in aggs.items():
        if key.workload != workload or key.direction == "mixed":
            continue
        variant = variant_params(key.variant)
        load = sweep_load(variant.pop(axis, ""))
        if load is None:
            continue
        rest = ",".join(f"{k}={v}" for k, v in sorted(variant.items()))
        lines.setdefault((key.target, key.phase, key.direction, key.group, rest), []).append(
            curve_point(load, agg)
        )
    return lines


def _measurement(line: _Line, several: bool) -> str:
    target, phase, direction, group, rest = line
    parts = [direction]
    if target:
        parts.append(f"target {target}")
    if phase not in ("run", ""):
        parts.append(f"{phase} phase")
    if rest:
        parts.append(rest)
    if several and group is not None:
        parts.append(f"group {group}")
    return ", ".join(parts)


def _worst_p95(points: Sequence[CurvePoint]) -> float:
    return max((p.p95_us for p in points if p.p95_us is not None), default=0.0)


def build_curves(
    config_ids: Sequence[str],
    workloads: Sequence[WorkloadInfo],
    index: Mapping[str, Mapping[MeasureKey, Aggregate]],
    groups: Callable[[str], int],
) -> list[Curve]:
    """One curve per config and swept workload: the line (direction, target...) with the most load
    levels, and among equals the one with the worst p95 (a mixed sweep's slower direction).
    ``groups(workload)`` is how many fio job groups the workload has (named only when several)."""
    curves: list[Curve] = []
    for info in workloads:
        keys = [k for aggs in index.values() for k in aggs if k.workload == info.id]
        axis = sweep_axis(keys)
        if axis is None:
            continue
        for cid in config_ids:
            lines = {
                line: points
                for line, points in _lines(axis, index.get(cid, {}), info.id).items()
                if len({p.load for p in points}) == len(points) and len(points) >= 2
            }
            if not lines:
                continue
            line, points = max(lines.items(), key=lambda item: (len(item[1]), _worst_p95(item[1])))
            curve = latency_curve(axis, points)
            curves.append(
                Curve(
                    config_id=cid,
                    workload=info.id,
                    name=info.name,
                    measurement=_measurement(line, groups(info.id) > 1),
                    axis=curve.axis,
                    axis_label=curve.axis_label,
                    points=curve.points,
                    knee=curve.knee,
                    p95_per_doubling=curve.scaling.ratio_per_doubling if curve.scaling is not None else None,
                    scaling=curve.scaling.reading if curve.scaling is not None else None,
                    reading=curve.reading,
                )
            )
    return curves

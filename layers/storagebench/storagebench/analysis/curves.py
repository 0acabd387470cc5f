"""Latency against load: a sweep's points (queue depth or jobs), where latency turns up, and how
p95 scales per doubling of load (``analysis.grades.load_scaling``).

The knee of a latency-vs-load curve is a hinge, not a step: latency stays near flat while the
storage has headroom and then grows with the load once it is saturated (Little's law: at a
throughput ceiling, p95 doubles with every doubling of outstanding I/O). ``analysis.burst.fit_knee``
fits two plateaus (a burst falling to its baseline) and is the wrong shape for it; here the knee is
read from the per-doubling steps ``load_scaling`` already computes: the start of the first step
that grows p95 by at least ``rising_from`` (1.5x) per doubling, provided p95 keeps growing that
fast on average from there to the end of the sweep. So a jump that settles again is not a knee, a
curve that flattens at its very end (a device or an emulated throttle capping latency) still has
one, and a sweep saturated from its first step has its knee at its lowest load ("at or below").
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from storagebench.analysis.grades import LoadScaling, load_scaling
from storagebench.analysis.stats import Aggregate

__all__ = [
    "DEFAULT_RISING_FROM",
    "SWEEP_AXES",
    "CurvePoint",
    "LatencyCurve",
    "LoadKnee",
    "curve_point",
    "latency_curve",
    "latency_knee",
    "sweep_curves",
    "sweep_load",
    "variant_params",
]

DEFAULT_RISING_FROM = 1.5
"""p95 growth per doubling of load from which latency "turns up": more than 1.5x means throughput
grows less than 1.33x per doubling (Little's law), most of the extra load now queues."""

SWEEP_AXES: dict[str, str] = {"iodepth": "queue depth", "numjobs": "jobs"}
"""Variant keys a latency-vs-load curve is drawn against, and their axis labels."""

Axis = Literal["iodepth", "numjobs"]


class _Model(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class CurvePoint(_Model):
    """One load level: repetition means (latency in microseconds)."""

    load: float = Field(gt=0)
    iops: float | None = None
    p50_us: float | None = None
    p95_us: float | None = None
    p99_us: float | None = None
    repetitions: int = Field(default=1, ge=1)


class LoadKnee(_Model):
    load: float = Field(description="the last load before latency turns up")
    p95_us: float
    next_load: float = Field(description="the load of the first rising step")
    ratio_per_doubling: float = Field(description="p95 growth per doubling from the knee to the sweep's end")
    at_lowest: bool = Field(
        description="latency rises from the lowest load measured: the knee is at or below"
    )
    text: str


class LatencyCurve(_Model):
    axis: Axis
    axis_label: str
    points: list[CurvePoint] = Field(description="ascending load")
    knee: LoadKnee | None = Field(description="None when latency never turns up within the sweep")
    scaling: LoadScaling | None = Field(description="None with fewer than two loads that have a p95")
    reading: str = Field(description="one sentence: the knee and the scaling, in words")


def _load_text(load: float) -> str:
    return f"{load:g}"


def latency_knee(scaling: LoadScaling, rising_from: float = DEFAULT_RISING_FROM) -> LoadKnee | None:
    """The knee of a curve from its per-doubling steps (module doc); None when p95 never turns up
    for good within the sweep."""
    if not math.isfinite(rising_from) or rising_from <= 1.0:
        raise ValueError(f"rising_from is {rising_from!r}: it must be a finite ratio above 1")
    last_load, last_p95 = scaling.points[-1]
    for index, step in enumerate(scaling.steps):
        if step.ratio_per_doubling < rising_from:
            continue
        onward = (last_p95 / step.p95_from_us) ** (1.0 / math.log2(last_load / step.load_from))
        if onward < rising_from:
            continue  # a jump that settles again: latency does not keep turning up from here
        at_lowest = index == 0
        where = "at or below" if at_lowest else "at"
        return LoadKnee(
            load=step.load_from,
            p95_us=step.p95_from_us,
            next_load=step.load_to,
            ratio_per_doubling=onward,
            at_lowest=at_lowest,
            text=(
                f"knee {where} {_load_text(step.load_from)}: from there to {_load_text(last_load)} p95 "
                f"grows {onward:.2f}x per doubling of load (>= {rising_from:g}x)"
            ),
        )
    return None


def latency_curve(
    axis: str, points: Sequence[CurvePoint], rising_from: float = DEFAULT_RISING_FROM
) -> LatencyCurve:
    """A sweep's curve: its points sorted by load, the knee and the p95 scaling when two or more
    loads have a p95."""
    if axis not in SWEEP_AXES:
        raise ValueError(f"axis is {axis!r}: a curve is drawn against one of {', '.join(SWEEP_AXES)}")
    loads = [p.load for p in points]
    if len(set(loads)) != len(loads):
        raise ValueError(f"points: loads {sorted(loads)} repeat; one point per load expected")
    ordered = sorted(points, key=lambda p: p.load)
    with_p95 = [(p.load, p.p95_us) for p in ordered if p.p95_us is not None and p.p95_us > 0]
    label = SWEEP_AXES[axis]
    scaling = load_scaling(with_p95) if len(with_p95) >= 2 else None
    knee = latency_knee(scaling, rising_from) if scaling is not None else None
    if scaling is None:
        reading = f"fewer than two {label} levels with a p95: no scaling"
    else:
        reading = f"p95 grows {scaling.ratio_per_doubling:.2f}x per doubling of {label} ({scaling.reading})"
        if knee is not None:
            reading += f"; {knee.text.replace('knee', f'knee ({label})', 1)}"
        else:
            reading += f"; no knee up to {label} {_load_text(ordered[-1].load)}"
    checked: Axis = "iodepth" if axis == "iodepth" else "numjobs"
    return LatencyCurve(
        axis=checked,
        axis_label=label,
        points=ordered,
        knee=knee,
        scaling=scaling,
        reading=reading,
    )


def variant_params(variant: str) -> dict[str, str]:
    """``"iodepth=4,rw=randread"`` (a record's variant text) as a dict."""
    parsed: dict[str, str] = {}
    for part in variant.split(","):
        name, sep, value = part.partition("=")
        if sep:
            parsed[name] = value
    return parsed


def sweep_load(text: str | None) -> float | None:
    """A swept parameter's value as a load level: a positive number, else None."""
    try:
        load = float(text) if text is not None else None
    except ValueError:
        return None
    return load if load is not None and load > 0 else None


def curve_point(load: float, agg: Aggregate) -> CurvePoint:
    """One load level of a curve: the repetition means of ``agg``'s IOPS and percentiles."""

    def mean(metric: str) -> float | None:
        summary = agg.metrics.get(metric)
        return None if summary is None else float(summary.mean)

    return CurvePoint(
        load=load,
        iops=mean("iops"),
        p50_us=mean("lat_p50_us"),
        p95_us=mean("lat_p95_us"),
        p99_us=mean("lat_p99_us"),
        repetitions=agg.repetitions,
    )


class SweepCurve(_Model):
    """One config's curve over one swept workload and direction (the CLI's view of a sweep)."""

    config_id: str
    workload: str
    direction: str
    curve: LatencyCurve


def sweep_curves(aggregates: Sequence[Aggregate]) -> list[SweepCurve]:
    """Every load sweep among ``aggregates`` as a curve: records of one config, workload, target,
    phase, direction and group whose variants differ only in a ``SWEEP_AXES`` value (two or more
    levels). Mixed records are left out (their read and write sides are curves of their own)."""
    lines: dict[tuple[str, str, str, str, str, int | None, str, str], list[CurvePoint]] = {}
    for agg in aggregates:
        if agg.direction == "mixed":
            continue
        params = variant_params(agg.variant)
        for axis in SWEEP_AXES:
            load = sweep_load(params.get(axis))
            if load is None:
                continue
            rest = ",".join(f"{k}={v}" for k, v in sorted(params.items()) if k != axis)
            key = (
                agg.config_id,
                agg.workload,
                agg.target_id,
                agg.phase,
                agg.direction,
                agg.group,
                axis,
                rest,
            )
            lines.setdefault(key, []).append(curve_point(load, agg))
            break
    curves: list[SweepCurve] = []
    for (config_id, workload, _, _, direction, _, axis, _), points in sorted(
        lines.items(), key=lambda item: tuple(str(part) for part in item[0])
    ):
        if len(points) < 2 or len({p.load for p in points}) != len(points):
            continue
        curve = latency_curve(axis, points)
        curves.append(SweepCurve(config_id=config_id, workload=workload, direction=direction, curve=curve))
    return curves

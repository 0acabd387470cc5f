"""The report's time-series lines for one config and workload: the stored IOPS and bandwidth
series of the headline measurement's repetitions (directions summed when it is a total),
downsampled to what a chart draws. ``report.build`` builds the charts with them.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from storagebench.analysis.series import downsample
from storagebench.costs.measures import MeasureKey
from storagebench.report.inputs import mapping
from storagebench.report.model import SeriesLine

SERIES_LINES = 4
"""Time-series lines drawn per config and workload (repetitions of the headline measurement)."""


SERIES_POINTS = 200
"""Most points one drawn line keeps (the stored series keeps up to 600)."""


def _variant_of(entry: Mapping[str, Any]) -> str:
    variant = mapping(entry.get("variant"))
    return ",".join(f"{k}={v}" for k, v in sorted(variant.items()))


def series_lines(
    document: Mapping[str, Any], workload: str, key: MeasureKey | None, where: Callable[[MeasureKey], str]
) -> tuple[list[SeriesLine], int, str]:
    """Lines (total IOPS over directions) of one workload's headline point, one per repetition."""
    entries = [
        e for e in document.get("series") or [] if isinstance(e, Mapping) and e.get("workload") == workload
    ]
    if key is not None:
        matching = [e for e in entries if _variant_of(e) == key.variant and e.get("phase") == key.phase]
        entries = matching or entries
    grouped: dict[tuple[str, str, str, int], list[Mapping[str, Any]]] = {}
    for entry in entries:
        try:
            repetition = int(entry.get("repetition") or 1)
        except (TypeError, ValueError):
            repetition = 1
        ident = (str(entry.get("target_id")), _variant_of(entry), str(entry.get("phase")), repetition)
        grouped.setdefault(ident, []).append(entry)
    several = {
        "target": len({i[0] for i in grouped}) > 1,
        "variant": len({i[1] for i in grouped}) > 1,
        "phase": len({i[2] for i in grouped}) > 1,
    }
    lines: list[SeriesLine] = []
    for (target, variant, phase, repetition), members in sorted(
        grouped.items(), key=lambda kv: (kv[0][3], kv[0])
    ):
        line = _sum_directions(members)
        if line is None:
            continue
        t0, interval, values, knee = line
        label = f"repetition {repetition}"
        extra = [
            text
            for text, shown in (
                (f"target {target}", several["target"]),
                (variant, several["variant"]),
                (phase, several["phase"]),
            )
            if shown and text
        ]
        if extra:
            label += f" ({', '.join(extra)})"
        factor = max(1, math.ceil(len(values) / SERIES_POINTS))
        lines.append(
            SeriesLine.model_construct(
                label=label,
                t0_s=t0,
                interval_s=interval * factor,
                iops=downsample(values, factor) if factor > 1 else values,
                knee_s=knee,
            )
        )
    measurement = "" if key is None else where(key)
    return lines[:SERIES_LINES], max(0, len(lines) - SERIES_LINES), measurement


def _numbers(values: Sequence[Any]) -> list[float | None]:
    """JSON values as floats; anything else (null, text, NaN) as a gap."""
    return [float(v) if v.__class__ in (int, float) and math.isfinite(v) else None for v in values]


def _sum_directions(
    members: Sequence[Mapping[str, Any]],
) -> tuple[float, float, list[float | None], float | None] | None:
    """One phase's directions summed point by point (they share t0 and interval)."""
    total: list[float | None] | None = None
    t0: float | None = None
    interval: float | None = None
    knee: float | None = None
    for entry in members:
        values = entry.get("iops")
        if not isinstance(values, list):
            continue
        try:
            start, step = float(entry.get("t0_s", 1)), float(entry.get("interval_s", 1))
        except (TypeError, ValueError):
            continue
        if t0 is None:
            t0, interval = start, step
        elif (start, step) != (t0, interval):
            continue  # not aligned with the first direction: leave it out rather than misplace it
        numbers = _numbers(values)
        if total is None:
            total = numbers
        else:
            total = [
                b if a is None else (a if b is None else a + b)
                for a, b in itertools.zip_longest(total, numbers)
            ]
        raw_knee = entry.get("knee_s")
        if isinstance(raw_knee, int | float) and knee is None:
            knee = float(raw_knee)
    if t0 is None or interval is None or not total:
        return None
    return t0, interval, total, knee

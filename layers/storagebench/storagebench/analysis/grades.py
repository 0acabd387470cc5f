"""Report-card grades from 95th-percentile latency, and how p95 scales with load.

Why p95: the mean hides the slow I/O a database waits on; the report card of field study 4
(a database appliance vendor's "IO report card", Delphix) grades each test by p95 latency,
showing average and p95 side by side. Its published grading runs from A+ to C- with anything
worse than C- given a D, and the study states that p95 above 14 ms is a D. The vendor's exact
per-letter cut-offs were not retrievable, so the defaults below are ours, coarser (A-D, no
+/-), and anchored on that one published number:

========  ==================  ========================================================
grade     p95 latency         typical storage at that level
========  ==================  ========================================================
A         < 2 ms              local NVMe, io2 Block Express, provisioned IOPS SSD
B         < 6 ms              healthy general purpose SSD (single-digit ms class)
C         <= 14 ms            busy SSD, network file systems, magnetic at light load
D         > 14 ms             the study's "above 14 ms is a D"
========  ==================  ========================================================

Every threshold is a field of ``GradeScale`` so a request can use its own scale; the grade
always carries the threshold it met, so a report can say why.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from typing import Literal, Self

from pydantic import BaseModel, ConfigDict, Field, model_validator

from storagebench.results.records import ResultRecord

__all__ = [
    "DEFAULT_SCALE",
    "Grade",
    "GradeScale",
    "LoadScaling",
    "ScalingStep",
    "grade",
    "grade_record",
    "load_scaling",
]

Letter = Literal["A", "B", "C", "D"]


class GradeScale(BaseModel):
    """p95 thresholds in microseconds: A strictly below ``a_below_us``, B strictly below
    ``b_below_us``, C up to and including ``c_max_us``, D above (the study's "above 14 ms")."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    a_below_us: float = Field(default=2_000.0, gt=0)
    b_below_us: float = Field(default=6_000.0, gt=0)
    c_max_us: float = Field(default=14_000.0, gt=0)
    source: str = Field(
        default="storagebench default: A < 2 ms, B < 6 ms, C <= 14 ms, D > 14 ms (field study 4: >14 ms is D)"
    )

    @model_validator(mode="after")
    def _increasing(self) -> Self:
        if not self.a_below_us < self.b_below_us < self.c_max_us:
            raise ValueError("thresholds must increase: a_below_us < b_below_us < c_max_us")
        return self


DEFAULT_SCALE = GradeScale()


class Grade(BaseModel):
    """A letter and the rule that produced it, e.g. ``p95 1.50 ms < 2.00 ms -> A``."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    letter: Letter
    p95_us: float
    threshold_us: float = Field(description="the bound met (A-C) or exceeded (D)")
    rule: str


def _ms(us: float) -> str:
    return f"{us / 1000:.2f} ms"


def grade(p95_us: float, scale: GradeScale = DEFAULT_SCALE) -> Grade:
    """Grade one p95 latency (microseconds) on ``scale``."""
    if not math.isfinite(p95_us) or p95_us < 0:
        raise ValueError(f"p95 latency must be a finite non-negative number, got {p95_us!r}")
    letter: Letter
    if p95_us < scale.a_below_us:
        letter, bound, op = "A", scale.a_below_us, "<"
    elif p95_us < scale.b_below_us:
        letter, bound, op = "B", scale.b_below_us, "<"
    elif p95_us <= scale.c_max_us:
        letter, bound, op = "C", scale.c_max_us, "<="
    else:
        letter, bound, op = "D", scale.c_max_us, ">"
    return Grade(
        letter=letter,
        p95_us=p95_us,
        threshold_us=bound,
        rule=f"p95 {_ms(p95_us)} {op} {_ms(bound)} -> {letter}",
    )


def grade_record(record: ResultRecord, scale: GradeScale = DEFAULT_SCALE) -> Grade | None:
    """Grade a record by its p95, or None when it has no latency percentiles (dd, commands)."""
    if record.latency is None or record.latency.p95_us is None:
        return None
    return grade(record.latency.p95_us, scale)


# --- Latency vs load -------------------------------------------------------------------------


class ScalingStep(BaseModel):
    """p95 between two consecutive load levels, normalised to one doubling of load."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    load_from: float
    load_to: float
    p95_from_us: float
    p95_to_us: float
    ratio_per_doubling: float


class LoadScaling(BaseModel):
    """How p95 responds as load doubles.

    ~1x per doubling: the storage had headroom (latency flat while throughput grows).
    ~2x per doubling: saturated; extra threads only queue (Little's law: throughput flat).
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    points: list[tuple[float, float]] = Field(description="(load, p95_us), sorted, one per load")
    steps: list[ScalingStep]
    ratio_per_doubling: float = Field(description="2**slope of the log2(p95)-on-log2(load) least-squares fit")
    reading: Literal["flat", "rising", "saturated"]


def _geometric_mean(values: Sequence[float]) -> float:
    return values[0] if len(values) == 1 else math.exp(math.fsum(math.log(v) for v in values) / len(values))


def load_scaling(
    points: Sequence[tuple[float, float]], flat_below: float = 1.2, saturated_from: float = 1.8
) -> LoadScaling:
    """Ratio of p95 per doubling of load (threads, jobs or queue depth).

    Loads need not be powers of two: each step is normalised by log2 of its load ratio.
    Repeated loads are merged by the geometric mean of their p95, the natural average of ratios.
    """
    by_load: dict[float, list[float]] = {}
    for load, p95 in points:
        if not (math.isfinite(load) and math.isfinite(p95)) or load <= 0 or p95 <= 0:
            raise ValueError(f"load and p95 must be positive and finite, got {(load, p95)!r}")
        by_load.setdefault(float(load), []).append(float(p95))
    if len(by_load) < 2:
        raise ValueError("need p95 at two or more distinct loads")
    merged = sorted((load, _geometric_mean(vals)) for load, vals in by_load.items())
    steps = [
        ScalingStep(
            load_from=l0,
            load_to=l1,
            p95_from_us=p0,
            p95_to_us=p1,
            ratio_per_doubling=(p1 / p0) ** (1.0 / math.log2(l1 / l0)),
        )
        for (l0, p0), (l1, p1) in itertools.pairwise(merged)
    ]
    xs = [math.log2(load) for load, _ in merged]
    ys = [math.log2(p95) for _, p95 in merged]
    mx, my = math.fsum(xs) / len(xs), math.fsum(ys) / len(ys)
    slope = math.fsum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True)) / math.fsum(
        (x - mx) ** 2 for x in xs
    )
    ratio = 2.0**slope
    reading: Literal["flat", "rising", "saturated"]
    if ratio < flat_below:
        reading = "flat"
    elif ratio < saturated_from:
        reading = "rising"
    else:
        reading = "saturated"
    return LoadScaling(points=merged, steps=steps, ratio_per_doubling=ratio, reading=reading)

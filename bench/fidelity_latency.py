"""The fidelity bench's arithmetic: what a step asks of a volume, what the model predicts, how close.

Pure functions over the plan, the records and the model (``storagebench.agent.twin.model``), so
the figures in ``bench-results/fidelity.json`` can be checked without running anything:

* :func:`job_shape` reads one step's fio job as the planner resolved it (``iodepth`` "auto"
  already a number): I/Os in flight = iodepth x numjobs, block size, sequential or random,
  read, write or mixed;
* :func:`model_prediction` runs the twin's own model in fio's closed loop at that shape, which
  is Little's law at the limit (in flight / IOPS) plus the service time at QD1;
* :func:`compare_latency` grades measured p50/p95/p99 against it (goals 10 %, 10 %, 20 %);
* :func:`limit_expected` is what fio should see at a volume's ceiling (AWS's I/O accounting).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from storagebench.agent.twin.model import predict
from storagebench.workloads.params import parse_size

LATENCY_GOALS = {"p50": 0.10, "p95": 0.10, "p99": 0.20}  # relative error allowed per percentile
LIMIT_GOAL = 0.03  # IOPS or MiB/s within 3 % of the limit
KIB = 1024
SEQUENTIAL = {"read": False, "write": True}  # rw -> write?
RANDOM = {"randread": False, "randwrite": True}
MIXED_SEQUENTIAL = ("rw", "readwrite")
MIXED_RANDOM = ("randrw",)
MIXED_BASIS = (
    "mixed read/write: the model admits reads and writes into one budget and draws one service "
    "time for both (no merging on random I/O), so each direction is graded against the same "
    "prediction at the job's total I/Os in flight"
)


class FidelityError(ValueError):
    """A step, record or twin state the bench cannot turn into a figure."""


@dataclass(frozen=True)
class JobShape:
    """What one fio job keeps in flight against the volume."""

    rw: str
    block_size: int  # bytes per I/O
    iodepth: int
    numjobs: int
    sequential: bool
    write: bool  # the direction the model is run with (reads for a mixed job, see MIXED_BASIS)
    mixed: bool

    @property
    def in_flight(self) -> int:
        return self.iodepth * self.numjobs

    def describe(self) -> dict[str, Any]:
        return {
            "rw": self.rw,
            "bs_kib": self.block_size / KIB,
            "iodepth": self.iodepth,
            "numjobs": self.numjobs,
            "in_flight": self.in_flight,
            "sequential": self.sequential,
            "predicted_as": "mixed" if self.mixed else ("write" if self.write else "read"),
        }


def _positive_int(options: Mapping[str, Any], key: str, where: str, default: int | None = None) -> int:
    value = options.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int | str):
        raise FidelityError(f"{where}.{key}: {value!r}, a positive integer expected")
    try:
        number = int(value)
    except ValueError:
        raise FidelityError(f"{where}.{key}: {value!r}, a positive integer expected") from None
    if number < 1:
        raise FidelityError(f"{where}.{key}: {value!r}, a positive integer expected")
    return number


def job_shape(step: Mapping[str, Any]) -> JobShape:
    """The shape of a step's single fio job (the standard suite's profiles have one job each)."""
    step_id = step.get("id", "?")
    jobs = [
        job
        for phase in step.get("phases", [])
        if phase.get("engine") == "fio"
        for job in phase.get("fio", {}).get("jobs", [])
    ]
    if len(jobs) != 1:
        raise FidelityError(f"step {step_id}: {len(jobs)} fio jobs, exactly one expected")
    options = jobs[0].get("options", {})
    where = f"step {step_id} job options"
    rw = options.get("rw")
    if rw in SEQUENTIAL:
        sequential, write, mixed = True, SEQUENTIAL[rw], False
    elif rw in RANDOM:
        sequential, write, mixed = False, RANDOM[rw], False
    elif rw in MIXED_SEQUENTIAL or rw in MIXED_RANDOM:
        sequential, write, mixed = rw in MIXED_SEQUENTIAL, False, True
    else:
        allowed = ", ".join([*SEQUENTIAL, *RANDOM, *MIXED_SEQUENTIAL, *MIXED_RANDOM])
        raise FidelityError(f"{where}.rw: {rw!r}, one of {allowed} expected")
    try:
        block_size = parse_size(options.get("bs", "4k"))
    except ValueError as exc:
        raise FidelityError(f"{where}.bs: {exc}") from None
    if block_size < 1:
        raise FidelityError(f"{where}.bs: {options.get('bs')!r}, a positive size expected")
    return JobShape(
        rw=str(rw),
        block_size=block_size,
        iodepth=_positive_int(options, "iodepth", where, 1),
        numjobs=_positive_int(options, "numjobs", where, 1),
        sequential=sequential,
        write=write,
        mixed=mixed,
    )


def model_prediction(
    limits: Mapping[str, Any], latency: Mapping[str, Any], shape: JobShape, ios: int
) -> dict[str, float]:
    """The model's IOPS, MiB/s and latency percentiles (ms) for fio's closed loop at ``shape``."""
    return predict(
        dict(limits),
        dict(latency),
        iodepth=shape.in_flight,
        block_size=shape.block_size,
        sequential=shape.sequential,
        write=shape.write,
        ios=max(ios, 2 * shape.in_flight),
    )


def compare_latency(measured_ms: Mapping[str, float | None], model: Mapping[str, float]) -> dict[str, Any]:
    """Measured p50/p95/p99 against the model's: signed relative error and the goal per percentile."""
    graded: dict[str, Any] = {}
    for percentile, goal in LATENCY_GOALS.items():
        measured = measured_ms.get(percentile)
        predicted = model.get(f"{percentile}_ms")
        if measured is None:
            raise FidelityError(f"measured {percentile}: missing (fio reported no percentile)")
        if predicted is None or not predicted > 0:
            raise FidelityError(f"model {percentile}_ms: {predicted!r}, a positive number expected")
        error = measured / predicted - 1
        graded[percentile] = {
            "measured_ms": round(measured, 4),
            "model_ms": round(predicted, 4),
            "error_pct": round(100 * error, 2),
            "goal_pct": round(100 * goal, 1),
            "within_goal": abs(error) <= goal,
        }
    graded["meets_goals"] = all(graded[p]["within_goal"] for p in LATENCY_GOALS)
    return graded


def limit_expected(limits: Mapping[str, Any], dimension: str, block_kib: float) -> float:
    """What fio should see at the ceiling: EBS counts an I/O as ceil(block / I/O unit) operations."""
    if dimension not in ("iops", "mibps"):
        raise FidelityError(f"dimension: {dimension!r}, 'iops' or 'mibps' expected")
    ops_per_io = math.ceil(block_kib / int(limits.get("io_size_kib", 256)))
    iops_cap = float(limits["iops"]) / ops_per_io
    mibps_cap = float(limits["mibps"])
    if dimension == "iops":
        return min(iops_cap, mibps_cap * 1024 / block_kib)
    return min(mibps_cap, iops_cap * block_kib / 1024)


def compare_limit(
    limits: Mapping[str, Any], dimension: str, block_kib: float, measured: float
) -> dict[str, Any]:
    limit = limit_expected(limits, dimension, block_kib)
    ratio = measured / limit
    return {
        "dimension": dimension,
        "limit": round(limit, 2),
        "measured": round(measured, 2),
        "ratio": round(ratio, 4),
        "within_3pct": abs(ratio - 1) <= LIMIT_GOAL,
    }

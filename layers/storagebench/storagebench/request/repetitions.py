"""How often a workload runs: a fixed count, or adaptively until its headline metric is precise.

``repetitions: 3`` runs every workload three times, stable or not. ``repetitions: {min: 2, max: 10,
ci_pct: 2}`` runs at least ``min`` times, then stops as soon as the 95 % Student-t confidence
half-width of the workload's headline metric (IOPS for IOPS workloads, MiB/s for throughput, p95
latency for latency probes, run time for timed commands: ``costs.measures.INTENT_METRICS``) is under
``ci_pct`` % of its mean, or at ``max`` (the agent decides, ``agent.adaptive``; the record says why it
stopped). Planning plans ``max`` and estimates the range ``min``..``max``.

``steady_state`` hands a single long run to fio's own steady-state detection: fio stops a
time-based job once the chosen metric's slope or deviation over ``duration`` stays under
``threshold`` (``ss=``, ``ss_dur=``, ``ss_ramp=``), and records whether it got there; collect keeps
that verdict (``results.steady_state``).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Annotated, Any, Literal, Protocol

from pydantic import (
    Discriminator,
    Field,
    Tag,
    ValidatorFunctionWrapHandler,
    WrapValidator,
)
from pydantic_core import PydanticCustomError

from storagebench.request.problems import RULE, Problems
from storagebench.request.rules import RequestModel, rule
from storagebench.workloads import get_profile

MAX_REPETITIONS = 100
MAX_CI_PCT = 50.0
"""Above ±50 % the interval says nothing worth stopping for."""

REPETITIONS_DESCRIPTION = (
    "a count (run exactly this many times), or {min, max, ci_pct}: run at least min and at most max "
    "times, stopping once the 95 % confidence half-width of the workload's headline metric (IOPS, "
    "MiB/s, p95 latency or run time, by its intent) is under ci_pct % of the mean; the results say "
    "why each series stopped and how many repetitions it spent"
)
STEADY_STATE_DESCRIPTION = (
    "fio's steady-state detection for a single long run (fio workloads with a fixed repetitions "
    "count): fio ends each job once the metric's slope or deviation over duration_s stays under "
    "threshold_pct (ss=, ss_dur=, ss_ramp=), and the results record whether it was attained"
)


def _a_count(value: Any, handler: ValidatorFunctionWrapHandler) -> int:
    """Anything that is neither an object nor a whole number gets one message naming both forms."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise PydanticCustomError(
            RULE,
            f"must be a count (1..{MAX_REPETITIONS}) or an object with min, max and ci_pct "
            "(adaptive repetitions)",
        )
    return int(handler(value))


FixedRepetitions = Annotated[
    int,
    Field(ge=1, le=MAX_REPETITIONS, description="run exactly this many times"),
    WrapValidator(_a_count),
]


class AdaptiveRepetitions(RequestModel):
    """Repeat until the headline metric's 95 % confidence half-width is under ``ci_pct`` % of its mean."""

    min: int = Field(
        default=2,
        ge=2,
        le=MAX_REPETITIONS,
        description="always run this many (2 at least: an interval needs 2)",
    )
    max: int = Field(default=10, ge=2, le=MAX_REPETITIONS, description="never run more than this many")
    ci_pct: float = Field(
        default=2.0,
        gt=0,
        le=MAX_CI_PCT,
        description="stop once the 95 % confidence half-width is under this percentage of the mean",
    )

    @rule("min", "max")
    def _min_within_max(self, problems: Problems) -> None:
        if self.min > self.max:
            problems.add(("min",), self.min, f"must be at most max ({self.max}): min..max repetitions")


FIXED_TAG = "repetitions-count"
ADAPTIVE_TAG = "repetitions-min-max-ci"
UNION_TAGS = frozenset({FIXED_TAG, ADAPTIVE_TAG})
"""The union's tags pydantic puts in an error's location (``request.errors`` drops them)."""


def _repetitions_kind(value: Any) -> str:
    """An object is adaptive, anything else is judged as a count (so a bad value reads as one)."""
    return ADAPTIVE_TAG if isinstance(value, dict | AdaptiveRepetitions) else FIXED_TAG


Repetitions = Annotated[
    Annotated[FixedRepetitions, Tag(FIXED_TAG)] | Annotated[AdaptiveRepetitions, Tag(ADAPTIVE_TAG)],
    Discriminator(_repetitions_kind),
]
"""What ``repetitions`` accepts, on the request and on each workload."""


def most_repetitions(repetitions: Repetitions) -> int:
    """The repetitions planned: the count, or ``max`` (an adaptive series may stop before)."""
    return repetitions if isinstance(repetitions, int) else repetitions.max


def fewest_repetitions(repetitions: Repetitions) -> int:
    """The repetitions that always run: the count, or ``min``."""
    return repetitions if isinstance(repetitions, int) else repetitions.min


SteadyStateMetric = Literal["iops", "bw"]
SteadyStateCriterion = Literal["slope", "deviation"]


class SteadyState(RequestModel):
    """fio's steady-state detection for one long time-based run (fio's ``ss``, ``ss_dur``, ``ss_ramp``)."""

    metric: SteadyStateMetric = Field(default="iops", description="what must settle: iops or bw (bandwidth)")
    criterion: SteadyStateCriterion = Field(
        default="slope",
        description="slope: the least-squares slope over the window; deviation: the largest deviation "
        "from the window's mean",
    )
    threshold_pct: float = Field(
        default=1.0, gt=0, le=100, description="in % of the window's mean (fio's ss=<metric>_<criterion>:N%)"
    )
    duration_s: int = Field(
        default=300, ge=10, le=86_400, description="the sliding window judged (fio's ss_dur), seconds"
    )
    ramp_s: int = Field(
        default=0, ge=0, le=86_400, description="data ignored at the start before judging (fio's ss_ramp)"
    )

    def fio_options(self) -> dict[str, str]:
        """The fio global options: ``ss=iops_slope:1%``, ``ss_dur=300``, ``ss_ramp=0``."""
        criterion = {"slope": "_slope", "deviation": ""}[self.criterion]
        return {
            "ss": f"{self.metric}{criterion}:{self.threshold_pct:g}%",
            "ss_dur": str(self.duration_s),
            "ss_ramp": str(self.ramp_s),
        }


class _SteadyStateRequest(Protocol):
    """What the check reads of a request (``request.model.BenchmarkRequest``, which imports this)."""

    @property
    def repetitions(self) -> Repetitions: ...

    @property
    def workloads(self) -> Sequence[Any]: ...


def steady_state_problems(request: _SteadyStateRequest) -> Iterator[tuple[tuple[str | int, ...], Any, str]]:
    """(location, value, message) of each ``steady_state`` the request cannot honour: fio's detection
    needs fio jobs (not dd, a command or a latency-SLA search), and it is a stopping rule of its own,
    so it does not mix with adaptive repetitions (give the workload a repetitions count)."""
    for position, workload in enumerate(request.workloads):
        if workload.steady_state is None:
            continue
        where = ("workloads", position, "steady_state")
        names = [workload.profile] if workload.profile else []
        for name in names or [w.profile for w in workload.expand()]:
            try:
                profile = get_profile(str(name))
            except KeyError:
                continue  # the unknown profile is reported at workloads[].profile
            if profile.engine != "fio" or profile.intent == "sla":
                what = "a latency-SLA search" if profile.intent == "sla" else f"a {profile.engine} workload"
                yield (
                    where,
                    profile.name,
                    f"fio's steady-state detection needs fio jobs; {profile.name} is {what}",
                )
        repetitions = workload.repetitions if workload.repetitions is not None else request.repetitions
        if isinstance(repetitions, AdaptiveRepetitions):
            source = "its" if workload.repetitions is not None else "the request's"
            yield (
                where,
                repetitions.model_dump(),
                f"steady_state does not mix with adaptive repetitions ({source} {{min, max, ci_pct}}); "
                "give this workload a repetitions count (1 for a single long run)",
            )

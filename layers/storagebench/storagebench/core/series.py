"""How a config's repetitions ended: adaptive series and fio's steady-state detection, as stored.

Collect reads them from the agent's output (``results.series``) into the config's
``CollectSummary``; ``results --run`` (locally and through the API's run document) and the report
show them, all with the words defined here. Both are stopping rules, so each record says what was
spent and why it stopped.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class SeriesOutcome(_Model):
    """One adaptive series (a workload on a target at one sweep point): what it spent and why it stopped."""

    series: str = Field(description="workload.target[.sweep point]")
    workload: str
    target: str
    variant: dict[str, Any] = Field(default_factory=dict)
    metric: str = Field(description="the headline metric judged: iops, bw_mibps, lat_p95_us or real_s")
    phase: str | None = Field(default=None, description="the phase whose output the metric is read from")
    min: int
    max: int
    ci_pct: float
    spent: int = Field(description="repetitions run, failed ones included")
    values: list[float] = Field(default_factory=list, description="the metric of each measured repetition")
    mean: float | None = None
    half_width_pct: float | None = Field(
        default=None, description="the 95 % confidence half-width in % of the mean (None under 2 values)"
    )
    stopped: str | None = Field(
        default=None, description="precision | max; None when the run ended before the series decided"
    )
    reason: str = Field(description='e.g. "precision reached (±1.4 % < 2 % after 4)"')
    notes: list[str] = Field(default_factory=list, description="repetitions that gave no value, and why")

    @property
    def decision(self) -> str:
        """The reason, or why there is none: the run stopped first (an interruption, a failure)."""
        return self.reason if self.stopped else f"undecided: the run ended first ({self.reason})"

    @property
    def bounds(self) -> str:
        """What the series was allowed and asked: '2..10, < 2 %'."""
        return f"{self.min}..{self.max}, < {self.ci_pct:g} %"

    @property
    def reached(self) -> str | None:
        """The precision reached: '±1.4 %'; None under 2 values."""
        return f"±{self.half_width_pct:.1f} %" if self.half_width_pct is not None else None


class SteadyStateOutcome(_Model):
    """fio's steady-state verdict for one job of one phase (fio's JSON ``steadystate`` section)."""

    step: str
    phase: str
    job: str
    criterion: str = Field(description="fio's ss option, e.g. iops_slope:1%")
    attained: bool
    duration_s: float = Field(description="the window judged (ss_dur)")
    ramp_s: float | None = Field(default=None, description="the data ignored at first (ss_ramp)")
    runtime_s: float | None = Field(default=None, description="how long the job ran (it stops once attained)")

    @property
    def text(self) -> str:
        verdict = "attained" if self.attained else "not attained"
        ran = f" after {self.runtime_s:g} s" if self.runtime_s is not None else ""
        window = f"{self.criterion} over {self.duration_s:g} s{ran}"
        return f"{self.step} {self.phase} {self.job}: steady state {verdict} ({window})"


class ConfigRepetitions(_Model):
    """How one config's repetitions stopped: its adaptive series and fio's steady-state verdicts."""

    config_id: str
    series: list[SeriesOutcome] = Field(default_factory=list)
    steady_state: list[SteadyStateOutcome] = Field(default_factory=list)

    @classmethod
    def read(cls, config_id: str, document: Mapping[str, Any]) -> tuple[ConfigRepetitions, list[str]]:
        """The outcomes under ``series`` and ``steady_state`` of a stored document (a config's
        ``CollectSummary`` or the API's config progress), and a problem line per entry that does not
        read: one bad entry never hides the others."""
        problems: list[str] = []
        read: dict[str, list[Any]] = {"series": [], "steady_state": []}
        models: dict[str, type[_Model]] = {"series": SeriesOutcome, "steady_state": SteadyStateOutcome}
        for name, model in models.items():
            entries = document.get(name) or []
            if not isinstance(entries, list):
                problems.append(f"{config_id}: {name}: expected a list, got {type(entries).__name__}")
                continue
            for index, entry in enumerate(entries):
                try:
                    read[name].append(model.model_validate(entry))
                except ValidationError as exc:
                    first = exc.errors()[0]
                    where = ".".join(str(p) for p in first["loc"]) or "(entry)"
                    problems.append(f"{config_id}: {name}[{index}]: {where}: {first['msg']}")
        return cls(config_id=config_id, series=read["series"], steady_state=read["steady_state"]), problems

    @property
    def empty(self) -> bool:
        return not (self.series or self.steady_state)


def read_repetitions(
    documents: Iterable[tuple[str, Mapping[str, Any]]],
) -> tuple[list[ConfigRepetitions], list[str]]:
    """Of (config id, document) pairs, the configs that recorded a series or a verdict, in the order
    given, and a problem line per entry that does not read (``ConfigRepetitions.read``)."""
    found: list[ConfigRepetitions] = []
    problems: list[str] = []
    for config_id, document in documents:
        outcome, unread = ConfigRepetitions.read(config_id, document)
        problems += unread
        if not outcome.empty:
            found.append(outcome)
    return found, problems

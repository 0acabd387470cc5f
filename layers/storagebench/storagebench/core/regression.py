"""A regression verdict: one metric of one series of a run against the suite's earlier runs.

Finalize computes them (``analysis.regressions``), the run's summary carries the flagged ones, the
store keeps them all, notifications and the report quote them: one document, defined here.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

Verdict = Literal["regression", "improvement", "none", "insufficient history"]
INSUFFICIENT: Verdict = "insufficient history"


class Regression(BaseModel):
    """The verdict on one metric of one series of this run."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    storage_option: str
    workload: str
    variant: str
    phase: str
    direction: str
    group: int | None = None
    metric: str
    higher_is_better: bool
    verdict: Verdict
    flagged: bool = Field(description="a regression or an improvement (outside the noise band)")
    value: float = Field(description="this run: the mean over its repetitions")
    repetitions: int = Field(ge=1, description="this run's repetitions of the series")
    baseline: float | None = Field(description="median of the history (None: no history)")
    delta_pct: float | None = Field(description="(value - baseline) / |baseline| * 100")
    band: tuple[float, float] | None = Field(description="the noise band: median +- max(k*MAD, effect)")
    history_n: int = Field(ge=0, description="earlier runs compared with")
    config_ids: list[str] = Field(default_factory=list)

    def describe(self) -> str:
        where = f"{self.storage_option} {self.workload} {self.variant} {self.phase}/{self.direction}"
        if self.verdict == INSUFFICIENT:
            return f"{where} {self.metric}: {self.value:g} (insufficient history: {self.history_n} run(s))"
        delta = f"{self.delta_pct:+.1f} %" if self.delta_pct is not None else "n/a"
        band = f"[{self.band[0]:g}, {self.band[1]:g}]" if self.band else "-"
        return (
            f"{where} {self.metric}: {self.verdict} {self.value:g} vs median {self.baseline:g} "
            f"({delta}, band {band}, {self.history_n} runs)"
        )

"""What adaptive repetitions buy on a metric of known noise: repetitions spent and precision reached.

A pure simulation for ``make bench-economy``: each trial draws repetitions from a normal
distribution of coefficient of variation ``cv`` (seeded, so a figure is reproducible) and stops them
with the agent's own rule (``agent.adaptive.decide``); fixed N gets the same noise for the side by side.
"""

from __future__ import annotations

import math
import random
import statistics

from pydantic import BaseModel, ConfigDict, Field

from storagebench.protocol.adaptive import STOP_PRECISION, decide, half_width_pct
from storagebench.request.repetitions import AdaptiveRepetitions


class Economy(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    cv: float
    trials: int
    mean_repetitions: float = Field(description="repetitions spent per series, on average")
    precision_reached: float = Field(description="share of series that stopped on precision (not at max)")
    mean_half_width_pct: float = Field(
        description="the 95 % half-width reached, in % of the mean, on average"
    )


def _width(values: list[float]) -> float:
    """The half-width in % of the mean; infinite only when there is none (a mean of 0), never
    for identical values (a width of 0 is a perfect precision, not a missing one)."""
    width = half_width_pct(values)
    return math.inf if width is None else width


def expected_repetitions(
    cv: float, policy: AdaptiveRepetitions, trials: int = 2000, seed: int = 13
) -> Economy:
    """Repetitions an adaptive series spends, and the precision it ends with, at noise ``cv``."""
    if not cv >= 0 or trials < 1:
        raise ValueError(f"cv {cv!r} must be >= 0 and trials {trials!r} >= 1")
    rng = random.Random(seed)
    spent: list[int] = []
    precise = 0
    widths: list[float] = []
    for _ in range(trials):
        values: list[float] = []
        while True:
            values.append(rng.gauss(1.0, cv))
            stop, _ = decide(values, len(values), policy.min, policy.max, policy.ci_pct)
            if stop is not None:
                break
        spent.append(len(values))
        precise += stop == STOP_PRECISION
        widths.append(_width(values))
    return Economy(
        cv=cv,
        trials=trials,
        mean_repetitions=statistics.fmean(spent),
        precision_reached=precise / trials,
        mean_half_width_pct=statistics.fmean(widths),
    )


def fixed_half_width(cv: float, repetitions: int, trials: int = 2000, seed: int = 13) -> float:
    """The 95 % half-width (in % of the mean) a fixed count reaches on the same noise, on average."""
    if repetitions < 2 or not cv >= 0 or trials < 1:
        raise ValueError(f"repetitions {repetitions!r} must be >= 2, cv {cv!r} >= 0, trials {trials!r} >= 1")
    rng = random.Random(seed)
    widths = [_width([rng.gauss(1.0, cv) for _ in range(repetitions)]) for _ in range(trials)]
    return statistics.fmean(widths)

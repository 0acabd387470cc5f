"""Is a difference between two small sets of repetitions real, and if not, how many would tell?

Benchmark runs have 2 to 5 repetitions, and two runs need not share a spread (another night,
another volume), so two means are compared with Welch's t-test: Student's t with the
Welch-Satterthwaite degrees of freedom, no equal-variance assumption. It gives a two-sided
p-value and a confidence interval of the difference ``mean_b - mean_a``; the interval of the
ratio ``mean_b / mean_a`` (hence of the percent delta) is Fieller's, which is honest about a
denominator that is itself uncertain: it is unbounded (None here) when ``mean_a`` cannot be told
from 0.

When a difference is not significant, :func:`repetitions_needed` answers how many repetitions
per side would detect it: the smallest ``n`` with ``n >= (t_{1-alpha/2,df} + t_{power,df})^2 *
(s_a^2 + s_b^2) / effect^2`` at the Welch df of ``n`` per side, from the observed spreads. The
effect planned for is the observed difference, but at least ``min_effect_pct`` of ``mean_a``:
a difference smaller than that matters to nobody buying storage, and planning for it would ask
for thousands of repetitions. With one repetition on a side there is no test; the other side's
spread stands in for both, or, with one on each, nothing is known but that 2 per side are the
least any test needs.

Pure Python over ``analysis.stats``' t distribution (this runs in the Lambda layer).
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from storagebench.analysis.stats import t_cdf, t_quantile

__all__ = [
    "ALPHA",
    "MAX_REPETITIONS",
    "MIN_EFFECT_PCT",
    "POWER",
    "Outcome",
    "RepetitionsNeeded",
    "Significance",
    "WelchTest",
    "judge",
    "repetitions_needed",
    "welch_test",
]

ALPHA = 0.05
"""Two-sided significance level: a difference counts when p < ALPHA."""
POWER = 0.8
"""Chance of detecting the planned effect that ``repetitions_needed`` plans for."""
MIN_EFFECT_PCT = 5.0
"""The smallest effect worth planning repetitions for, in percent of the first side's mean."""
MAX_REPETITIONS = 100_000
"""Plans beyond this are reported as this bound: more repetitions than anyone will run."""

Outcome = Literal["different", "no_difference", "too_few"]


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class WelchTest(_Frozen):
    """Welch's two-sample t-test of ``mean_b - mean_a`` (two-sided)."""

    n_a: int = Field(ge=2)
    n_b: int = Field(ge=2)
    mean_a: float
    mean_b: float
    stdev_a: float = Field(ge=0)
    stdev_b: float = Field(ge=0)
    difference: float = Field(description="mean_b - mean_a")
    standard_error: float = Field(ge=0)
    df: float | None = Field(
        description="Welch-Satterthwaite degrees of freedom; null when neither side varies"
    )
    t: float | None = Field(description="difference / standard_error; null when neither side varies")
    p_value: float = Field(ge=0, le=1)
    alpha: float
    significant: bool = Field(description="p_value < alpha")
    ci_difference: tuple[float, float] = Field(description="(1 - alpha) interval of mean_b - mean_a")
    ci_ratio: tuple[float, float] | None = Field(
        description="(1 - alpha) interval of mean_b / mean_a (Fieller); null when unbounded (mean_a not "
        "distinguishable from 0, or not positive)"
    )

    @property
    def ci_delta_pct(self) -> tuple[float, float] | None:
        """The ratio's interval as percent change from ``mean_a``."""
        if self.ci_ratio is None:
            return None
        low, high = self.ci_ratio
        return ((low - 1.0) * 100.0, (high - 1.0) * 100.0)


class RepetitionsNeeded(_Frozen):
    """How many repetitions per side a Welch test needs to detect ``effect`` (alpha, power)."""

    per_side: int | None = Field(description="null: no spread is known, so no plan can be made")
    effect: float | None = Field(description="the absolute difference planned for")
    effect_pct: float | None = Field(description="the same, in percent of mean_a")
    alpha: float
    power: float
    basis: str = Field(description="what the plan rests on, in words")


class Significance(_Frozen):
    """The answer for one metric: the test (when one is possible), and the repetitions needed."""

    outcome: Outcome = Field(
        description="different: significant at alpha; no_difference: not significant although the "
        "repetitions could have detected the planned effect; too_few: no test possible, or too few "
        "repetitions to detect the planned effect"
    )
    test: WelchTest | None = Field(description="null with fewer than 2 repetitions on a side")
    needed: RepetitionsNeeded | None = Field(description="null when the difference is significant")
    reason: str


def _values(values: Sequence[float], side: str) -> list[float]:
    out = [float(v) for v in values]
    if not out:
        raise ValueError(f"{side}: no values to compare")
    if not all(math.isfinite(v) for v in out):
        raise ValueError(f"{side}: values must be finite, got {values!r}")
    return out


def _check_levels(alpha: float, power: float | None = None) -> None:
    if not 0.0 < alpha < 1.0:
        raise ValueError(f"alpha must be in (0, 1), got {alpha!r}")
    if power is not None and not 0.0 < power < 1.0:
        raise ValueError(f"power must be in (0, 1), got {power!r}")


def _welch_df(var_a: float, n_a: int, var_b: float, n_b: int) -> float:
    """Welch-Satterthwaite df of ``mean_b - mean_a`` from the sample variances (not both 0)."""
    se2_a, se2_b = var_a / n_a, var_b / n_b
    return (se2_a + se2_b) ** 2 / (se2_a**2 / (n_a - 1) + se2_b**2 / (n_b - 1))


def _fieller(
    mean_a: float, se2_a: float, n_a: int, mean_b: float, se2_b: float, n_b: int, alpha: float
) -> tuple[float, float] | None:
    """Fieller's interval of mean_b / mean_a for independent means (None when unbounded)."""
    if mean_a <= 0:
        return None
    ratio = mean_b / mean_a
    if se2_a == 0 and se2_b == 0:
        return (ratio, ratio)
    # df of mean_b - R * mean_a at the estimated ratio (Welch-Satterthwaite)
    parts = [(se2_b, n_b), (ratio**2 * se2_a, n_a)]
    df = sum(p for p, _ in parts) ** 2 / sum(p**2 / (n - 1) for p, n in parts if p > 0)
    q = t_quantile(1.0 - alpha / 2.0, df)
    a = mean_a**2 - q**2 * se2_a
    if a <= 0:
        return None
    root = q * math.sqrt(se2_b * a + se2_a * mean_b**2)
    return ((mean_a * mean_b - root) / a, (mean_a * mean_b + root) / a)


def _nonnegative(ratio: tuple[float, float] | None, values: Sequence[float]) -> tuple[float, float] | None:
    """Clip the ratio's interval at 0 when no value is negative (IOPS, MiB/s, latency): the true
    ratio of two such means cannot be, so a delta never reads below -100 % (as ``stats.summarize``
    clips intervals of values at 0); the interval keeps its coverage."""
    if ratio is None or min(values) < 0:
        return ratio
    return (max(0.0, ratio[0]), max(0.0, ratio[1]))


def welch_test(a: Sequence[float], b: Sequence[float], alpha: float = ALPHA) -> WelchTest:
    """Welch's t-test of ``mean(b) - mean(a)``; ValueError with fewer than 2 values on a side.

    When neither side varies the difference is exact: p is 1 for equal means and 0 otherwise.
    """
    _check_levels(alpha)
    xs, ys = _values(a, "a"), _values(b, "b")
    for side, values in (("a", xs), ("b", ys)):
        if len(values) < 2:
            raise ValueError(f"{side}: Welch's t-test needs at least 2 values per side, got {len(values)}")
    n_a, n_b = len(xs), len(ys)
    mean_a, mean_b = math.fsum(xs) / n_a, math.fsum(ys) / n_b
    var_a, var_b = statistics.variance(xs), statistics.variance(ys)
    se2_a, se2_b = var_a / n_a, var_b / n_b
    difference = mean_b - mean_a
    se = math.sqrt(se2_a + se2_b)
    df: float | None
    t: float | None
    if se == 0:
        df, t = None, None
        p_value = 1.0 if difference == 0 else 0.0
        ci = (difference, difference)
    else:
        df = _welch_df(var_a, n_a, var_b, n_b)
        t = difference / se
        p_value = min(1.0, 2.0 * t_cdf(-abs(t), df))  # the lower tail directly: small p keeps its digits
        half = t_quantile(1.0 - alpha / 2.0, df) * se
        ci = (difference - half, difference + half)
    return WelchTest(
        n_a=n_a,
        n_b=n_b,
        mean_a=mean_a,
        mean_b=mean_b,
        stdev_a=math.sqrt(var_a),
        stdev_b=math.sqrt(var_b),
        difference=difference,
        standard_error=se,
        df=df,
        t=t,
        p_value=p_value,
        alpha=alpha,
        significant=p_value < alpha,
        ci_difference=ci,
        ci_ratio=_nonnegative(_fieller(mean_a, se2_a, n_a, mean_b, se2_b, n_b, alpha), [*xs, *ys]),
    )


def _planned(var_a: float, var_b: float, effect: float, alpha: float, power: float) -> int:
    """The smallest n per side with n >= (t_{1-a/2,df} + t_{power,df})^2 (var_a + var_b) / effect^2."""
    total = var_a + var_b

    def enough(n: int) -> bool:
        df = total**2 * (n - 1) / (var_a**2 + var_b**2)
        quantiles = t_quantile(1.0 - alpha / 2.0, df) + t_quantile(power, df)
        return n >= quantiles**2 * total / effect**2

    if not enough(MAX_REPETITIONS):
        return MAX_REPETITIONS
    low, high = 2, MAX_REPETITIONS  # enough() is monotone in n: bisect for the first n that is
    while low < high:
        middle = (low + high) // 2
        if enough(middle):
            high = middle
        else:
            low = middle + 1
    return low


def repetitions_needed(
    a: Sequence[float],
    b: Sequence[float],
    *,
    alpha: float = ALPHA,
    power: float = POWER,
    min_effect_pct: float = MIN_EFFECT_PCT,
) -> RepetitionsNeeded:
    """Repetitions per side to detect the observed difference, or ``min_effect_pct`` of mean(a) when
    that is larger, with a Welch test at ``alpha`` and ``power`` (module notes)."""
    _check_levels(alpha, power)
    if min_effect_pct < 0:
        raise ValueError(f"min_effect_pct must be >= 0, got {min_effect_pct!r}")
    xs, ys = _values(a, "a"), _values(b, "b")
    mean_a, mean_b = math.fsum(xs) / len(xs), math.fsum(ys) / len(ys)
    observed = abs(mean_b - mean_a)
    floor = min_effect_pct / 100.0 * abs(mean_a)
    effect = max(observed, floor)
    effect_pct = effect / abs(mean_a) * 100.0 if mean_a != 0 else None
    if observed < floor:
        what = f"a {min_effect_pct:g} % difference"
    else:
        what = "the observed difference" + (f" ({effect_pct:.1f} %)" if effect_pct is not None else "")

    def answer(per_side: int | None, basis: str) -> RepetitionsNeeded:
        return RepetitionsNeeded(
            per_side=per_side,
            effect=effect if per_side is not None else None,
            effect_pct=effect_pct if per_side is not None else None,
            alpha=alpha,
            power=power,
            basis=basis,
        )

    if len(xs) < 2 and len(ys) < 2:
        return answer(
            None, "one repetition on each side: no spread is known; 2 per side are the least a test needs"
        )
    if len(xs) >= 2 and len(ys) >= 2:
        var_a, var_b = statistics.variance(xs), statistics.variance(ys)
        source = "the spreads of both sides"
    else:
        known = xs if len(xs) >= 2 else ys
        var_a = var_b = statistics.variance(known)
        source = f"the spread of side {'a' if known is xs else 'b'} (one repetition on the other side)"
    if var_a + var_b == 0:
        return answer(2, f"neither side varies ({source}): 2 per side detect any difference")
    if effect == 0:
        return answer(None, "equal means and no minimum effect: no difference to plan for")
    per_side = _planned(var_a, var_b, effect, alpha, power)
    bound = " or more" if per_side == MAX_REPETITIONS else ""
    return answer(
        per_side,
        f"{per_side}{bound} per side detect {what} with power {power:g} at alpha {alpha:g}, from {source}",
    )


def judge(
    a: Sequence[float],
    b: Sequence[float],
    *,
    alpha: float = ALPHA,
    power: float = POWER,
    min_effect_pct: float = MIN_EFFECT_PCT,
) -> Significance:
    """Whether mean(b) differs from mean(a): the test, or why there is none and what would decide."""
    n_a, n_b = len(a), len(b)
    if n_a < 2 or n_b < 2:
        needed = repetitions_needed(a, b, alpha=alpha, power=power, min_effect_pct=min_effect_pct)
        return Significance(
            outcome="too_few",
            test=None,
            needed=needed,
            reason=f"{n_a} and {n_b} repetition(s): no test is possible with one on a side; {needed.basis}",
        )
    test = welch_test(a, b, alpha)
    if test.significant:
        return Significance(
            outcome="different",
            test=test,
            needed=None,
            reason=f"p = {test.p_value:.3g} < {alpha:g} (Welch's t-test, {n_a} and {n_b} repetitions)",
        )
    needed = repetitions_needed(a, b, alpha=alpha, power=power, min_effect_pct=min_effect_pct)
    # No plan with a spread known means nothing to detect (equal means, no minimum effect)
    powered = needed.per_side is None or needed.per_side <= min(n_a, n_b)
    return Significance(
        outcome="no_difference" if powered else "too_few",
        test=test,
        needed=needed,
        reason=f"p = {test.p_value:.3g} >= {alpha:g} (Welch's t-test, {n_a} and {n_b} repetitions); "
        + needed.basis,
    )

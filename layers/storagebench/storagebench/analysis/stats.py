"""Repetition statistics and noise-aware change detection, in pure Python.

Published numbers are bets: a mean without its spread invites people to over-read a 3 %
difference. Each headline metric is therefore summarised over repetitions with a Student-t
95 % confidence interval (repetition counts are small, so the normal interval would be too
narrow). Nightly regression detection uses the median and MAD instead, because one bad night
must not widen the band that judges the next one.

Which interval, for quantities that cannot be negative (IOPS, MiB/s, latency, seconds): the
Student-t interval of the mean, with its low end clipped at 0 and always shown as [low, high]
(never "mean ± half", which with 2 repetitions read "2.121 ± 21.143 ms"). Clipping keeps the
interval's 95 % coverage exactly (the true mean is >= 0, so dropping the negative part drops no
value it can take) and keeps it an interval *of the mean that is printed*. The alternatives were
weighed: a t-interval on log values is an interval of the geometric mean, which is not the number
shown and with n = 2 (t = 12.7) spans several orders of magnitude; the min-max of n repetitions
covers the median only with probability 1 - 2^(1-n), i.e. 50 % at n = 2, so it would claim far more
certainty than two runs give. With few repetitions (``FEW_REPETITIONS``) the summary says so, and
a single repetition gets no interval at all.

No numpy/scipy: this ships in a Lambda layer, so the t quantile is computed in the standard library
(``protocol.student_t``, by inverting the regularized incomplete beta function), the same function the
agent's adaptive repetitions stop on.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable, Sequence
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from storagebench.protocol.student_t import regularized_incomplete_beta, t_cdf, t_quantile
from storagebench.results.records import Direction, ResultRecord

__all__ = [
    "FEW_REPETITIONS",
    "HEADLINE_METRICS",
    "MAD_SCALE",
    "Aggregate",
    "Change",
    "Summary",
    "aggregate",
    "classify_change",
    "few_repetitions_note",
    "mad",
    "median",
    "noise_band",
    "regularized_incomplete_beta",
    "summarize",
    "t_cdf",
    "t_quantile",
]

MAD_SCALE = 1.4826
"""Makes the MAD a consistent estimator of the standard deviation for normal data."""

FEW_REPETITIONS = 3
"""Up to this many repetitions an interval is flagged as resting on few: Student t's 97.5 % quantile
is 12.7 at n = 2 and 4.3 at n = 3 (1.96 with many), so the interval is mostly the t factor's width
and a percentile's repetition-to-repetition spread is barely estimated."""
SINGLE_RUN_NOTE = "single repetition: no spread to estimate, so no confidence interval"


# --- Summaries over repetitions --------------------------------------------------------------


def few_repetitions_note(n: int) -> str | None:
    """Why an interval over ``n`` repetitions deserves little trust, or None when n is enough."""
    if n < 1:
        raise ValueError(f"n: {n} repetitions; a summary needs at least 1")
    if n == 1:
        return SINGLE_RUN_NOTE
    if n <= FEW_REPETITIONS:
        return (
            f"few repetitions (n={n}): the 95 % interval is {t_quantile(0.975, n - 1):.1f} standard "
            "errors each side, so it is wide and the spread itself is barely estimated"
        )
    return None


class Summary(BaseModel):
    """Mean and spread of one metric over repetitions, with its 95 % Student-t interval.

    With a single value there is no spread: ``stdev``, ``cv`` and the interval are None and
    ``note`` says so, rather than publishing a zero-width interval nobody should believe. With
    few repetitions (2 or 3) ``note`` says that too. For a quantity that cannot be negative the
    interval's low end is clipped at 0 (module doc) and ``ci95_clipped`` records it.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    n: int = Field(ge=1)
    mean: float
    stdev: float | None = Field(description="sample standard deviation (n - 1)")
    cv: float | None = Field(description="stdev / |mean|; None when the mean is 0 or n = 1")
    ci95_low: float | None
    ci95_high: float | None
    min: float
    max: float
    values: list[float]
    note: str | None = None
    ci95_clipped: bool = Field(
        default=False, description="the t interval ran below 0 for a non-negative quantity: low set to 0"
    )


def summarize(values: Sequence[float], *, nonnegative: bool = False) -> Summary:
    """Summary of repeated measurements; raises on empty or non-finite input.

    ``nonnegative``: the quantity cannot be below 0 (IOPS, MiB/s, latency, seconds), so the
    interval is clipped at 0 and a negative value is an error, not a measurement.
    """
    vals = [float(v) for v in values]
    if not vals:
        raise ValueError("cannot summarize an empty list")
    if not all(math.isfinite(v) for v in vals):
        raise ValueError(f"values must be finite, got {[v for v in vals if not math.isfinite(v)]}")
    if nonnegative and any(v < 0 for v in vals):
        raise ValueError(f"values of a non-negative quantity must be >= 0, got {[v for v in vals if v < 0]}")
    n = len(vals)
    mean = math.fsum(vals) / n
    if n == 1:
        return Summary(
            n=1,
            mean=mean,
            stdev=None,
            cv=None,
            ci95_low=None,
            ci95_high=None,
            min=vals[0],
            max=vals[0],
            values=vals,
            note=SINGLE_RUN_NOTE,
        )
    stdev = statistics.stdev(vals)
    half = t_quantile(0.975, n - 1) * stdev / math.sqrt(n)
    low = mean - half
    clipped = nonnegative and low < 0
    return Summary(
        n=n,
        mean=mean,
        stdev=stdev,
        cv=stdev / abs(mean) if mean != 0 else None,
        ci95_low=0.0 if clipped else low,
        ci95_high=mean + half,
        min=min(vals),
        max=max(vals),
        values=vals,
        note=few_repetitions_note(n),
        ci95_clipped=clipped,
    )


def _latency(attr: str) -> Callable[[ResultRecord], float | None]:
    def get(record: ResultRecord) -> float | None:
        if record.latency is None:
            return None
        value: float | None = getattr(record.latency, attr)
        return value

    return get


HEADLINE_METRICS: dict[str, Callable[[ResultRecord], float | None]] = {
    "iops": lambda r: r.iops,
    "bw_mibps": lambda r: r.bw_mibps,
    "lat_mean_us": _latency("mean_us"),
    "lat_p50_us": _latency("p50_us"),
    "lat_p95_us": _latency("p95_us"),
    "lat_p99_us": _latency("p99_us"),
    "lat_p999_us": _latency("p999_us"),
    "runtime_s": lambda r: r.runtime_s,
    "real_s": lambda r: r.real_s,
}
"""Metric name -> how to read it from a record; metrics absent from every repetition are skipped.
Every one is a rate, a latency or a duration: none can be negative, so their intervals are clipped at 0."""


class Aggregate(BaseModel):
    """All repetitions of one measurement (one ``ResultRecord.key()``), metric by metric."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    config_id: str
    target_id: str
    workload: str
    variant: str
    phase: str
    direction: Direction
    group: int | None
    repetitions: int = Field(description="number of records aggregated")
    repetition_ids: list[int] = Field(description="their repetition numbers, sorted")
    metrics: dict[str, Summary]
    warnings: list[str] = Field(default_factory=list)

    def key(self) -> tuple[str, str, str, str, str, str, int | None]:
        """Same tuple as ``ResultRecord.key()`` for the records aggregated here."""
        return (
            self.config_id,
            self.target_id,
            self.workload,
            self.variant,
            self.phase,
            self.direction,
            self.group,
        )


def aggregate(records: list[ResultRecord]) -> list[Aggregate]:
    """Group records by ``key()`` (first-seen order) and summarise each headline metric.

    A metric missing from some repetitions is summarised over those that have it and a warning
    names the gap, so a partial failure is visible instead of silently shrinking n.
    """
    groups: dict[tuple[str, str, str, str, str, str, int | None], list[ResultRecord]] = {}
    for record in records:
        groups.setdefault(record.key(), []).append(record)
    out: list[Aggregate] = []
    for key, members in groups.items():
        config_id, target_id, workload, variant, phase, _, group = key
        reps = sorted(r.repetition for r in members)
        warnings = [
            f"repetition {rep} appears more than once" for rep in sorted(set(reps)) if reps.count(rep) > 1
        ]
        metrics: dict[str, Summary] = {}
        for name, getter in HEADLINE_METRICS.items():
            vals = [v for v in (getter(r) for r in members) if v is not None]
            if not vals:
                continue
            if len(vals) < len(members):
                warnings.append(f"{name}: present in {len(vals)} of {len(members)} repetitions")
            try:
                metrics[name] = summarize(vals, nonnegative=True)
            except ValueError as exc:
                raise ValueError(f"{name} of {config_id}/{workload}/{target_id}: {exc}") from exc
        out.append(
            Aggregate(
                config_id=config_id,
                target_id=target_id,
                workload=workload,
                variant=variant,
                phase=phase,
                direction=members[0].direction,
                group=group,
                repetitions=len(members),
                repetition_ids=reps,
                metrics=metrics,
                warnings=warnings,
            )
        )
    return out


# --- Robust change detection -----------------------------------------------------------------


def median(values: Sequence[float]) -> float:
    """Median; raises ValueError on an empty sequence."""
    if not values:
        raise ValueError("median of an empty sequence")
    return float(statistics.median(values))


def mad(values: Sequence[float], scale: float = MAD_SCALE) -> float:
    """Median absolute deviation, scaled to estimate the standard deviation (normal data)."""
    m = median(values)
    return scale * median([abs(v - m) for v in values])


def noise_band(history: Sequence[float], k: float = 3.0, min_effect: float = 0.05) -> tuple[float, float]:
    """Range of values indistinguishable from ``history``: median +- max(k * MAD, min_effect * |median|).

    The ``min_effect`` floor keeps a very quiet history (MAD near 0, or only one night) from
    flagging changes too small to matter to anyone paying for the storage.
    """
    if k < 0 or min_effect < 0:
        raise ValueError("k and min_effect must be non-negative")
    center = median(history)
    half = max(k * mad(history), min_effect * abs(center))
    return (center - half, center + half)


class Change(BaseModel):
    """Verdict on one new value against its history."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    verdict: Literal["regression", "improvement", "none"]
    value: float
    baseline: float = Field(description="median of the history")
    delta_pct: float | None = Field(
        description="(value - baseline) / |baseline| * 100; None if baseline is 0"
    )
    band: tuple[float, float]
    history_n: int


def classify_change(
    value: float,
    history: Sequence[float],
    higher_is_better: bool,
    k: float = 3.0,
    min_effect: float = 0.05,
) -> Change:
    """Regression, improvement or none: outside the noise band, in the direction that matters."""
    low, high = noise_band(history, k, min_effect)
    baseline = median(history)
    verdict: Literal["regression", "improvement", "none"] = "none"
    if value > high:
        verdict = "improvement" if higher_is_better else "regression"
    elif value < low:
        verdict = "regression" if higher_is_better else "improvement"
    delta = (value - baseline) / abs(baseline) * 100.0 if baseline != 0 else None
    return Change(
        verdict=verdict,
        value=value,
        baseline=baseline,
        delta_pct=delta,
        band=(low, high),
        history_n=len(history),
    )

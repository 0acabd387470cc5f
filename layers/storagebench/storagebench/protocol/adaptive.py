"""Adaptive repetitions: the stopping rule of a series and its record in ``manifest.json``.

The plan carries every repetition up to ``max`` of an adaptive series (``protocol.plan.Adaptive``:
``min``, ``max``, ``ci_pct``, the metric and the phase judged). After each repetition the agent
(``agent.adaptive.SeriesTracker``) reads the metric and applies ``decide``:

* fewer than ``min`` repetitions spent: go on;
* the 95 % confidence half-width of the mean (Student t with n - 1 degrees of freedom,
  ``protocol.student_t``) under ``ci_pct`` % of the mean: stop, "precision reached (±1.4 % < 2 % after 4)";
* ``max`` spent: stop, "max reached (±3.1 % after 10)".

The rule is part of the contract: the domain replays it (``analysis.adaptive_economy``) and reads
the ``SeriesRecord`` the agent writes. Standard library only: this runs on the instance too.
"""

from __future__ import annotations

import math
import statistics
from typing import Any, Dict, List, Optional, Sequence, Tuple, TypedDict

from storagebench.protocol.student_t import t_quantile

STOP_PRECISION = "precision"
STOP_MAX = "max"


class SeriesRecord(TypedDict, total=False):
    """One adaptive series in ``manifest.json`` (``adaptive``), rewritten after each repetition."""

    series: str
    workload: str
    target: str
    variant: Dict[str, Any]
    metric: str
    phase: str
    min: int
    max: int
    ci_pct: float
    spent: int  # repetitions run (failed ones too)
    values: List[float]  # the metric of each repetition that measured it, in run order
    mean: Optional[float]
    half_width_pct: Optional[float]  # the 95 % half-width in % of the mean; None under 2 values
    stopped: Optional[str]  # precision | max; None while the series may still run
    reason: str
    notes: List[str]  # repetitions that gave no value, and why


def half_width(values: Sequence[float]) -> Optional[float]:
    """The 95 % Student-t confidence half-width of the mean; None under 2 values."""
    n = len(values)
    if n < 2:
        return None
    return t_quantile(0.975, n - 1) * statistics.stdev(values) / math.sqrt(n)


def half_width_pct(values: Sequence[float]) -> Optional[float]:
    """``half_width`` in % of the mean; None under 2 values or with a mean of 0."""
    width = half_width(values)
    mean = math.fsum(values) / len(values) if values else 0.0
    if width is None or mean == 0:
        return None
    return 100.0 * width / abs(mean)


def _spent_text(spent: int, measured: int) -> str:
    failed = spent - measured
    return f"after {spent}" + (f", {failed} without a value" if failed else "")


def decide(
    values: Sequence[float], spent: int, minimum: int, maximum: int, ci_pct: float
) -> Tuple[Optional[str], str]:
    """(why the series stops, or None to go on; the sentence the record keeps) after ``spent``
    repetitions of which ``values`` measured the metric."""
    if not 2 <= minimum <= maximum:
        raise ValueError(f"min {minimum} and max {maximum}: 2 <= min <= max is required")
    if not 0 < ci_pct <= 100:
        raise ValueError(f"ci_pct {ci_pct!r}: a percentage in (0, 100] is required")
    precision = half_width_pct(values)
    after = _spent_text(spent, len(values))
    width = f"±{precision:.1f} %" if precision is not None else "no interval"
    if spent >= minimum and precision is not None and precision < ci_pct:
        return STOP_PRECISION, f"precision reached ({width} < {ci_pct:g} % {after})"
    if spent >= maximum:
        if precision is None:
            width = f"no interval from {len(values)} value(s)"
        return STOP_MAX, f"max reached ({width} {after})"
    return None, f"running ({width} {after}; target < {ci_pct:g} %, {minimum}..{maximum} repetitions)"

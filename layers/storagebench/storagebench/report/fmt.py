"""Numbers as the report prints them, the same in HTML and Markdown.

One rule everywhere: from 1,000 up, whole numbers with thousands separators (12,345 IOPS); below,
three significant digits (123, 12.3, 1.23, 0.0123). Latency is shown in milliseconds, deltas as
signed percentages (whole numbers, one decimal below 1 %), money to the cent.

Intervals are written [low–high] after the mean, never "mean ± half": every metric the report
shows is a rate, a latency or a duration, which cannot be negative, and its interval is the
Student-t interval clipped at 0 (``analysis.stats`` says why that one). The repetition count
follows every value, with "few repetitions" up to ``FEW_REPETITIONS`` and, for one repetition,
no interval and the reason.
"""

from __future__ import annotations

import math

from storagebench.analysis.stats import FEW_REPETITIONS
from storagebench.core.numbers import DASH, num
from storagebench.costs.monthly import fmt_usd
from storagebench.report.model import Delta, MetricInfo, Value

__all__ = [
    "DASH",
    "EMULATED_MARK",
    "INTERVAL_NOTE",
    "ONE_RUN",
    "ci_text",
    "delta_text",
    "fmt_usd",
    "grade_text",
    "interval_text",
    "like",
    "metric_title",
    "metric_value",
    "num",
    "pct",
    "repetitions_text",
    "seconds",
    "usd",
    "value_text",
    "verdict_counts",
]

ONE_RUN = "1 run"
NO_INTERVAL = f"{ONE_RUN}: no spread, no interval"
"""What a single repetition shows instead of an interval, with the reason."""
EMULATED_MARK = "emulated"
"""Appended to grades, verdicts and frontiers computed from emulated volumes: 'A (emulated)'."""
INTERVAL_NOTE = (
    "Each number is the mean over the repetitions, followed by its 95 % confidence interval "
    "[low–high] (Student t, clipped at 0: none of these quantities can be negative) and the number "
    f"of repetitions n; up to {FEW_REPETITIONS} repetitions are marked “few repetitions”: the "
    "interval is then wide and the spread barely estimated. A single repetition has no spread, so it "
    f"gets no interval and is marked “{NO_INTERVAL}”."
)
"""How to read a value: the same sentence in the HTML's and the Markdown's notes."""


def metric_title(metric: MetricInfo) -> str:
    """'p95 latency, ms'; 'IOPS' (not 'IOPS, IOPS')."""
    return metric.unit if metric.label == metric.unit else f"{metric.label}, {metric.unit}"


def metric_value(metric: MetricInfo, stored: float | None) -> str:
    """A stored value in the metric's display unit, without the unit."""
    return num(None if stored is None else stored * metric.scale)


def _has_interval(value: Value) -> bool:
    return value.ci_low is not None and value.ci_high is not None and value.n >= 2


def repetitions_text(n: int) -> str:
    """'n=5', 'n=2, few repetitions', or for one repetition why there is no interval."""
    if n < 1:
        raise ValueError(f"n: {n} repetitions; a value needs at least 1")
    if n == 1:
        return NO_INTERVAL
    return f"n={n}, few repetitions" if n <= FEW_REPETITIONS else f"n={n}"


def _bounds(metric: MetricInfo, value: Value) -> tuple[str, str] | None:
    """The interval's ends in display units, to the mean's precision, the low end never below 0."""
    if not _has_interval(value):
        return None
    assert value.ci_low is not None and value.ci_high is not None
    reference = metric_value(metric, value.mean)
    low = max(0.0, value.ci_low * metric.scale)
    return like(low, reference), like(max(0.0, value.ci_high * metric.scale), reference)


def ci_text(metric: MetricInfo, value: Value) -> str:
    """'95 % CI 12,100 to 12,600 (n=3)', or for one repetition why there is no interval."""
    bounds = _bounds(metric, value)
    if bounds is None:
        return NO_INTERVAL
    return f"95 % CI {bounds[0]} to {bounds[1]} {metric.unit} ({repetitions_text(value.n)})"


def like(value: float, reference: str) -> str:
    """``value`` with as many decimals as ``reference`` (a mean as ``num`` printed it), so an
    interval never claims more precision than its mean: 1.02 [0.94–1.10], 884 [813–955]."""
    decimals = len(reference.partition(".")[2])
    text = f"{value:,.{decimals}f}"
    return text if any(c not in "0.," for c in text) else num(value)


def interval_text(metric: MetricInfo, value: Value) -> str | None:
    """'[12,100–12,600]' in display units (None: one repetition, no interval)."""
    bounds = _bounds(metric, value)
    return None if bounds is None else f"[{bounds[0]}–{bounds[1]}]"


def value_text(metric: MetricInfo, value: Value | None, *, unit: bool = True) -> str:
    """'12,345 [12,100–12,600] IOPS (n=5)', '2.12 [0–23.30] ms (n=2, few repetitions)' or
    '12,345 IOPS (1 run: no spread, no interval)'."""
    if value is None:
        return DASH
    text = metric_value(metric, value.mean)
    interval = interval_text(metric, value)
    if interval is not None:
        text += f" {interval}"
    if unit:
        text += f" {metric.unit}"
    return f"{text} ({repetitions_text(value.n)})"


def grade_text(letter: str, emulated: bool) -> str:
    """'A', or 'A (emulated)' when the latency graded was an emulated volume's."""
    return f"{letter} ({EMULATED_MARK})" if emulated else letter


def pct(delta: float | None) -> str:
    """'+12 %', '-0.4 %', '-' for None."""
    if delta is None or not math.isfinite(delta):
        return DASH
    size = abs(delta)
    digits = f"{size:.1f}" if size < 1 else f"{size:,.0f}"
    if digits in ("0.0", "0"):
        return "0 %"
    return f"{'+' if delta > 0 else '-'}{digits} %"


def delta_text(delta: Delta | None) -> str:
    """The delta with how to read it: '+12 % better', '+2 % (not significant)', '+12 % (1 run)'."""
    if delta is None:
        return DASH
    text = pct(delta.pct)
    if delta.noise == "overlap":  # Welch's test found no difference at p < 0.05 (costs.deltas)
        return f"{text} (not significant)"
    if delta.better is not None:
        text += " better" if delta.better else " worse"
    if delta.noise == "unknown":
        text += f" ({ONE_RUN})"
    return text


VERDICTS = (
    ("regression", "regression(s)"),
    ("improvement", "improvement(s)"),
    ("none", "within noise"),
    ("insufficient history", "with too little history to judge"),
)


def verdict_counts(counts: dict[str, int]) -> str:
    """'12 metrics compared with the suite's earlier runs: 1 regression(s), 9 within noise, ...'."""
    known = dict(VERDICTS)
    parts = [
        f"{counts.get(v, 0):,} {label}" for v, label in VERDICTS if counts.get(v, 0) or v == "regression"
    ]
    parts += [f"{n:,} {v}" for v, n in sorted(counts.items()) if v not in known and n]
    total = sum(counts.values())
    return f"{total:,} metric(s) compared with the suite's earlier runs: {', '.join(parts)}"


def seconds(value: float | None) -> str:
    """A duration: '45 s', '12 min 5 s', '3 h 2 min'."""
    if value is None or not math.isfinite(value):
        return DASH
    total = round(value)
    if total < 60:
        return f"{num(value)} s"
    hours, rest = divmod(total, 3600)
    minutes, secs = divmod(rest, 60)
    if hours:
        return f"{hours} h {minutes} min"
    return f"{minutes} min {secs} s"


def usd(value: float | None) -> str:
    return DASH if value is None else fmt_usd(value)

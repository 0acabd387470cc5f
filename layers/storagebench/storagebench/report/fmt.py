"""Numbers as the report prints them, the same in HTML and Markdown.

One rule everywhere: from 1,000 up, whole numbers with thousands separators (12,345 IOPS); below,
three significant digits (123, 12.3, 1.23, 0.0123). Latency is shown in milliseconds, deltas as
signed percentages (whole numbers, one decimal below 1 %), money to the cent.
"""

from __future__ import annotations

import math

from storagebench.core.numbers import DASH, num
from storagebench.costs.monthly import fmt_usd
from storagebench.report.model import Delta, MetricInfo, Value

__all__ = [
    "DASH",
    "ONE_RUN",
    "ci_text",
    "delta_text",
    "fmt_usd",
    "half_width",
    "like",
    "metric_title",
    "metric_value",
    "num",
    "pct",
    "seconds",
    "usd",
    "value_text",
    "verdict_counts",
]

ONE_RUN = "1 run"


def metric_title(metric: MetricInfo) -> str:
    """'p95 latency, ms'; 'IOPS' (not 'IOPS, IOPS')."""
    return metric.unit if metric.label == metric.unit else f"{metric.label}, {metric.unit}"


def metric_value(metric: MetricInfo, stored: float | None) -> str:
    """A stored value in the metric's display unit, without the unit."""
    return num(None if stored is None else stored * metric.scale)


def ci_text(metric: MetricInfo, value: Value) -> str:
    """'95 % CI 12,100 to 12,600' or '1 run' (no interval from one repetition)."""
    if value.ci_low is None or value.ci_high is None or value.n < 2:
        return ONE_RUN
    return f"95 % CI {metric_value(metric, value.ci_low)} to {metric_value(metric, value.ci_high)}"


def like(value: float, reference: str) -> str:
    """``value`` with as many decimals as ``reference`` (a mean as ``num`` printed it), so a
    half-width never claims more precision than its mean: 1.02 ± 0.08, 884 ± 71, 22,721 ± 1,833."""
    decimals = len(reference.partition(".")[2])
    text = f"{value:,.{decimals}f}"
    return text if any(c not in "0.," for c in text) else num(value)


def half_width(metric: MetricInfo, value: Value) -> str | None:
    """The 95 % interval's half-width in display units, to the mean's precision (None: 1 run)."""
    if value.ci_low is None or value.ci_high is None or value.n < 2:
        return None
    return like((value.ci_high - value.ci_low) / 2 * metric.scale, metric_value(metric, value.mean))


def value_text(metric: MetricInfo, value: Value | None, *, unit: bool = True) -> str:
    """'12,345 ± 250 IOPS (n=3)' or '12,345 IOPS (1 run)'."""
    if value is None:
        return DASH
    text = metric_value(metric, value.mean)
    half = half_width(metric, value)
    if half is not None:
        text += f" ± {half}"
    if unit:
        text += f" {metric.unit}"
    return text + (f" (n={value.n})" if half is not None else f" ({ONE_RUN})")


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
    """The delta with how to read it: '+12 % better', '+2 % (within noise)', '+12 % (1 run)'."""
    if delta is None:
        return DASH
    text = pct(delta.pct)
    if delta.noise == "overlap":
        return f"{text} (within noise)"
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

"""The words and table rows the HTML and Markdown renderings share for trends (history, band,
change points, possible causes) and latency-vs-load curves, so both say the same thing."""

from __future__ import annotations

from storagebench.analysis.changepoints import STRICT_PVALUE
from storagebench.analysis.regressions import DEFAULT_K, DEFAULT_MIN_EFFECT
from storagebench.report.fmt import DASH, metric_title, metric_value, num, pct
from storagebench.report.model import Curve, Report, Trend, TrendChange
from storagebench.report.trends import MIN_EARLIER_RUNS

__all__ = [
    "CHANGES_HEAD",
    "CURVE_HEAD",
    "NO_HISTORY",
    "change_row",
    "curve_rows",
    "curves_intro",
    "trend_summary",
    "trends_intro",
]

NO_HISTORY = "no history yet"
CHANGES_HEAD = [
    "Config",
    "Workload",
    "Metric",
    "From run",
    "Before",
    "After",
    "Change",
    "p",
    "Possible cause",
]
CURVE_HEAD = ["load", "IOPS", "p50 ms", "p95 ms", "p99 ms", "n"]


def trends_intro(report: Report) -> str:
    return (
        f"Each headline number over the suite's runs: this run and up to {report.trend_runs} earlier "
        "one(s), oldest first, each the mean of its repetitions (as in the table above). The shaded band "
        "is the regression check's noise band of the earlier runs (the median plus or minus "
        f"max({DEFAULT_K:g} MAD, {DEFAULT_MIN_EFFECT:.0%} of the median), from 3 runs); dashed lines are "
        "change points found by "
        f"E-Divisive means (energy statistics, permutation test at p ≤ {STRICT_PVALUE:g}). Where fio, the "
        "kernel, the image, the instance or the storage changed at a change point it is named as a "
        "possible cause."
    )


def _date(started_at: str) -> str:
    return started_at[:10] if len(started_at) >= 10 else started_at or "?"


def trend_summary(trend: Trend) -> str:
    """One sentence: how much history there is and where this run stands."""
    earlier = [p for p in trend.points if not p.is_current]
    metric = trend.metric
    now = trend.points[-1]
    if not trend.has_history:
        return (
            f"{NO_HISTORY}: {len(earlier)} earlier run(s) of the suite measured this, "
            f"{MIN_EARLIER_RUNS} are needed for a trend"
        )
    where = "no band yet (fewer than 3 earlier runs)"
    if trend.band is not None:
        low, high = trend.band
        inside = "inside" if low <= now.value <= high else "outside"
        where = f"{inside} the band {metric_value(metric, low)}–{metric_value(metric, high)} {metric.unit}"
    changes = f"{len(trend.changes)} change point(s)" if trend.changes else "no change point"
    return (
        f"{len(earlier)} earlier run(s); this run {metric_value(metric, now.value)} {metric.unit}, "
        f"{where}; {changes}"
    )


def _cause(change: TrendChange) -> str:
    if change.causes:
        return "possible cause: " + "; ".join(change.causes)
    return "no change of fio, kernel, image, instance or storage recorded there"


def change_row(trend: Trend, change: TrendChange) -> list[str]:
    metric = trend.metric
    return [
        trend.config_id,
        trend.name,
        metric_title(metric),
        f"{change.run_id} ({_date(change.started_at)})",
        metric_value(metric, change.before),
        metric_value(metric, change.after),
        pct(change.delta_pct),
        f"{change.p_value:.3f}",
        _cause(change),
    ]


def curves_intro() -> str:
    return (
        "Sweeps as curves: IOPS and p50/p95/p99 latency against the swept queue depth or job count "
        "(means over the repetitions of each level). The knee is where latency turns up: the start "
        "of the first step where p95 grows 1.5x or more per doubling of load and keeps growing that fast "
        "on average to the end of the sweep; the scaling is p95's growth per doubling fitted over the "
        "whole sweep (~1x flat: headroom; ~2x: saturated, extra load only "
        "queues)."
    )


def _ms(us: float | None) -> str:
    return DASH if us is None else num(us / 1000)


def curve_rows(curve: Curve) -> list[list[str]]:
    return [
        [
            f"{p.load:g}",
            DASH if p.iops is None else num(p.iops),
            _ms(p.p50_us),
            _ms(p.p95_us),
            _ms(p.p99_us),
            str(p.repetitions),
        ]
        for p in curve.points
    ]

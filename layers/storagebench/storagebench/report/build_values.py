"""What the report shows of one measurement: its value with its interval, the grade of its p95,
the workload's headline measurement (its intent's metric, then the next one measured), the
latency keys of its worst direction, percentiles and merged histograms, and bimodality in words.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

from storagebench.analysis.bimodal import detect_bimodal
from storagebench.analysis.grades import grade
from storagebench.analysis.stats import Aggregate, Summary, summarize
from storagebench.costs.frontier import representative_measure
from storagebench.costs.measures import INTENT_METRICS, MeasureKey, measurement_name
from storagebench.report.fmt import num
from storagebench.report.model import GradeInfo, Value
from storagebench.results.records import HistogramBucket, ResultRecord

MeasureIndex = dict[str, dict[MeasureKey, Aggregate]]
_RATE_FIRST = INTENT_METRICS["mixed"]


def measurement_text(
    key: MeasureKey, groups: Mapping[str, set[int | None]] | None = None, empty: str = "the only measurement"
) -> str:
    """The comparison's qualifier of a measurement; the fio job group only when the workload has
    several (every fio record carries one, usually 0)."""
    if groups is not None and len(groups.get(key.workload, ())) <= 1:
        key = key._replace(group=None)
    return measurement_name(key) or empty


def value_of(summary: Summary | None) -> Value | None:
    """A Summary's mean and interval (constructed unvalidated: the Summary was validated)."""
    if summary is None:
        return None
    return Value.model_construct(
        mean=summary.mean, ci_low=summary.ci95_low, ci_high=summary.ci95_high, n=summary.n
    )


def grade_info(p95_us: float, measurement: str) -> GradeInfo:
    found = grade(p95_us)
    return GradeInfo(
        letter=found.letter,
        p95_us=found.p95_us,
        threshold_us=found.threshold_us,
        rule=found.rule,
        measurement=measurement,
    )


def _same_point(a: MeasureKey, b: MeasureKey) -> bool:
    return (a.workload, a.target, a.variant, a.phase, a.group) == (
        b.workload,
        b.target,
        b.variant,
        b.phase,
        b.group,
    )


def latency_keys(aggs: Mapping[MeasureKey, Aggregate], key: MeasureKey) -> list[MeasureKey]:
    """The measurements at the headline's point that recorded latency (one per direction)."""
    return [k for k, a in aggs.items() if _same_point(k, key) and "lat_p95_us" in a.metrics]


def worst_p95(aggs: Mapping[MeasureKey, Aggregate], key: MeasureKey) -> MeasureKey | None:
    keys = latency_keys(aggs, key)
    return max(keys, key=lambda k: aggs[k].metrics["lat_p95_us"].mean) if keys else None


def headline_of(
    workload: str, intent: str, index: MeasureIndex, baseline: str
) -> tuple[str, MeasureKey] | tuple[None, None]:
    for metric in INTENT_METRICS.get(intent, _RATE_FIRST):
        key = representative_measure(workload, metric, index, baseline)
        if key is not None:
            return metric, key
    return None, None


def percentile_value(records: Sequence[ResultRecord], field: str) -> Value | None:
    values = [getattr(r.latency, field) for r in records if r.latency is not None]
    present = [float(v) for v in values if v is not None and math.isfinite(v)]
    return value_of(summarize(present, nonnegative=True)) if present else None


def merge_histograms(records: Sequence[ResultRecord]) -> list[tuple[float, int]]:
    counts: dict[float, int] = {}
    for record in records:
        for bucket in record.histogram or []:
            counts[bucket.le_us] = counts.get(bucket.le_us, 0) + bucket.count
    return sorted(counts.items())


def bimodal_text(buckets: list[tuple[float, int]]) -> str | None:
    try:
        found = detect_bimodal([HistogramBucket(le_us=le, count=count) for le, count in buckets])
    except ValueError:
        return None
    if found is None:
        return None
    return (
        f"two latency modes: ~{num(found.low_mode_us / 1000)} ms ({found.low_mass:.0%} of I/O) and "
        f"~{num(found.high_mode_us / 1000)} ms ({found.high_mass:.0%})"
    )

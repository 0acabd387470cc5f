"""What a run's report shows, already computed: the renderers only lay it out.

Every number is in the unit its name says (records' units: IOPS, MiB/s, microseconds, seconds,
USD); ``MetricInfo`` says how each metric is displayed (latency in ms) and which way is better.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from storagebench.analysis.curves import CurvePoint, LoadKnee
from storagebench.core.series import ConfigRepetitions
from storagebench.costs.recommend import Recommendation
from storagebench.report.surface_models import Surface
from storagebench.results.records import SlaProbe

Noise = Literal["outside", "overlap", "unknown"]
Severity = Literal["error", "warning", "info"]


class _Model(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class MetricInfo(_Model):
    name: str = Field(description="the record metric, as analysis.stats.HEADLINE_METRICS names it")
    label: str
    unit: str = Field(description="display unit (latency in ms)")
    scale: float = Field(description="display value = stored value x scale")
    stored_unit: str = Field(description="the record's unit (CSV): IOPS, MiB/s, us, s")
    higher_is_better: bool


def _info(
    name: str, label: str, unit: str, higher: bool, scale: float = 1.0, stored: str | None = None
) -> MetricInfo:
    return MetricInfo(
        name=name, label=label, unit=unit, scale=scale, stored_unit=stored or unit, higher_is_better=higher
    )


METRIC_INFO: dict[str, MetricInfo] = {
    "iops": _info("iops", "IOPS", "IOPS", True),
    "bw_mibps": _info("bw_mibps", "throughput", "MiB/s", True),
    "lat_mean_us": _info("lat_mean_us", "mean latency", "ms", False, 1e-3, "us"),
    "lat_p50_us": _info("lat_p50_us", "p50 latency", "ms", False, 1e-3, "us"),
    "lat_p90_us": _info("lat_p90_us", "p90 latency", "ms", False, 1e-3, "us"),
    "lat_p95_us": _info("lat_p95_us", "p95 latency", "ms", False, 1e-3, "us"),
    "lat_p99_us": _info("lat_p99_us", "p99 latency", "ms", False, 1e-3, "us"),
    "lat_p999_us": _info("lat_p999_us", "p99.9 latency", "ms", False, 1e-3, "us"),
    "runtime_s": _info("runtime_s", "I/O time", "s", False),
    "real_s": _info("real_s", "run time", "s", False),
}
"""How each metric is labelled and displayed (latency stored in us, shown in ms)."""


class Value(_Model):
    """A repetition mean with its Student-t 95 % interval (None with a single repetition)."""

    mean: float
    ci_low: float | None = None
    ci_high: float | None = None
    n: int = Field(ge=1)


class Delta(_Model):
    """Against the baseline's same measurement, judged as ``costs.compare`` judges it."""

    pct: float | None = Field(description="(mean - baseline mean) / |baseline mean| x 100")
    noise: Noise = Field(
        description="outside: significant (Welch, p < 0.05); overlap: not significant; unknown: 1 run"
    )
    better: bool | None = Field(description="None within the noise or when equal")


class GradeInfo(_Model):
    letter: Literal["A", "B", "C", "D"]
    p95_us: float
    threshold_us: float
    rule: str = Field(description="e.g. 'p95 1.50 ms < 2.00 ms -> A'")
    measurement: str = Field(description="which measurement was graded (its worst direction)")


class Cell(_Model):
    """One config's headline result on one workload."""

    workload: str
    value: Value | None
    delta: Delta | None
    grade: GradeInfo | None
    flags: list[str] = Field(default_factory=list, description="short warnings shown in the cell")
    regressions: list[str] = Field(default_factory=list, description="flagged regressions of this cell")


class ConfigRow(_Model):
    config_id: str
    is_baseline: bool
    status: str = Field(description="succeeded, partial, failed, or what the store last recorded")
    storage_option: str = Field(description="e.g. 'gp3 1,000 GiB, 3,000 IOPS, 125 MiB/s, xfs'")
    storage_detail: str = Field(description="the catalog's envelope of each target, for a tooltip")
    instance_type: str | None
    monthly_usd: float | None
    delta_monthly_pct: float | None
    storage_only_usd: float | None = Field(
        default=None, description="the targets alone: no instances, no root volumes"
    )
    delta_storage_pct: float | None = Field(
        default=None, description="storage_only_usd against the baseline's, percent"
    )
    cost_partial: bool
    run_cost_usd: float | None
    verdict: str
    records: int
    cells: list[Cell]
    errors: list[str] = Field(default_factory=list)
    environment: list[str] = Field(default_factory=list, description="labels such as emulated:gp2:100GiB")


class WorkloadInfo(_Model):
    id: str
    name: str
    intent: str
    metric: MetricInfo | None = Field(description="the headline metric; None when nothing was measured")
    measurement: str = Field(description="the measurement compared across configs, '' when the only one")


class MeasurementRow(_Model):
    """Every aggregated measurement (CSV): one per config, target, workload, variant, phase, direction."""

    config_id: str
    storage_option: str
    workload: str
    target_id: str
    variant: str
    phase: str
    direction: str
    group: int | None
    metrics: dict[str, Value]
    delta_pct: dict[str, float | None] = Field(
        description="metric -> delta vs the baseline's same measurement"
    )
    grade: str | None
    labels: list[str]
    monthly_usd: float | None
    warnings: list[str] = Field(default_factory=list)


class LatencyRow(_Model):
    config_id: str
    workload: str
    measurement: str
    n: int
    mean_us: Value | None
    p50_us: Value | None
    p90_us: Value | None
    p95_us: Value | None
    p99_us: Value | None
    p999_us: Value | None
    grade: GradeInfo | None


class Histogram(_Model):
    """Latency histogram of one measurement, repetitions summed (log buckets, 4 per octave)."""

    config_id: str
    workload: str
    measurement: str
    buckets: list[tuple[float, int]] = Field(description="(upper bound us, I/O count), ascending")
    total: int
    p50_us: float | None
    p95_us: float | None
    p99_us: float | None
    bimodal: str | None = Field(default=None, description="e.g. 'two modes: ~1.0 ms and ~20 ms'")


class SeriesLine(_Model):
    label: str
    t0_s: float
    interval_s: float
    iops: list[float | None]
    knee_s: float | None


class SeriesChart(_Model):
    config_id: str
    workload: str
    measurement: str
    lines: list[SeriesLine]
    omitted: int = Field(default=0, description="series not drawn (kept to a readable few)")


class Bar(_Model):
    config_id: str
    value: Value
    is_baseline: bool


class BarChart(_Model):
    workload: str
    name: str
    metric: MetricInfo
    measurement: str
    bars: list[Bar]
    missing: list[str] = Field(default_factory=list, description="configs without this measurement")


class ScatterPoint(_Model):
    config_id: str
    monthly_usd: float
    value: float
    on_frontier: bool
    is_baseline: bool


class Scatter(_Model):
    workload: str
    name: str
    metric: MetricInfo
    measurement: str
    points: list[ScatterPoint]
    frontier: list[str] = Field(description="configs on the Pareto frontier, cheapest first")
    missing: list[str] = Field(default_factory=list)


class Finding(_Model):
    """Something the reader must not miss: a failure, a caveat on a number, a regression."""

    severity: Severity
    category: str = Field(
        description="config, collect, delivery, burst, latency, regression, cost, data, spot, repetitions"
    )
    config_id: str | None = None
    workload: str | None = None
    text: str


class RegressionRow(_Model):
    storage_option: str
    config_ids: list[str]
    workload: str
    measurement: str
    metric: MetricInfo
    verdict: str
    value: float
    baseline: float | None
    delta_pct: float | None
    band: tuple[float, float] | None
    history_n: int
    repetitions: int


class TrendPoint(_Model):
    """One run's value of a headline metric (the repetition mean, in the metric's stored unit)."""

    run_id: str
    started_at: str
    value: float
    is_current: bool
    environment: dict[str, str] = Field(
        default_factory=dict, description="what the run measured on (analysis.environment.FACTS)"
    )


class TrendChange(_Model):
    """A change point of the history (E-Divisive means): the metric differs from ``run_id`` on."""

    run_id: str = Field(description="the first run after the change")
    started_at: str
    index: int = Field(description="position of that run among the trend's points")
    before: float = Field(description="mean of the segment before, stored unit")
    after: float
    delta_pct: float | None
    p_value: float
    causes: list[str] = Field(
        default_factory=list, description="environment changes at this point, e.g. 'fio 3.35 -> 3.36'"
    )


class Trend(_Model):
    """The history of one config's headline metric on one workload, this run last."""

    config_id: str
    workload: str
    name: str
    metric: MetricInfo
    measurement: str
    points: list[TrendPoint] = Field(description="oldest first; this run is the last")
    band: tuple[float, float] | None = Field(
        description="the regression check's noise band from the earlier runs (None below its minimum)"
    )
    changes: list[TrendChange]
    notes: list[str] = Field(default_factory=list, description="what the history lacks or mixes")

    @property
    def has_history(self) -> bool:
        return sum(1 for p in self.points if not p.is_current) >= 2


class Curve(_Model):
    """A sweep's latency against load for one config (fio-plot's latency-vs-load chart)."""

    config_id: str
    workload: str
    name: str
    measurement: str = Field(description="the direction (and target) the points are of")
    axis: str = Field(description="iodepth or numjobs")
    axis_label: str
    points: list[CurvePoint]
    knee: LoadKnee | None
    p95_per_doubling: float | None = Field(description="analysis.grades.load_scaling's ratio")
    scaling: str | None = Field(description="flat, rising or saturated")
    reading: str


class SlaRepetition(_Model):
    """One repetition's latency-SLA search, read: the answer, where the limit lies, why it stopped."""

    repetition: int
    met: bool = Field(description="some probed rate met the SLA")
    sustained_iops: float | None = Field(description="IOPS achieved at the highest rate that met it")
    latency_us: float = Field(
        description="the searched percentile at the answer probe (the lowest rate's when not met)"
    )
    answer: str = Field(description="e.g. 'sustains 2,796 IOPS at p99 0.981 ms (asked 2,812 IOPS)'")
    bracket: str = Field(description="where the limit lies, in rates asked of fio")
    bracket_iops: list[int] = Field(
        description="[highest rate met, lowest rate missed] asked of fio; one rate when a bound decided"
    )
    stopped: str = Field(description="why the search ended, in words")
    stop: str = Field(description="why the search ended, as the agent names it (protocol.sla STOP_*)")
    answer_probe: int | None = Field(description="the probe the answer is (None when not met)")
    above_range: bool = Field(description="even the highest rate probed met the SLA: the limit is higher")
    probes: list[SlaProbe] = Field(description="every probe, in the order run")


class SlaLimit(_Model):
    """A latency-SLA search of one config and workload (one per target and sweep point when several),
    with the answer over its repetitions."""

    config_id: str
    workload: str
    name: str
    measurement: str = Field(description="target and sweep point when the workload has several, else ''")
    percentile: float
    target_us: float
    sla: str = Field(description="e.g. 'p99 <= 1 ms'")
    answer: str = Field(description="the repetitions' answers in one sentence (their range when several)")
    repetitions: list[SlaRepetition] = Field(min_length=1)


class Header(_Model):
    run_id: str
    suite: str | None
    name: str | None
    description: str | None
    status: str | None
    started_at: str | None
    ended_at: str | None
    duration_s: float | None
    region: str | None
    baseline: str | None
    price_source: str | None
    price_date: str | None
    repetitions: int | None = Field(
        default=None, description="repetitions planned per workload: the count, or an adaptive series' max"
    )
    repetitions_shown: str | None = Field(
        default=None,
        description='as the header reads: "3", or "2-4, until the 95 % interval\'s half-width is under '
        '5 % of the mean"',
    )
    records: int
    run_cost_usd: float | None
    run_cost_source: str | None = None


class Report(_Model):
    header: Header
    workloads: list[WorkloadInfo]
    configs: list[ConfigRow]
    measurements: list[MeasurementRow]
    latency: list[LatencyRow]
    histograms: list[Histogram]
    series: list[SeriesChart]
    bars: list[BarChart]
    scatters: list[Scatter]
    warnings: list[Finding]
    regressions: list[RegressionRow] = Field(description="flagged verdicts, regressions first")
    regression_counts: dict[str, int] = Field(description="verdict -> number of metrics compared")
    notes: list[str] = Field(default_factory=list)
    recommendation: Recommendation | None = Field(
        default=None, description="when the request has requirements: the cheapest config meeting them"
    )
    trends: list[Trend] = Field(
        default_factory=list, description="each headline metric's history over the suite's last runs"
    )
    trend_runs: int = Field(default=0, description="earlier runs of the suite the trends read")
    curves: list[Curve] = Field(default_factory=list, description="sweeps: latency against load")
    sla_limits: list[SlaLimit] = Field(
        default_factory=list, description="latency-SLA searches: the highest IOPS under each target"
    )
    surfaces: list[Surface] = Field(
        default_factory=list, description="each config matrix as grids along its axes (report.surfaces)"
    )
    repetition_stops: list[ConfigRepetitions] = Field(
        default_factory=list,
        description="how each config's repetitions stopped: adaptive series and fio's steady-state verdicts",
    )

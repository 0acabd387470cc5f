"""Regression detection: this run's measurements against the last runs of the same suite.

A *series* is one measurement of one storage option across runs: storage option (the
``storage_option`` label, which includes the instance type), workload, variant, phase, direction
and fio job group. Within a run, a series' value for a metric is the **mean over its
repetitions** (the number the run publishes); the history holds one such value per earlier
run, so one run with more repetitions does not weigh more than another.

The verdict is ``classify_change`` of ``analysis.stats``: the value leaves the robust noise
band, median +- max(k * MAD, min_effect * |median|), in the direction that matters for the
metric. With fewer than ``min_history`` earlier runs (3 by default) the verdict is
``"insufficient history"`` and nothing is flagged: two points give no spread to judge by.

Where the history comes from (``compute_regressions``, over the ``HistoryStore`` protocol the
results store satisfies):

1. this run's results (``get_run``), limited to the configs that measured something;
2. the last ``runs`` runs of the same suite that started before this one (GSI1, newest first,
   ``list_runs_page``);
3. every series value of those runs from the suite's digest (``series_digests``: one Query
   between the oldest of those runs and this run's start, whatever the number of series);
4. only for earlier runs stored in the previous layout (no ``layout`` on the run item, so no
   digest), per series one GSI2 Query over the same range (``metric_history``, filtered to the
   suite, projected to the metrics), keeping only points of those runs. Once the suite's last
   ``runs`` runs are all in the current layout, this step issues nothing.

Every step is bounded: a time budget stops querying (the series left are reported, not
guessed), so the Finalize Lambda cannot time out on a suite with thousands of series.
"""

from __future__ import annotations

import math
import statistics
import time
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from typing import Any, NamedTuple, Protocol

from pydantic import BaseModel, ConfigDict, Field

from storagebench.analysis.stats import classify_change
from storagebench.core.regression import INSUFFICIENT, Regression
from storagebench.results.records import ResultRecord
from storagebench.store import keys
from storagebench.store.keys import variant_text
from storagebench.store.models import (
    HistoryPoint,
    StoredResult,
    decode_run,
    finite,
    measured_metrics,
    record_metrics,
)

__all__ = [
    "DEFAULT_K",
    "DEFAULT_MIN_EFFECT",
    "DEFAULT_MIN_HISTORY",
    "DEFAULT_RUNS",
    "METRICS",
    "HistoryStore",
    "RegressionReport",
    "SeriesAggregate",
    "SeriesKey",
    "aggregate_results",
    "canonical_variant",
    "compute_regressions",
    "detect",
    "digest_points",
    "metric_value",
    "per_run_means",
    "series_key",
    "stored_variant",
]

# Simulated on stable data with 3 % run-to-run noise, k = 3 over 10 runs flags ~3.7 % of metrics
# (a few false alarms every night on a real suite); k = 4 over 20 runs well under 1 %. The price:
# a change must leave max(4 MAD, 5 %), i.e. > 5 % on a throttled EBS volume (noise ~1 %) but
# > ~12 % at 3 % noise (tests/unit/analysis/test_regressions.py::test_false_alarms_and_power).
DEFAULT_RUNS = 20
DEFAULT_MIN_HISTORY = 3
DEFAULT_K = 4.0
DEFAULT_MIN_EFFECT = 0.05
DEFAULT_BUDGET_S = 60.0  # Finalize's Lambda has 120 s; the rest is for writing the verdicts

METRICS: dict[str, bool] = {
    "iops": True,
    "bw_mibps": True,
    "lat_mean_us": False,
    "lat_p95_us": False,
    "lat_p99_us": False,
    "real_s": False,
}
"""Metric name -> higher is better. Throughput up is good; latency and elapsed time up are bad."""

HISTORY_FIELDS = ("iops", "bw_mibps", "latency", "real_s", "group", "repetition")
"""The record fields the history needs (not its histogram): what ``metric_history`` projects."""


def metric_value(record: Mapping[str, Any], metric: str) -> float | None:
    """One metric of a record in its JSON form (``ResultRecord.model_dump(mode="json")``)."""
    return record_metrics(record).get(metric)


def canonical_variant(variant: Mapping[str, Any] | str | None) -> str:
    """The variant as the series key spells it: ``k=v`` sorted and comma-joined, ``-`` when empty."""
    return "-" if variant is None else variant_text(variant)


class SeriesKey(NamedTuple):
    storage_option: str
    workload: str
    variant: str
    phase: str
    direction: str
    group: int | None


def stored_variant(record: ResultRecord, record_key: object = None) -> str:
    """The variant as it was spelled when the result was written.

    A stored number loses its type (DynamoDB keeps ``1.0`` as ``1``), so a variant like
    ``{"ratio": 1.0}`` read back would spell ``ratio=1`` while its series key says ``ratio=1.0``.
    The result item's ``record_key`` (``<target>#<workload>#<variant>#<phase>#<dir>#<group>#r<rep>``)
    keeps the original spelling: it is used when it matches the record.
    """
    if isinstance(record_key, str):
        spelled = keys.spelled_variant(
            record_key,
            record.target_id,
            record.workload,
            record.phase,
            record.direction,
            record.group,
            record.repetition,
        )
        if spelled is not None:
            return spelled
    return canonical_variant(record.variant)


def series_key(result: StoredResult) -> SeriesKey | None:
    """The series a stored result belongs to; None without a storage option (no history)."""
    if result.storage_option is None:
        return None
    record = result.record
    return SeriesKey(
        storage_option=result.storage_option,
        workload=record.workload,
        variant=stored_variant(record, result.record_key),
        phase=record.phase,
        direction=record.direction,
        group=record.group,
    )


class SeriesAggregate(BaseModel):
    """This run's repetitions of one series: the mean of each metric present."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    key: SeriesKey
    config_ids: list[str]
    repetitions: int = Field(ge=1)
    metrics: dict[str, float] = Field(description="metric -> mean over the repetitions that have it")


def _means(measured: Sequence[Mapping[str, float]]) -> dict[str, float]:
    """metric -> mean over the repetitions that have it."""
    means: dict[str, float] = {}
    for metric in METRICS:
        values = [m[metric] for m in measured if metric in m]
        if values:
            means[metric] = math.fsum(values) / len(values)
    return means


def aggregate_results(
    results: Iterable[StoredResult], config_ids: Collection[str] | None = None
) -> dict[SeriesKey, SeriesAggregate]:
    """Group stored results (``decode_run(get_run(...)).results``) by series; those without a
    storage option are skipped (they have no history to compare with)."""
    members: dict[SeriesKey, list[dict[str, float]]] = {}
    configs: dict[SeriesKey, list[str]] = {}
    for result in results:
        config_id = result.config_id
        if config_ids is not None and config_id not in config_ids:
            continue
        key = series_key(result)
        if key is None:
            continue
        members.setdefault(key, []).append(measured_metrics(result.record))
        if config_id not in configs.setdefault(key, []):
            configs[key].append(config_id)
    return {
        key: SeriesAggregate(
            key=key, config_ids=configs[key], repetitions=len(measured), metrics=_means(measured)
        )
        for key, measured in members.items()
    }


def per_run_means(
    points: Iterable[HistoryPoint], group: int | None = None, runs: Collection[str] | None = None
) -> list[dict[str, float]]:
    """History points (decoded ``metric_history`` answers) -> one {metric: mean} per run, oldest
    run first. Only points of ``group`` (fio job group, None for most records) and, when given,
    of ``runs``."""
    by_run: dict[str, tuple[str, list[dict[str, float]]]] = {}
    for point in points:
        if runs is not None and point.run_id not in runs:
            continue
        if point.group != group:
            continue
        by_run.setdefault(point.run_id, (point.started_at, []))[1].append(point.metrics)
    return [_means(measured) for _, (_, measured) in sorted(by_run.items(), key=lambda e: (e[1][0], e[0]))]


def detect(
    current: Mapping[SeriesKey, SeriesAggregate],
    history: Mapping[SeriesKey, Sequence[Mapping[str, float]]],
    *,
    min_history: int = DEFAULT_MIN_HISTORY,
    k: float = DEFAULT_K,
    min_effect: float = DEFAULT_MIN_EFFECT,
) -> list[Regression]:
    """One verdict per series and metric of ``current`` (history: per-run metric means)."""
    if min_history < 1:
        raise ValueError("min_history must be at least 1")
    verdicts: list[Regression] = []
    for key, aggregate in current.items():
        runs = history.get(key, ())
        for metric, higher_is_better in METRICS.items():
            if metric not in aggregate.metrics:
                continue
            value = aggregate.metrics[metric]
            past = [run[metric] for run in runs if metric in run]
            common: dict[str, Any] = {
                **key._asdict(),
                "metric": metric,
                "higher_is_better": higher_is_better,
                "value": value,
                "repetitions": aggregate.repetitions,
                "config_ids": list(aggregate.config_ids),
            }
            if len(past) < min_history:
                verdicts.append(
                    Regression(
                        **common,
                        verdict=INSUFFICIENT,
                        flagged=False,
                        baseline=statistics.median(past) if past else None,
                        delta_pct=None,
                        band=None,
                        history_n=len(past),
                    )
                )
                continue
            change = classify_change(value, past, higher_is_better, k=k, min_effect=min_effect)
            verdicts.append(
                Regression(
                    **common,
                    verdict=change.verdict,
                    flagged=change.verdict != "none",
                    baseline=change.baseline,
                    delta_pct=change.delta_pct,
                    band=change.band,
                    history_n=change.history_n,
                )
            )
    return verdicts


def severity(regression: Regression) -> tuple[int, float]:
    """Sort key: regressions first, then improvements, then the rest; larger changes first."""
    rank = {"regression": 0, "improvement": 1, "none": 2}.get(regression.verdict, 3)
    return (rank, -abs(regression.delta_pct or 0.0))


# ------------------------------------------------------------------------ with a store


class MetricHistory(Protocol):
    """One series' repetitions from the results store, newest first (``ResultsStore.metric_history``):
    what the regression check and a recommendation from history read."""

    def metric_history(
        self,
        storage_option: str,
        workload: str,
        variant: Mapping[str, Any] | str,
        phase: str,
        direction: str,
        since: str,
        until: str | None = None,
        limit: int = 1000,
        *,
        suite: str | None = None,
        fields: Sequence[str] | None = None,
    ) -> list[dict[str, Any]]: ...


class HistoryStore(MetricHistory, Protocol):
    """What regression detection reads from the results store (``DynamoResultsStore`` has it)."""

    def get_run(self, run_id: str) -> dict[str, Any]: ...

    def series_digests(self, suite: str, since: str, until: str) -> list[dict[str, Any]]: ...

    def list_runs_page(
        self, suite: str, limit: int = 10, cursor: str | None = None
    ) -> tuple[list[dict[str, Any]], str | None]: ...


class RegressionReport(BaseModel):
    model_config = ConfigDict(extra="forbid")

    run_id: str
    baseline_runs: list[str] = Field(
        default_factory=list, description="earlier runs of the suite, newest first"
    )
    verdicts: list[Regression] = Field(default_factory=list, description="every series and metric compared")
    series: int = 0
    series_compared: int = 0
    queries: int = 0
    notes: list[str] = Field(default_factory=list)

    @property
    def flagged(self) -> list[Regression]:
        return sorted((v for v in self.verdicts if v.flagged), key=severity)

    def counts(self) -> dict[str, int]:
        counts = {"regression": 0, "improvement": 0, "none": 0, INSUFFICIENT: 0}
        for verdict in self.verdicts:
            counts[verdict.verdict] += 1
        return counts

    def summary_line(self) -> str:
        c = self.counts()
        return (
            f"regressions: {self.series_compared} of {self.series} series compared with up to "
            f"{len(self.baseline_runs)} earlier run(s): {c['regression']} regression(s), "
            f"{c['improvement']} improvement(s), {c['none']} within noise, {c[INSUFFICIENT]} with "
            "insufficient history"
        )


def _sort_key(run: Mapping[str, Any]) -> tuple[str, str]:
    return (str(run.get("started_at", "")), str(run.get("run_id", "")))


def earlier_runs(
    store: HistoryStore, suite: str, run_id: str, started_at: str, runs: int, max_pages: int = 20
) -> list[dict[str, Any]]:
    """The last ``runs`` runs of the suite that started before this one, newest first (GSI1)."""
    mine = (started_at, run_id)
    found: list[dict[str, Any]] = []
    cursor: str | None = None
    for _ in range(max_pages):
        page, cursor = store.list_runs_page(suite, limit=runs + 1, cursor=cursor)
        for run in page:
            if run.get("run_id") != run_id and _sort_key(run) < mine:
                found.append(run)
                if len(found) == runs:
                    return found
        if cursor is None:
            break
    return found


def compute_regressions(
    store: HistoryStore,
    run_id: str,
    suite: str,
    started_at: str,
    config_ids: Collection[str] | None = None,
    *,
    runs: int = DEFAULT_RUNS,
    min_history: int = DEFAULT_MIN_HISTORY,
    k: float = DEFAULT_K,
    min_effect: float = DEFAULT_MIN_EFFECT,
    budget_s: float = DEFAULT_BUDGET_S,
    history_limit: int = 1000,
    clock: Callable[[], float] = time.monotonic,
) -> RegressionReport:
    """Every series of this run (configs in ``config_ids``) against the suite's last ``runs`` runs.

    Store errors propagate: the caller decides (Finalize records them and carries on).
    """
    if runs < 1:
        raise ValueError("runs must be at least 1")
    deadline = clock() + budget_s
    report = RegressionReport(run_id=run_id)
    stored = decode_run(store.get_run(run_id))
    current = aggregate_results(stored.results, config_ids)
    report.series = len(current)
    report.queries = 1
    if not current:
        report.notes.append("regressions: no stored result carries a storage option; nothing to compare")
        return report
    baseline = earlier_runs(store, suite, run_id, started_at, runs)
    report.baseline_runs = [str(r.get("run_id")) for r in baseline]
    history: dict[SeriesKey, list[dict[str, float]]] = {}
    if baseline:
        since = min(str(r.get("started_at", "")) for r in baseline)
        # sort keys are <started>#<run>...: ending the range at <started>#<run> keeps an earlier
        # run that started in the same second as this one, and leaves this run out
        until = keys.started_sk(started_at, run_id)
        allowed = set(report.baseline_runs)
        digested = {str(r.get("run_id")) for r in baseline if _in_current_layout(r)}
        points: dict[tuple[str, str, str, str, str], list[HistoryPoint]] = {}
        if digested:
            digests = store.series_digests(suite, since, until)
            report.queries += 1
            for partition, found in digest_points(digests, digested).items():
                points.setdefault(partition, []).extend(found)
        previous = allowed - digested
        if previous:
            current = _previous_layout_points(
                store,
                report,
                current,
                points,
                suite,
                since,
                until,
                previous,
                deadline,
                budget_s,
                clock,
                history_limit,
            )
        for key in current:
            history[key] = per_run_means(points.get(key[:5], []), key.group, allowed)
    report.verdicts = detect(current, history, min_history=min_history, k=k, min_effect=min_effect)
    report.series_compared = len(current)
    report.notes.insert(0, report.summary_line())
    return report


def _in_current_layout(run: Mapping[str, Any]) -> bool:
    """Whether a run item says its results are in the current layout (so in the suite's digest)."""
    layout = run.get("layout")
    return isinstance(layout, int) and not isinstance(layout, bool) and layout >= keys.LAYOUT


def digest_points(
    digests: Iterable[Mapping[str, Any]], runs: Collection[str]
) -> dict[tuple[str, str, str, str, str], list[HistoryPoint]]:
    """The suite's digest items (``series_digests``) as history points per series partition
    (storage option, workload, variant, phase, direction), only of ``runs``. A repetition written
    twice (a retried or re-launched collection) counts once: the latest write wins."""
    latest: dict[tuple[Any, ...], tuple[tuple[str, str, str, str, str], HistoryPoint]] = {}
    for digest in sorted(digests, key=lambda d: str(d.get("written_at") or "")):
        run_id = str(digest.get("run_id"))
        option = digest.get("storage_option")
        if run_id not in runs or not isinstance(option, str):
            continue
        for entry in digest.get("series") or []:
            if not isinstance(entry, list) or len(entry) != 7 or not isinstance(entry[6], Mapping):
                continue
            workload, variant, phase, direction, group, repetition, metrics = entry
            if group is not None and not isinstance(group, int):
                continue
            partition = (option, str(workload), str(variant), str(phase), str(direction))
            point = HistoryPoint(
                started_at=str(digest.get("started_at", "")),
                run_id=run_id,
                config_id=str(digest.get("config_id")) if digest.get("config_id") else None,
                repetition=repetition if isinstance(repetition, int) else None,
                group=group,
                metrics={k: v for k in METRICS if (v := finite(metrics.get(k))) is not None},
            )
            latest[(run_id, point.config_id, *partition, group, point.repetition)] = (partition, point)
    grouped: dict[tuple[str, str, str, str, str], list[HistoryPoint]] = {}
    for partition, point in latest.values():
        grouped.setdefault(partition, []).append(point)
    return grouped


def _previous_layout_points(
    store: HistoryStore,
    report: RegressionReport,
    current: dict[SeriesKey, SeriesAggregate],
    points: dict[tuple[str, str, str, str, str], list[HistoryPoint]],
    suite: str,
    since: str,
    until: str,
    runs: Collection[str],
    deadline: float,
    budget_s: float,
    clock: Callable[[], float],
    history_limit: int,
) -> dict[SeriesKey, SeriesAggregate]:
    """Points of earlier runs in the previous layout: one GSI2 Query per series partition (fio job
    groups share one), within the time budget. Returns the series that could be compared: those
    whose partition was read (the rest are reported in a note, not guessed)."""
    partitions: dict[tuple[str, str, str, str, str], list[SeriesKey]] = {}
    for key in current:
        partitions.setdefault(key[:5], []).append(key)
    read: set[tuple[str, str, str, str, str]] = set()
    for done, (option, workload, variant, phase, direction) in enumerate(partitions):
        if clock() > deadline:
            left = len(partitions) - done
            report.notes.append(
                f"regressions: the {budget_s:g} s budget ran out; {left} of {len(partitions)} "
                "series partitions were not compared (their verdicts are missing)"
            )
            return {key: value for key, value in current.items() if key[:5] in read}
        found = store.metric_history(
            option,
            workload,
            variant,
            phase,
            direction,
            since,
            until,
            history_limit,
            suite=suite,
            fields=HISTORY_FIELDS,
        )
        report.queries += 1
        decoded = [p for p in map(HistoryPoint.decode, found) if p is not None and p.run_id in runs]
        points.setdefault((option, workload, variant, phase, direction), []).extend(decoded)
        read.add((option, workload, variant, phase, direction))
    return current

"""Regression detection: series aggregation, per-run history, verdicts, the store walk and Finalize."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from tests.support import workflow_fakes as wf
from tests.support.records import latency, result_record
from tests.support.runs import run_summary

from storagebench.analysis.regressions import (
    DEFAULT_K,
    DEFAULT_RUNS,
    METRICS,
    RegressionReport,
    SeriesAggregate,
    SeriesKey,
    aggregate_results,
    canonical_variant,
    compute_regressions,
    detect,
    earlier_runs,
    metric_value,
    per_run_means,
    severity,
)
from storagebench.analysis.stats import noise_band
from storagebench.core.errors import ThrottledError
from storagebench.core.regression import INSUFFICIENT, Regression
from storagebench.core.state import ConfigResult, RunSummary
from storagebench.results.records import ResultRecord
from storagebench.store.models import HistoryPoint, decode_results
from storagebench.workflow.steps import finalize as finalize_step
from storagebench.workflow.steps.finalize import REGRESSIONS_IN_SUMMARY, finalize

OPTION = "c5.large/ebs:gp3:100GiB:xfs"
KEY = SeriesKey(OPTION, "randread-4k", "bs=4k,iodepth=32", "run", "read", None)


def day(n: int) -> str:
    moment = datetime(2030, 1, 1, 2, tzinfo=UTC) + timedelta(days=n)
    return moment.isoformat().replace("+00:00", "Z")


def record(
    iops: float | None = 1000.0, mean_us: float = 500.0, repetition: int = 1, **extra: Any
) -> ResultRecord:
    lat = latency(mean_us * 1.2, samples=10, mean_us=mean_us, max_us=9e3, p99_us=mean_us * 1.5)
    names = {"target_id": "data", "workload": "randread-4k", "profile": "fio-randread"}
    values: dict[str, Any] = {**names, "variant": {"iodepth": 32, "bs": "4k"}, "bytes": 1, "runtime_s": 60.0}
    values.update(
        repetition=repetition, latency=lat, iops=iops, bw_mibps=None if iops is None else iops / 256
    )
    return result_record(**{**values, **extra})


def stored(rec: ResultRecord, option: str | None = OPTION, config_id: str = "gp3") -> dict[str, Any]:
    """A result as get_run returns it."""
    labels = {"storage_option": option, "suite": "nightly"} if option else {"suite": "nightly"}
    return {"config_id": config_id, "labels": labels, "record": rec.model_dump(mode="json")}


def point(run_id: str, started: str, rec: ResultRecord) -> dict[str, Any]:
    """A history point as metric_history returns it."""
    return {
        "started_at": started,
        "run_id": run_id,
        "config_id": "gp3",
        "repetition": rec.repetition,
        "labels": {"storage_option": OPTION},
        "record": rec.model_dump(mode="json"),
    }


# ============================================================================ reading metrics


def test_metric_value_reads_throughput_latency_and_time() -> None:
    doc = record(iops=2048.0, mean_us=400.0, real_s=12.5).model_dump(mode="json")
    assert metric_value(doc, "iops") == 2048.0
    assert metric_value(doc, "bw_mibps") == 8.0
    assert metric_value(doc, "lat_mean_us") == 400.0
    assert metric_value(doc, "lat_p95_us") == 480.0
    assert metric_value(doc, "lat_p99_us") == 600.0
    assert metric_value(doc, "real_s") == 12.5


@pytest.mark.parametrize(
    "doc",
    [{}, {"iops": None}, {"iops": True}, {"iops": "12"}, {"iops": float("nan")}, {"latency": None}],
)
def test_metric_value_is_none_when_absent_or_not_a_finite_number(doc: dict[str, Any]) -> None:
    assert metric_value(doc, "iops") is None and metric_value(doc, "lat_mean_us") is None


def test_which_way_is_better() -> None:
    assert {m for m, higher in METRICS.items() if higher} == {"iops", "bw_mibps"}
    assert {m for m, higher in METRICS.items() if not higher} == {
        "lat_mean_us",
        "lat_p95_us",
        "lat_p99_us",
        "real_s",
    }


def test_canonical_variant_matches_the_series_key_spelling() -> None:
    assert canonical_variant({"iodepth": 32, "bs": "4k"}) == "bs=4k,iodepth=32"
    assert canonical_variant({}) == canonical_variant(None) == canonical_variant("") == "-"
    assert canonical_variant("bs=4k") == "bs=4k"


# ============================================================================ this run


def test_aggregate_results_groups_by_series_and_averages_repetitions() -> None:
    results = [
        stored(record(iops=900.0, repetition=1)),
        stored(record(iops=1100.0, repetition=2)),
        stored(record(iops=1000.0, repetition=3), config_id="gp3-b"),  # same option in another config
        stored(record(iops=50.0, group=1)),  # another fio job group: another series
        stored(record(iops=70.0, workload="seqread")),
        stored(record(iops=1.0), option=None),  # no storage option: no history, skipped
    ]
    out = aggregate_results(decode_results(results, []))
    assert set(out) == {KEY, KEY._replace(group=1), KEY._replace(workload="seqread")}
    main = out[KEY]
    assert main.repetitions == 3 and main.config_ids == ["gp3", "gp3-b"]
    assert main.metrics["iops"] == pytest.approx(1000.0)
    assert main.metrics["lat_mean_us"] == pytest.approx(500.0)
    assert "real_s" not in main.metrics  # absent from every repetition
    assert aggregate_results(decode_results(results, []), config_ids=["gp3-b"])[KEY].repetitions == 1
    assert (
        aggregate_results(decode_results([{"labels": {"storage_option": OPTION}, "record": {"iops": 1}}], []))
        == {}
    )


def test_per_run_means_one_value_per_run_oldest_first() -> None:
    points_as_stored = [
        point("r2", day(2), record(iops=1200.0, repetition=1)),
        point("r2", day(2), record(iops=1000.0, repetition=2)),
        point("r1", day(1), record(iops=900.0)),
        point("r3", day(3), record(iops=10.0, group=4)),
        point("r0", day(0), record(iops=5.0)),
    ]
    points = [p for p in map(HistoryPoint.decode, points_as_stored) if p is not None]
    means = per_run_means(points)
    assert [m["iops"] for m in means] == [5.0, 900.0, 1100.0]
    assert [m["iops"] for m in per_run_means(points, runs={"r1", "r2"})] == [900.0, 1100.0]
    assert [m["iops"] for m in per_run_means(points, group=4)] == [10.0]


# ============================================================================ verdicts


def current(**metrics: float) -> dict[SeriesKey, SeriesAggregate]:
    return {KEY: SeriesAggregate(key=KEY, config_ids=["gp3"], repetitions=3, metrics=metrics)}


HISTORY = [{"iops": v, "lat_p99_us": v / 2} for v in (1000.0, 990.0, 1010.0, 1005.0, 995.0, 1020.0, 980.0)]


@pytest.mark.parametrize(
    ("metric", "value", "expected"),
    [
        ("iops", 700.0, "regression"),
        ("iops", 1300.0, "improvement"),
        ("iops", 1003.0, "none"),
        ("lat_p99_us", 650.0, "regression"),  # latency up is worse
        ("lat_p99_us", 350.0, "improvement"),
        ("lat_p99_us", 505.0, "none"),
    ],
)
def test_detect_flags_what_leaves_the_band_in_the_direction_that_matters(
    metric: str, value: float, expected: str
) -> None:
    (verdict,) = detect(current(**{metric: value}), {KEY: HISTORY})
    history = [h[metric] for h in HISTORY]
    assert verdict.verdict == expected and verdict.flagged == (expected != "none")
    assert verdict.metric == metric and verdict.history_n == len(HISTORY)
    assert verdict.baseline == pytest.approx(history[0])  # the median of the history
    assert verdict.band == pytest.approx(noise_band(history, k=DEFAULT_K))
    assert verdict.delta_pct == pytest.approx((value - verdict.baseline) / verdict.baseline * 100)
    assert (verdict.storage_option, verdict.workload, verdict.variant) == (OPTION, KEY.workload, KEY.variant)
    assert verdict.config_ids == ["gp3"] and verdict.repetitions == 3


def test_a_quiet_history_still_needs_the_minimum_effect() -> None:
    """MAD 0 (identical nights) would flag any change; the 5 % floor keeps noise-sized ones quiet."""
    flat = [{"iops": 1000.0}] * 5
    assert detect(current(iops=970.0), {KEY: flat})[0].verdict == "none"
    assert detect(current(iops=940.0), {KEY: flat})[0].verdict == "regression"
    assert detect(current(iops=970.0), {KEY: flat}, min_effect=0.01)[0].verdict == "regression"
    assert detect(current(iops=700.0), {KEY: HISTORY}, k=1000.0)[0].verdict == "none"


def _flag_rate(noise: float, change: float, trials: int = 2000, seed: int = 7) -> float:
    """Share of metrics flagged when a stable history (Gaussian noise) meets a shifted value."""
    rng = random.Random(seed)
    flagged = 0
    for _ in range(trials):
        history = [{"iops": 1000.0 * (1 + rng.gauss(0, noise))} for _ in range(DEFAULT_RUNS)]
        value = 1000.0 * (1 + change) * (1 + rng.gauss(0, noise))
        flagged += detect(current(iops=value), {KEY: history})[0].flagged
    return flagged / trials


def test_false_alarms_and_power() -> None:
    """The defaults: under 1 % false alarms on stable data, and real changes are still caught."""
    assert _flag_rate(noise=0.03, change=0.0) < 0.01  # a nightly suite of 100 metrics: < 1 a night
    assert _flag_rate(noise=0.01, change=0.0) < 0.01
    assert _flag_rate(noise=0.01, change=-0.08) > 0.95  # throttled volume: an 8 % drop is caught
    assert _flag_rate(noise=0.03, change=-0.20) > 0.95  # noisier option: a 20 % drop is caught


@pytest.mark.parametrize("runs", [0, 1, 2])
def test_fewer_than_three_runs_is_insufficient_history_not_a_flag(runs: int) -> None:
    (verdict,) = detect(current(iops=1.0), {KEY: HISTORY[:runs]})
    assert verdict.verdict == INSUFFICIENT and not verdict.flagged
    assert verdict.history_n == runs and verdict.band is None and verdict.delta_pct is None
    assert verdict.baseline == (
        None if runs == 0 else pytest.approx(sum(HISTORY[i]["iops"] for i in range(runs)) / runs)
    )
    assert "insufficient history" in verdict.describe()


def test_history_counts_runs_that_have_the_metric() -> None:
    history = [{"iops": 1000.0}, {"iops": 1001.0}, {"bw_mibps": 3.0}, {"iops": 999.0}]
    (verdict,) = detect(current(iops=500.0), {KEY: history})
    assert verdict.history_n == 3 and verdict.verdict == "regression"
    assert detect(current(iops=1.0), {KEY: history}, min_history=4)[0].verdict == INSUFFICIENT
    with pytest.raises(ValueError, match="min_history"):
        detect(current(iops=1.0), {}, min_history=0)


def test_a_zero_baseline_has_no_percentage() -> None:
    (verdict,) = detect(current(iops=5.0), {KEY: [{"iops": 0.0}] * 4})
    assert verdict.delta_pct is None and verdict.verdict == "improvement"
    assert "n/a" in verdict.describe()


def test_a_regression_round_trips_as_json_and_sorts_by_severity() -> None:
    verdicts = detect(current(iops=700.0, lat_p99_us=700.0, bw_mibps=1.0), {KEY: HISTORY})
    by_metric = {v.metric: v for v in verdicts}
    assert by_metric["bw_mibps"].verdict == INSUFFICIENT  # no history of bw_mibps
    for verdict in verdicts:
        assert Regression.model_validate_json(verdict.model_dump_json()) == verdict
    ordered = sorted(verdicts, key=severity)
    assert [v.metric for v in ordered] == ["lat_p99_us", "iops", "bw_mibps"]  # +40 %, -30 %, then the rest
    assert "regression 700 vs median 1000" in by_metric["iops"].describe()


# ============================================================================ the store walk


def seeded_store(runs: int = 6, suite: str = "nightly") -> Any:
    store = wf.FakeStore()
    for n in range(runs):
        run_id = f"n{n}"
        store.start_run(run_id, suite, {}, day(n), day(n + 1), ["gp3"])
        recs = [record(iops=1000.0 + (n % 3) * 5 + rep, repetition=rep) for rep in (1, 2)]
        store.put_results(run_id, "gp3", recs, day(n), {"storage_option": OPTION, "suite": suite})
        store.finish_run(run_summary(run_id, suite, day(n), day(n), records=2))
    return store


def add_run(store: Any, run_id: str, started: str, iops: float, suite: str = "nightly") -> None:
    store.start_run(run_id, suite, {}, started, started, ["gp3"])
    recs = [record(iops=iops, mean_us=500.0, repetition=rep) for rep in (1, 2)]
    store.put_results(run_id, "gp3", recs, started, {"storage_option": OPTION, "suite": suite})


def test_earlier_runs_are_the_suites_last_n_before_this_one() -> None:
    store = seeded_store(8)
    add_run(store, "now", day(5) + "x", 1.0)  # sorts between n5 and n6
    add_run(store, "other", day(4), 1.0, suite="weekly")
    found = earlier_runs(store, "nightly", "now", day(5) + "x", runs=3)
    assert [r["run_id"] for r in found] == ["n5", "n4", "n3"]
    assert [r["run_id"] for r in earlier_runs(store, "nightly", "now", day(5) + "x", runs=50)] == [
        f"n{n}" for n in range(5, -1, -1)
    ]


def test_compute_regressions_compares_with_the_last_runs_of_the_suite() -> None:
    store = seeded_store(12)
    add_run(store, "now", day(20), 600.0)
    add_run(store, "weekly", day(19), 600.0, suite="weekly")  # same series, another suite: ignored
    report = compute_regressions(store, "now", "nightly", day(20), ["gp3"], runs=10)
    assert report.baseline_runs == [f"n{n}" for n in range(11, 1, -1)]
    by_metric = {v.metric: v for v in report.verdicts}
    assert by_metric["iops"].verdict == "regression" and by_metric["iops"].history_n == 10
    assert by_metric["lat_mean_us"].verdict == "none"
    assert [v.metric for v in report.flagged] == ["iops", "bw_mibps"]
    assert report.series == report.series_compared == 1 and report.queries == 2
    assert report.counts()["regression"] == 2
    assert report.notes[0].startswith("regressions: 1 of 1 series compared with up to 10 earlier run(s)")


def test_compute_regressions_without_earlier_runs_or_labels() -> None:
    store = wf.FakeStore()
    add_run(store, "now", day(0), 600.0)
    report = compute_regressions(store, "now", "nightly", day(0))
    assert report.baseline_runs == [] and {v.verdict for v in report.verdicts} == {INSUFFICIENT}
    store.results[0].labels.pop("storage_option")
    empty = compute_regressions(store, "now", "nightly", day(0))
    assert empty.verdicts == [] and "nothing to compare" in empty.notes[0]
    assert compute_regressions(store, "now", "nightly", day(0), config_ids=[]).verdicts == []
    with pytest.raises(KeyError):
        compute_regressions(store, "missing", "nightly", day(0))
    with pytest.raises(ValueError, match="runs"):
        compute_regressions(store, "now", "nightly", day(0), runs=0)


def test_compute_regressions_stops_at_its_time_budget_and_says_so() -> None:
    store = seeded_store(5)
    store.start_run("now", "nightly", {}, day(9), day(9), ["gp3"])
    recs = [record(iops=600.0, workload=f"w{n}") for n in range(4)]
    store.put_results("now", "gp3", recs, day(9), {"storage_option": OPTION, "suite": "nightly"})
    ticks = iter([0.0, 0.0, 0.5, 2.0, 9.0, 9.0])
    report = compute_regressions(store, "now", "nightly", day(9), budget_s=1.0, clock=lambda: next(ticks))
    assert report.series == 4 and report.series_compared == 2
    assert any("budget ran out; 2 of 4" in note for note in report.notes)
    assert {v.workload for v in report.verdicts} == {"w0", "w1"}


# ============================================================================ Finalize


@pytest.fixture
def fakes(tmp_path: Path) -> Any:
    return wf.make_fakes(tmp_path)


def result(config_id: str, status: str, records: int = 2) -> dict[str, Any]:
    return ConfigResult(run_id="now", config_id=config_id, status=status, records=records).model_dump(
        mode="json"
    )


def seed(fakes: Any, iops: float) -> None:
    history = seeded_store(6)
    fakes.store.runs.update(history.runs)
    fakes.store.results.extend(history.results)
    add_run(fakes.store, "now", day(9), iops)


def test_finalize_reports_flagged_metrics_and_records_every_verdict(fakes: Any) -> None:
    seed(fakes, iops=500.0)
    summary = finalize("now", "nightly", day(9), [result("gp3", "succeeded")], fakes.services)
    assert summary.status == "SUCCEEDED"
    assert [(r.metric, r.verdict) for r in summary.regressions] == [
        ("iops", "regression"),
        ("bw_mibps", "regression"),
    ]
    assert summary.regressions[0].history_n == 6
    assert summary.regression_notes[0].startswith("regressions: 1 of 1 series")
    recorded = fakes.store.get_regressions("now")
    assert len(recorded) == 5 and {r["verdict"] for r in recorded} == {"regression", "none"}
    assert fakes.store.finished == [summary]
    assert RunSummary.model_validate_json(summary.model_dump_json()) == summary


def test_finalize_skips_regressions_when_nothing_was_measured(fakes: Any) -> None:
    seed(fakes, iops=500.0)
    summary = finalize("now", "nightly", day(9), [result("gp3", "failed", 0)], fakes.services)
    assert summary.status == "FAILED" and summary.regressions == [] and summary.regression_notes == []
    assert fakes.store.regressions == {}


def test_finalize_only_compares_configs_that_measured(fakes: Any) -> None:
    seed(fakes, iops=500.0)
    entries = [result("gp3", "failed", 0), result("io2", "partial")]
    summary = finalize("now", "nightly", day(9), entries, fakes.services)
    assert summary.status == "PARTIAL" and summary.regressions == []  # gp3's records are not io2's
    assert fakes.store.get_regressions("now") == []


def finalized_while_failing(fakes: Any, method: str, error: Exception) -> Any:
    """Finalize of a succeeded gp3 over the seeded history while the store's ``method`` raises ``error``."""
    seed(fakes, iops=500.0)

    def failing(*_: Any, **__: Any) -> Any:
        raise error

    setattr(fakes.store, method, failing)
    return finalize("now", "nightly", day(9), [result("gp3", "succeeded")], fakes.services)


def test_a_store_error_in_regressions_never_fails_the_run(fakes: Any) -> None:
    throttled = ThrottledError("query GSI2: ProvisionedThroughputExceededException")
    summary = finalized_while_failing(fakes, "metric_history", throttled)
    assert summary.status == "SUCCEEDED" and summary.regressions == []
    assert summary.regression_notes == [
        "regressions not computed: ThrottledError: query GSI2: ProvisionedThroughputExceededException"
    ]
    assert fakes.store.finished == [summary] and fakes.store.runs["now"]["status"] == "SUCCEEDED"


def test_a_failed_record_of_the_verdicts_keeps_them_in_the_summary(fakes: Any) -> None:
    summary = finalized_while_failing(fakes, "record_regressions", RuntimeError("item too large"))
    assert [r.metric for r in summary.regressions] == ["iops", "bw_mibps"]
    assert (
        summary.regression_notes[-1] == "regressions not recorded in the store: RuntimeError: item too large"
    )


def test_the_summary_carries_at_most_a_hundred_flagged_metrics(
    fakes: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    seed(fakes, iops=500.0)
    many = detect(current(iops=1.0), {KEY: HISTORY}) * 150
    report = RegressionReport(run_id="now", verdicts=many, notes=["compared"])
    monkeypatch.setattr(finalize_step, "compute_regressions", lambda *a, **k: report)
    summary = finalize("now", "nightly", day(9), [result("gp3", "succeeded")], fakes.services)
    assert len(summary.regressions) == REGRESSIONS_IN_SUMMARY
    assert summary.regression_notes == [
        "compared",
        "50 more flagged metric(s) are in the store (get_regressions)",
    ]
    assert len(fakes.store.get_regressions("now")) == 150

"""Run against run: measurements matched by storage option (config id as the fallback), per-metric
verdicts that need a significant difference, what one run measured alone, a suite's two runs."""

from __future__ import annotations

from typing import Any

import pytest
from tests.support.records import latency, result_record

from storagebench.costs.run_compare import (
    FLAT_FIELDS,
    RunComparison,
    SuiteSelectionError,
    compare_runs,
    flat_rows,
    pick_suite_runs,
)
from storagebench.results.records import ResultRecord

GP3 = "c5.4xlarge/ebs:gp3:100GiB:xfs"
IO1 = "c5.4xlarge/ebs:io1:100GiB:4000iops:xfs"


def record(
    config_id: str,
    repetition: int,
    iops: float,
    *,
    workload: str = "std-randread-4k",
    direction: Any = "read",
    phase: str = "run",
    p95_us: float | None = None,
    labels: list[str] | None = None,
) -> ResultRecord:
    lat = None if p95_us is None else latency(p95_us, p50_us=p95_us / 2, p99_us=p95_us * 1.5)
    kind = {"phase": phase, "direction": direction, "engine": "prewarm" if phase == "prewarm" else "fio"}
    measured = {"iops": iops, "bw_mibps": iops * 4 / 1024, "latency": lat, "labels": labels or []}
    return result_record(config_id=config_id, workload=workload, repetition=repetition, **kind, **measured)


def stored(
    run_id: str, results: list[tuple[ResultRecord, str | None]], status: str = "SUCCEEDED"
) -> dict[str, Any]:
    """A run as ``ResultsStore.get_run`` answers it: records nested with their storage option label."""
    items = [
        {
            "config_id": r.config_id,
            "record": r.model_dump(mode="json"),
            "labels": {"storage_option": option} if option else {},
        }
        for r, option in results
    ]
    run = {"run_id": run_id, "suite": "nightly", "status": status, "started_at": run_id[-20:]}
    return {"run": run, "configs": [], "results": items}


def series(
    config_id: str, values: list[float], option: str | None, **kwargs: Any
) -> list[tuple[ResultRecord, str | None]]:
    return [(record(config_id, i + 1, v, **kwargs), option) for i, v in enumerate(values)]


def metric(comparison: RunComparison, subject: str, name: str, workload: str = "std-randread-4k") -> Any:
    found = next(m for m in comparison.measurements if m.subject == subject and m.workload == workload)
    return next(x for x in found.metrics if x.metric == name)


def test_a_significant_difference_is_faster_and_noise_is_not() -> None:
    a = stored(
        "run-a-2030-01-01T00:00:00Z",
        series("gp3", [3000, 3010, 2990], GP3, p95_us=400) + series("io1", [4000, 4100, 3900], IO1),
    )
    b = stored(
        "run-b-2030-01-02T00:00:00Z",
        series("gp3", [3300, 3310, 3290], GP3, p95_us=300) + series("io1", [3950, 4150, 3900], IO1),
    )
    comparison = compare_runs(a, b)
    iops = metric(comparison, GP3, "iops")
    assert (iops.a, iops.b, iops.n_a, iops.n_b) == (3000, 3300, 3, 3)
    assert iops.delta_pct == pytest.approx(10.0)
    assert iops.verdict == "faster" and iops.better is True and iops.p_value < 0.001
    assert iops.ci_delta_pct is not None and 9 < iops.ci_delta_pct[0] < 10 < iops.ci_delta_pct[1] < 11
    assert iops.repetitions_needed is None
    p95 = metric(comparison, GP3, "lat_p95_us")
    # p95 is the same in each repetition: an exact difference, lower latency is better
    assert p95.verdict == "lower" and p95.better is True and p95.p_value == 0.0
    noisy = metric(comparison, IO1, "iops")
    assert noisy.outcome in ("no_difference", "too_few") and noisy.better is None
    assert noisy.verdict in (
        "no significant difference",
        f"too few repetitions (need {noisy.repetitions_needed})",
    )
    assert "faster" not in noisy.verdict and "slower" not in noisy.verdict


def test_identical_runs_have_no_significant_difference() -> None:
    values = series("gp3", [3000, 3030, 2970, 3010, 2990], GP3)
    comparison = compare_runs(stored("a", values), stored("b", values))
    for m in comparison.measurements:
        for x in m.metrics:
            assert x.verdict == "no significant difference" and x.p_value == 1.0
    assert "0 better and 0 worse" in comparison.summary


def test_too_few_repetitions_say_how_many_would_tell() -> None:
    comparison = compare_runs(
        stored("a", series("gp3", [3000, 3300], GP3)), stored("b", series("gp3", [3150, 3450], GP3))
    )
    iops = metric(comparison, GP3, "iops")
    assert iops.outcome == "too_few" and iops.repetitions_needed is not None and iops.repetitions_needed > 2
    assert iops.verdict == f"too few repetitions (need {iops.repetitions_needed})"
    single = compare_runs(stored("a", series("gp3", [3000], GP3)), stored("b", series("gp3", [3600], GP3)))
    one = metric(single, GP3, "iops")
    assert one.p_value is None and one.verdict == "too few repetitions (need 2+)"
    assert "no test is possible" in one.reason


def test_measurements_match_by_storage_option_whatever_the_config_is_called() -> None:
    a = stored("a", series("gp3", [3000, 3010], GP3))
    b = stored("b", series("gp3-renamed", [3000, 3010], GP3))
    (m,) = compare_runs(a, b).measurements
    assert (m.matched_by, m.subject, m.config_a, m.config_b) == ("storage option", GP3, "gp3", "gp3-renamed")


def test_config_id_is_the_fallback_and_is_said() -> None:
    a = stored("a", series("gp3", [3000, 3010], None))
    b = stored("b", series("gp3", [3000, 3010], "c5.4xlarge/ebs:gp3:200GiB:xfs"))
    comparison = compare_runs(a, b)
    (m,) = comparison.measurements
    assert (m.matched_by, m.subject, m.option_a) == ("config id", "gp3/ebs0", None)
    assert any("matched by config id" in note for note in comparison.notes)


def test_an_option_two_configs_share_cannot_tell_them_apart() -> None:
    # Two configs on the same storage option (e.g. different mount options): matched by config id
    a = stored("a", series("gp3-noatime", [3000, 3010], GP3) + series("gp3-default", [2900, 2910], GP3))
    b = stored("b", series("gp3-noatime", [3000, 3010], GP3) + series("gp3-default", [2900, 2910], GP3))
    comparison = compare_runs(a, b)
    assert {(m.config_a, m.config_b, m.matched_by) for m in comparison.measurements} == {
        ("gp3-noatime", "gp3-noatime", "config id"),
        ("gp3-default", "gp3-default", "config id"),
    }


def test_what_one_run_measured_alone_is_listed_not_dropped() -> None:
    a = stored(
        "a", series("gp3", [3000, 3010], GP3) + series("gp3", [100, 101], GP3, workload="std-seqread-1m")
    )
    b = stored("b", series("gp3", [3000, 3010], GP3) + series("io1", [4000, 4010], IO1))
    comparison = compare_runs(a, b)
    assert [(u.config_id, u.workload, u.repetitions) for u in comparison.only_in_a] == [
        ("gp3", "std-seqread-1m", 2)
    ]
    assert [(u.config_id, u.option) for u in comparison.only_in_b] == [("io1", IO1)]
    assert "1 measurement(s) only in A, 1 only in B" in comparison.summary
    rows = flat_rows(comparison)
    assert all(list(row) == list(FLAT_FIELDS) for row in rows)
    alone = [row for row in rows if row["outcome"] == "unmatched"]
    assert [(r["verdict"], r["config_a"], r["config_b"]) for r in alone] == [
        ("only in A", "gp3", None),
        ("only in B", None, "io1"),
    ]
    assert len(rows) == len(comparison.measurements[0].metrics) + 2


def test_prewarm_is_left_out_and_read_write_totals_are_compared() -> None:
    def mixed(config: str, values: list[float]) -> list[tuple[ResultRecord, str | None]]:
        out: list[tuple[ResultRecord, str | None]] = []
        for i, v in enumerate(values):
            out += [
                (record(config, i + 1, v * 0.25, workload="randrw", direction="read"), GP3),
                (record(config, i + 1, v * 0.75, workload="randrw", direction="write"), GP3),
            ]
        return out

    prewarm = series("gp3", [100, 100], GP3, workload="prewarm", phase="prewarm")
    comparison = compare_runs(
        stored("a", mixed("gp3", [1000, 1010]) + prewarm), stored("b", mixed("gp3", [1000, 1010]))
    )
    assert sorted(m.direction for m in comparison.measurements) == ["mixed", "read", "write"]
    assert comparison.only_in_a == [] and comparison.only_in_b == []
    total = next(m for m in comparison.measurements if m.direction == "mixed")
    assert next(x for x in total.metrics if x.metric == "iops").a == pytest.approx(1005)


def test_emulated_results_carry_the_caveat_first() -> None:
    rows = series("gp3", [3000, 3010], GP3, labels=["emulated:gp3:100GiB"])
    comparison = compare_runs(stored("a", rows), stored("b", rows, status="RUNNING"))
    assert comparison.emulated and comparison.notes[0].startswith("emulated volumes (gp3)")
    assert "run B is RUNNING: its results may be incomplete" in comparison.notes


def test_the_minimum_effect_is_checked() -> None:
    with pytest.raises(ValueError, match="min_effect_pct must be between 0 and 100, got -1"):
        compare_runs(stored("a", []), stored("b", []), min_effect_pct=-1)


# ------------------------------------------------------------------------------ a suite's two runs

RUNS = [
    {"run_id": "n-5", "status": "RUNNING", "started_at": "2026-11-05T03:00:00Z"},
    {"run_id": "n-4", "status": "SUCCEEDED", "started_at": "2026-11-04T03:00:00Z"},
    {"run_id": "n-3", "status": "FAILED", "started_at": "2026-11-03T03:00:00Z"},
    {"run_id": "n-2", "status": "PARTIAL", "started_at": "2026-11-02T03:00:00Z"},
    {"run_id": "n-1", "status": "SUCCEEDED", "started_at": "2026-10-30T03:00:00Z"},
]


def test_latest_finished_run_against_the_one_before() -> None:
    assert pick_suite_runs("nightly", RUNS) == ("n-2", "n-4")


@pytest.mark.parametrize(
    ("against", "expected"),
    [
        ("2026-11-03", ("n-2", "n-4")),
        ("2026-11-01", ("n-1", "n-4")),
        ("2026-11-02T03:00:01Z", ("n-2", "n-4")),
    ],
)
def test_against_a_date_takes_the_latest_run_started_before_it(
    against: str, expected: tuple[str, str]
) -> None:
    assert pick_suite_runs("nightly", RUNS, against) == expected


def test_runs_are_read_only_as_far_as_needed() -> None:
    read: list[str] = []

    def lazily() -> Any:
        for run in RUNS:
            read.append(run["run_id"])
            yield run

    pick_suite_runs("nightly", lazily())
    assert read == ["n-5", "n-4", "n-3", "n-2"]


@pytest.mark.parametrize(
    ("runs", "against", "message"),
    [
        ([], None, "suite nightly has no runs"),
        (
            RUNS[:1],
            None,
            "suite nightly has no finished run (SUCCEEDED, PARTIAL): n-5 (RUNNING, started 2026-11-05",
        ),
        (RUNS[:2], None, "suite nightly has one finished run, n-4 (SUCCEEDED, started 2026-11-04T03:00:00Z)"),
        (
            RUNS,
            "2026-10-01",
            "no finished run of suite nightly started before 2026-10-01; its oldest finished run is n-1",
        ),
        (
            RUNS,
            "2026-12-01",
            "the latest finished run of suite nightly, n-4 (SUCCEEDED, started 2026-11-04T03:00:00Z), "
            "started before 2026-12-01",
        ),
        (RUNS, "last week", "--against 'last week' is not an ISO date"),
    ],
)
def test_a_suite_without_two_runs_to_compare_names_what_exists(
    runs: list[dict[str, Any]], against: str | None, message: str
) -> None:
    with pytest.raises(SuiteSelectionError) as caught:
        pick_suite_runs("nightly", runs, against)
    assert message in str(caught.value)

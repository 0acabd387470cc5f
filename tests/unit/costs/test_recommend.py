"""The recommendation: the cheapest config whose 95 % bound meets every requirement, the runners-up,
and why each other config failed."""

from __future__ import annotations

from typing import Any

import pytest
from tests.support.records import latency, result_record

from storagebench.costs.recommend import ConfigPrice, Recommendation, recommend
from storagebench.request.requirements import RequirementError
from storagebench.results.records import ResultRecord

RANDREAD = "std-randread-4k"
WORKLOADS = [RANDREAD, "std-seqread-1m", "fio-randrw-4k-25read"]
T_2DF = 4.302652729911  # Student t, 97.5 %, 2 degrees of freedom (3 repetitions)


def rec(
    config_id: str,
    repetition: int,
    *,
    workload: str = RANDREAD,
    direction: Any = "read",
    iops: float | None = None,
    bw: float | None = None,
    p95_ms: float | None = None,
    p99_ms: float | None = None,
    variant: dict[str, Any] | None = None,
    labels: list[str] | None = None,
) -> ResultRecord:
    lat = None
    if p95_ms is not None:
        spread = {"mean_us": p95_ms * 500, "stdev_us": p95_ms * 250, "min_us": 50, "max_us": p95_ms * 3000}
        p99_us = p99_ms * 1000 if p99_ms is not None else None
        lat = latency(p95_ms * 1000, samples=10_000, **spread, p50_us=p95_ms * 500, p99_us=p99_us)
    names = {"config_id": config_id, "workload": workload, "variant": variant or {}, "labels": labels or []}
    rates = {"iops": iops, "bw_mibps": bw}
    return result_record(
        **names, repetition=repetition, direction=direction, **rates, runtime_s=60, latency=lat
    )


def iops_runs(config_id: str, values: list[float], **kwargs: Any) -> list[ResultRecord]:
    return [rec(config_id, i + 1, iops=v, **kwargs) for i, v in enumerate(values)]


PRICES = [
    ConfigPrice("gp2", 10.0),
    ConfigPrice("gp3", 20.0),
    ConfigPrice("io1", 50.0),
    ConfigPrice("io2", 60.0),
]


def four_configs() -> list[ResultRecord]:
    return [
        *iops_runs("gp2", [3000, 3010, 2990]),
        *iops_runs("gp3", [3600, 3300, 3900]),  # mean 3,600 but a wide interval
        *iops_runs("io1", [4000, 4010, 3990]),
        *iops_runs("io2", [5000, 5005, 4995]),
    ]


def answer(
    requirements: list[str], records: list[ResultRecord], prices: list[ConfigPrice] = PRICES
) -> Recommendation:
    return recommend(requirements, records, prices, workloads=WORKLOADS, run_id="run-1")


def by_id(result: Recommendation) -> dict[str, Any]:
    everyone = [*([result.recommended] if result.recommended else []), *result.runners_up, *result.failed]
    return {v.config_id: v for v in everyone}


# ------------------------------------------------------------------------------ the answer


def test_the_cheapest_config_whose_lower_bound_meets_is_recommended_then_runners_up_then_failures() -> None:
    result = answer(["std-randread-4k:iops>=3500"], four_configs())
    assert result.recommended is not None and result.recommended.config_id == "io1"
    assert [v.config_id for v in result.runners_up] == ["io2"]
    assert [v.config_id for v in result.failed] == ["gp2", "gp3"]  # by cost
    check = result.recommended.checks[0]
    assert check.met and check.basis == "ci95_low" and check.repetitions == 3
    assert check.mean == pytest.approx(4000)
    assert check.bound == pytest.approx(4000 - T_2DF * 10 / 3**0.5)
    assert check.measurement == "read"
    assert "lower bound 3,975 >= 3,500 (mean 4,000, 3 runs)" in check.reason
    assert result.summary.startswith(
        "io1 at $50.00/month is the cheapest config meeting std-randread-4k:iops>=3500"
    )
    assert "also meeting: io2" in result.summary
    assert not result.emulated and not result.single_run


def test_a_mean_that_meets_fails_when_its_interval_does_not_and_the_reason_says_so() -> None:
    gp3 = by_id(answer(["std-randread-4k:iops>=3500"], four_configs()))["gp3"]
    check = gp3.checks[0]
    assert not gp3.meets_all and not check.met
    assert check.mean == pytest.approx(3600)
    assert check.bound == pytest.approx(3600 - T_2DF * 300 / 3**0.5)
    assert "lower bound 2,855, not >= 3,500 (mean 3,600, 3 runs" in check.reason
    assert "the mean meets it, the interval does not" in check.reason


def test_when_no_config_meets_each_one_says_which_value_missed_which_threshold() -> None:
    result = answer(["std-randread-4k:iops>=5000"], four_configs())
    assert result.recommended is None and result.runners_up == []
    assert result.summary == "no config meets std-randread-4k:iops>=5000"
    reasons = {v.config_id: v.checks[0].reason for v in result.failed}
    assert set(reasons) == {"gp2", "gp3", "io1", "io2"}
    assert "lower bound 2,975, not >= 5,000 (mean 3,000, 3 runs)" in reasons["gp2"]
    assert "lower bound 4,988, not >= 5,000 (mean 5,000, 3 runs; the mean meets it" in reasons["io2"]


def test_equal_costs_keep_the_request_order_and_say_so() -> None:
    prices = [
        ConfigPrice("gp2", 10.0),
        ConfigPrice("io2", 50.0),
        ConfigPrice("io1", 50.0),
        ConfigPrice("gp3", 20.0),
    ]
    result = answer(["std-randread-4k:iops>=3500"], four_configs(), prices)
    assert result.recommended is not None and result.recommended.config_id == "io2"
    assert [v.config_id for v in result.runners_up] == ["io1"]
    assert any(n.startswith("io2, io1 cost the same ($50.00/month)") for n in result.notes)


def test_an_unpriced_config_is_ranked_after_the_priced_ones() -> None:
    prices = [
        ConfigPrice("gp2", 10.0),
        ConfigPrice("gp3", 20.0),
        ConfigPrice("io1", None),
        ConfigPrice("io2", 60.0),
    ]
    result = answer(["std-randread-4k:iops>=3500"], four_configs(), prices)
    assert result.recommended is not None and result.recommended.config_id == "io2"
    assert [v.config_id for v in result.runners_up] == ["io1"]
    assert any("no monthly price for io1" in n for n in result.notes)


def test_a_partly_unpriced_cost_is_marked_in_the_summary() -> None:
    prices = [*PRICES[:2], ConfigPrice("io1", 50.0, partial=True), PRICES[3]]
    result = answer(["std-randread-4k:iops>=3500"], four_configs(), prices)
    assert result.recommended is not None and result.recommended.cost_partial
    assert "$50.00/month (cost partly unpriced)" in result.summary


# ------------------------------------------------------------------------------ how values are judged


def test_a_single_repetition_is_its_own_bound_and_is_flagged() -> None:
    records = [rec("gp2", 1, iops=3500), rec("gp3", 1, iops=3499.5)]
    result = answer(["std-randread-4k:iops>=3500"], records, PRICES[:2])
    assert result.single_run
    assert result.recommended is not None and result.recommended.config_id == "gp2"
    check = result.recommended.checks[0]
    assert check.basis == "single_run" and check.bound == check.mean == 3500
    assert "(single run, no interval)" in check.reason
    assert any("single repetitions" in n for n in result.notes)


def test_strict_and_inclusive_operators_differ_at_the_threshold() -> None:
    records = [rec("gp2", 1, iops=3500)]
    prices = [ConfigPrice("gp2", 10.0)]
    assert answer(["std-randread-4k:iops>=3500"], records, prices).recommended is not None
    assert answer(["std-randread-4k:iops>3500"], records, prices).recommended is None
    assert answer(["std-randread-4k:iops<=3500"], records, prices).recommended is not None
    assert answer(["std-randread-4k:iops<3500"], records, prices).recommended is None


def test_latency_is_judged_on_the_upper_bound_of_the_worst_direction_unless_one_is_named() -> None:
    records = [
        rec("gp3", r, workload="fio-randrw-4k-25read", direction=d, iops=1000, p95_ms=p95)
        for r in (1, 2, 3)
        for d, p95 in (("read", 1.0 + r / 100), ("write", 3.0 + r / 100))
    ]
    prices = [ConfigPrice("gp3", 20.0)]
    worst = answer(["fio-randrw-4k-25read:p95_ms<2"], records, prices)
    assert worst.recommended is None
    check = worst.failed[0].checks[0]
    assert check.basis == "ci95_high" and check.measurement == "write"
    assert check.bound == pytest.approx(3.02 + T_2DF * 0.01 / 3**0.5)
    read = answer(["fio-randrw-4k-25read:read:p95_ms<2"], records, prices)
    assert read.recommended is not None and read.recommended.checks[0].measurement == "read"


def test_rates_without_a_direction_are_judged_on_the_read_write_total() -> None:
    records = [
        rec("gp3", r, workload="fio-randrw-4k-25read", direction=d, iops=v)
        for r in (1, 2, 3)
        for d, v in (("read", 1000.0 + r), ("write", 3000.0 + r))
    ]
    result = answer(["fio-randrw-4k-25read:iops>=3900"], records, [ConfigPrice("gp3", 20.0)])
    assert result.recommended is not None
    check = result.recommended.checks[0]
    assert check.measurement == "read+write total" and check.mean == pytest.approx(4004)
    only_writes = answer(["fio-randrw-4k-25read:write:iops>=3900"], records, [ConfigPrice("gp3", 20.0)])
    assert only_writes.recommended is None


def test_a_direction_not_measured_fails_naming_the_directions_that_were() -> None:
    result = answer(["std-randread-4k:write:iops>=1"], iops_runs("gp2", [3000]), PRICES[:1])
    reason = result.failed[0].checks[0].reason
    assert reason == "no write iops on std-randread-4k (directions measured: read)"


def test_requirements_on_one_workload_must_hold_together_at_one_sweep_point() -> None:
    records = [
        rec("gp3", r, iops=iops + r, p95_ms=p95 + r / 1000, variant={"numjobs": jobs})
        for r in (1, 2, 3)
        for jobs, iops, p95 in ((1, 3000.0, 1.0), (16, 12000.0, 5.0))
    ]
    prices = [ConfigPrice("gp3", 20.0)]
    # 10,000 IOPS only at 16 jobs, p95 under 2 ms only at 1 job: never both at once
    apart = answer(["std-randread-4k:iops>=10000", "std-randread-4k:p95_ms<2"], records, prices)
    assert apart.recommended is None
    assert [c.met for c in apart.failed[0].checks].count(True) == 1
    together = answer(["std-randread-4k:iops>=10000", "std-randread-4k:p95_ms<6"], records, prices)
    assert together.recommended is not None
    assert {c.measurement for c in together.recommended.checks} == {"numjobs=16, read"}


def test_a_metric_not_measured_fails_with_its_name() -> None:
    records = [rec("gp2", r, iops=3000, p95_ms=1.0) for r in (1, 2)]  # no p99 in these records
    result = answer(["std-randread-4k:p99_ms<5"], records, PRICES[:1])
    assert result.failed[0].checks[0].reason == "no p99_ms measured on std-randread-4k"
    assert result.failed[0].checks[0].bound is None


def test_a_config_without_results_for_the_workload_fails_naming_it() -> None:
    records = iops_runs("io1", [4000, 4010])  # gp2 measured nothing
    result = answer(["std-randread-4k:iops>=3500", "std-seqread-1m:mibps>=100"], records, PRICES[:3])
    gp2 = by_id(result)["gp2"]
    assert [c.reason for c in gp2.checks] == [
        "no result for workload std-randread-4k",
        "no result for workload std-seqread-1m",
    ]
    assert result.recommended is None and result.summary == "no config meets all 2 requirements"


def test_emulated_results_say_so_first() -> None:
    records = iops_runs("io1", [4000, 4010], labels=["emulated:io1:100GiB"]) + iops_runs("gp2", [3000, 3001])
    result = answer(["std-randread-4k:iops>=3500"], records, PRICES[:3])
    assert result.emulated
    assert by_id(result)["io1"].emulated and not by_id(result)["gp2"].emulated
    assert result.notes[0].startswith("emulated volumes (io1)")
    assert "not a measurement of it" in result.notes[0]


def test_the_pre_warm_read_is_not_judged() -> None:
    prewarm = rec("gp2", 1, iops=99999, workload=RANDREAD).model_copy(update={"phase": "prewarm"})
    result = answer(["std-randread-4k:iops>=3500"], [prewarm], PRICES[:1])
    assert result.failed[0].checks[0].reason == "no result for workload std-randread-4k"


# ------------------------------------------------------------------------------ bad input


def test_a_requirement_naming_a_workload_the_run_lacks_is_an_error_listing_the_runs_workloads() -> None:
    with pytest.raises(RequirementError) as caught:
        answer(["std-randread-8k:iops>=1"], four_configs())
    message = str(caught.value)
    assert "unknown workload 'std-randread-8k'" in message
    assert "workloads: std-randread-4k, std-seqread-1m, fio-randrw-4k-25read" in message
    assert "did you mean std-randread-4k?" in message


def test_no_requirement_is_an_error() -> None:
    with pytest.raises(ValueError, match="no requirements"):
        answer([], four_configs())


def test_the_same_requirement_twice_is_judged_once() -> None:
    result = answer(["std-randread-4k:iops>=3500", " std-randread-4k : iops >= 3500 "], four_configs())
    assert result.requirements == ["std-randread-4k:iops>=3500"]
    assert len(result.failed[0].checks) == 1

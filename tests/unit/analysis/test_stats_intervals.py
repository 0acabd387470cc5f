"""Intervals of quantities that cannot be negative stay at or above 0; few repetitions say so."""

from __future__ import annotations

import pytest
from tests.support.records import latency, result_record

from storagebench.analysis.stats import (
    FEW_REPETITIONS,
    aggregate,
    few_repetitions_note,
    summarize,
    t_quantile,
)
from storagebench.protocol.adaptive import half_width
from storagebench.results.records import ResultRecord

# The case: two repetitions of a p95 far apart, whose t interval is 2.121 ± 21.143 ms.
P95_US = [626.0, 3616.0]


def test_the_unclipped_t_interval_of_two_runs_does_run_below_zero() -> None:
    plain = summarize(P95_US)
    assert plain.ci95_low is not None and plain.ci95_low < 0 and not plain.ci95_clipped


def test_a_nonnegative_interval_is_clipped_at_zero_and_says_so() -> None:
    plain, clipped = summarize(P95_US), summarize(P95_US, nonnegative=True)
    assert clipped.ci95_low == 0.0 and clipped.ci95_clipped
    assert clipped.ci95_high == plain.ci95_high and clipped.mean == plain.mean


def test_an_interval_clear_of_zero_is_left_as_it_is() -> None:
    summary = summarize([1000.0, 1010.0, 1020.0], nonnegative=True)
    assert summary.ci95_low == summarize([1000.0, 1010.0, 1020.0]).ci95_low
    assert summary.ci95_low is not None and summary.ci95_low > 0 and not summary.ci95_clipped


def test_a_negative_value_of_a_nonnegative_quantity_is_an_error_naming_it() -> None:
    with pytest.raises(ValueError, match=r"must be >= 0, got \[-3.0\]"):
        summarize([5.0, -3.0], nonnegative=True)


@pytest.mark.parametrize("n", [2, 3])
def test_few_repetitions_are_noted_with_the_t_factor(n: int) -> None:
    note = summarize([100.0 + i for i in range(n)]).note
    assert note is not None and f"few repetitions (n={n})" in note
    assert f"{t_quantile(0.975, n - 1):.1f} standard errors" in note


def test_enough_repetitions_carry_no_note() -> None:
    n = FEW_REPETITIONS + 1
    assert summarize([100.0 + i for i in range(n)]).note is None
    assert few_repetitions_note(n) is None


def test_one_repetition_has_no_interval_and_says_why() -> None:
    summary = summarize([42.0], nonnegative=True)
    assert summary.ci95_low is None and summary.ci95_high is None and summary.stdev is None
    assert summary.note is not None
    assert "no spread" in summary.note and "no confidence interval" in summary.note


def test_zero_repetitions_is_refused() -> None:
    with pytest.raises(ValueError, match="n: 0 repetitions"):
        few_repetitions_note(0)


def _record(repetition: int, iops: float, p95_us: float) -> ResultRecord:
    lat = latency(p95_us, p99_us=p95_us * 1.5)
    return result_record(
        repetition=repetition, iops=iops, bw_mibps=iops * 4 / 1024, runtime_s=10.0, latency=lat
    )


def test_aggregate_clips_every_headline_metric() -> None:
    (agg,) = aggregate([_record(1, 300.0, P95_US[0]), _record(2, 9000.0, P95_US[1])])
    for name in ("iops", "bw_mibps", "lat_p95_us", "lat_p99_us", "lat_mean_us"):
        summary = agg.metrics[name]
        assert summary.ci95_low is not None and summary.ci95_low >= 0, name
        assert summary.ci95_clipped, name


def test_the_agents_stopping_rule_and_the_reports_interval_are_one_computation() -> None:
    values = [100.0, 102.0, 98.0, 101.0]
    summary = summarize(values)
    assert summary.ci95_high is not None
    assert half_width(values) == pytest.approx(summary.ci95_high - summary.mean)

"""Verdict sentences need a significant difference (Welch's t-test): identical or noisy repetitions say
"no significant difference" every time, never "within noise" one night and "2 % faster" the next."""

from __future__ import annotations

import random

import pytest
from tests.support.records import repetitions

from storagebench.analysis.stats import aggregate
from storagebench.costs.deltas import WorkloadComparison, compare_workload
from storagebench.costs.measures import index_aggregates
from storagebench.costs.verdicts import verdict

WORKLOAD = "std-randread-4k"


def judged(base: list[float], other: list[float]) -> WorkloadComparison:
    records = repetitions({"gp3": base, "gp2": other})
    index = index_aggregates(aggregate(records))
    found = compare_workload(WORKLOAD, "4k random read", "iops", index["gp3"], index["gp2"])
    assert found is not None and found.headline is not None
    return found


def test_identical_repetitions_have_no_significant_difference() -> None:
    row = judged([3000.5, 3042.0], [3000.5, 3042.0])
    assert row.headline is not None and row.headline.p_value == 1.0
    assert verdict(0.4, [row]) == "same monthly cost, no significant difference on 4k random read"


def test_noisy_runs_of_the_same_volume_get_a_direction_only_at_the_tests_error_rate() -> None:
    # 400 pairs of nights, two repetitions each, drawn from one volume (2 % spread): a direction is
    # named only when p < 0.05, so about 5 % of them (Welch is slightly conservative at 1-2 df)
    draws = random.Random(12)
    directed = 0
    for _ in range(400):
        base = [draws.gauss(3000, 60) for _ in range(2)]
        other = [draws.gauss(3000, 60) for _ in range(2)]
        row = judged(base, other)
        assert row.headline is not None
        text = verdict(0.0, [row])
        if row.headline.noise == "overlap":
            assert text.endswith("no significant difference on 4k random read"), text
        else:
            assert row.headline.p_value is not None and row.headline.p_value < 0.05
            directed += 1
    assert 4 <= directed <= 32, directed  # 1 % to 8 %: the 5 % level, not a coin toss


def test_a_significant_difference_is_named_with_its_direction() -> None:
    row = judged([3000.0, 3010.0, 2990.0], [3300.0, 3290.0, 3310.0])
    assert row.headline is not None and row.headline.p_value is not None and row.headline.p_value < 1e-4
    assert verdict(0.0, [row]) == "same monthly cost, 10 % faster on 4k random read"
    slower = judged([3000.0, 3010.0, 2990.0], [2940.0, 2950.0, 2930.0])
    assert verdict(0.0, [slower]) == "same monthly cost, 2 % slower on 4k random read"


def test_a_single_repetition_gives_the_signed_delta_untested() -> None:
    row = judged([3000.0], [3300.0])
    assert row.headline is not None and row.headline.noise == "unknown" and row.headline.better is None
    assert verdict(-10.0, [row]) == "10 % cheaper, +10 % IOPS on 4k random read (1 run: untested)"


@pytest.mark.parametrize("others", [3, 4])
def test_workloads_left_over_without_a_difference_are_summed_up(others: int) -> None:
    rows = [judged([3000.0, 3010.0], [3000.0, 3010.0]) for _ in range(others + 3)]
    assert verdict(0.0, rows).endswith(f"no significant difference on {others} more")

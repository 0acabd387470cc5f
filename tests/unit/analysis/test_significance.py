"""Welch's t-test, Fieller's ratio interval and repetitions needed, against values known independently.

References:
- Closed forms of Student's t for 1 and 2 degrees of freedom: P(|T| > t) = 1 - 2 atan(t) / pi (df 1)
  and 1 - t / sqrt(2 + t^2) (df 2); the 0.975 quantile at df 2 is 0.95 * sqrt(2 / 0.0975).
- Wikipedia, "Welch's t-test", examples 2 and 3 (t, df and p to the digits published there).
- The same two data sets with mpmath at 40 digits (t, df by the formulas; p by quadrature of the t
  density; the 0.975 quantile by root finding on that integral): the 15-digit values below.
- Sample sizes per group for a two-sided t-test, alpha 0.05, power 0.8, equal spreads: 17 for
  d = 1, 26 for d = 0.8, 64 for d = 0.5 (Cohen 1988, table 2.4.1; G*Power agrees).
"""

from __future__ import annotations

import math

import pytest

from storagebench.analysis.significance import (
    MAX_REPETITIONS,
    judge,
    repetitions_needed,
    welch_test,
)

# Wikipedia's examples (the article lists A1, A2; t is A1 - A2 there, B - A here, so signs flip)
EXAMPLE2_A1 = [17.2, 20.9, 22.6, 18.1, 21.7, 21.4, 23.5, 24.2, 14.7, 21.8]
EXAMPLE2_A2 = [21.5, 22.8, 21.0, 23.0, 21.6, 23.6, 22.5, 20.7, 23.4, 21.8]
EXAMPLE2_A2 += [20.7, 21.7, 21.5, 22.5, 23.6, 21.5, 22.5, 23.5, 21.5, 21.8]
EXAMPLE3_A1 = [19.8, 20.4, 19.6, 17.8, 18.5, 18.9, 18.3, 18.9, 19.5, 22.0]
EXAMPLE3_A2 = [28.2, 26.6, 20.1, 23.3, 25.2, 22.1, 17.7, 27.6, 20.6, 13.7]
EXAMPLE3_A2 += [23.2, 17.5, 20.6, 18.0, 23.9, 21.6, 24.3, 20.4, 23.9, 13.3]


def test_two_repetitions_a_side_with_equal_spread_is_a_t_with_2_df() -> None:
    test = welch_test([1.0, 3.0], [4.0, 6.0])
    assert test.df == pytest.approx(2.0)
    assert test.t == pytest.approx(3 / math.sqrt(2))
    assert test.p_value == pytest.approx(1 - 3 / math.sqrt(13), rel=1e-12)  # 0.16795
    half = 0.95 * math.sqrt(2 / 0.0975) * math.sqrt(2)  # t_{0.975,2} x standard error
    assert test.ci_difference == pytest.approx((3 - half, 3 + half), rel=1e-9)
    assert not test.significant


def test_one_side_without_spread_leaves_the_others_df() -> None:
    test = welch_test([10.0, 10.0], [11.0, 13.0])
    assert test.df == pytest.approx(1.0)  # n_b - 1
    assert test.p_value == pytest.approx(1 - 2 * math.atan(2) / math.pi, rel=1e-12)  # 0.29517


@pytest.mark.parametrize(
    ("a", "b", "t", "df", "p", "ci"),
    [
        (
            EXAMPLE2_A1,
            EXAMPLE2_A2,
            1.56543352359851,
            9.90474124865083,
            0.148841696605328,
            (-0.648421325375165, 3.69842132537517),
        ),
        (
            EXAMPLE3_A1,
            EXAMPLE3_A2,
            2.22551203996985,
            24.5246349442573,
            0.0354845308300102,
            (0.163541349879444, 4.27645865012056),
        ),
    ],
)
def test_welch_examples_match_the_literature_and_high_precision(
    a: list[float], b: list[float], t: float, df: float, p: float, ci: tuple[float, float]
) -> None:
    test = welch_test(a, b)
    assert (round(test.t or 0, 2), round(test.df or 0, 1)) in {(1.57, 9.9), (2.23, 24.5)}  # Wikipedia
    assert test.t == pytest.approx(t, rel=1e-12)
    assert test.df == pytest.approx(df, rel=1e-12)
    assert test.p_value == pytest.approx(p, rel=1e-9)
    assert test.ci_difference == pytest.approx(ci, rel=1e-9)
    assert test.significant is (p < 0.05)


def test_the_p_value_is_symmetric_and_does_not_depend_on_the_order() -> None:
    forward, backward = welch_test(EXAMPLE3_A1, EXAMPLE3_A2), welch_test(EXAMPLE3_A2, EXAMPLE3_A1)
    assert forward.p_value == pytest.approx(backward.p_value)
    assert forward.difference == pytest.approx(-backward.difference)


def test_fieller_interval_endpoints_solve_its_equation() -> None:
    a, b = [100.0, 104.0, 98.0, 101.0], [110.0, 113.0, 108.0, 112.0]
    test = welch_test(a, b)
    assert test.ci_ratio is not None and test.ci_delta_pct is not None
    low, high = test.ci_ratio
    ratio = test.mean_b / test.mean_a
    assert low < ratio < high and low > 1.0  # significant: the interval excludes "no change"
    se2_a, se2_b = test.stdev_a**2 / 4, test.stdev_b**2 / 4
    # At either end, |mean_b - R mean_a| / sqrt(se_b^2 + R^2 se_a^2) is the same t quantile
    statistic = [abs(test.mean_b - r * test.mean_a) / math.sqrt(se2_b + r * r * se2_a) for r in (low, high)]
    assert statistic[0] == pytest.approx(statistic[1], rel=1e-9)
    assert 2.3 < statistic[0] < 3.2  # t_{0.975} at 5 to 6 df
    assert test.ci_delta_pct == pytest.approx(((low - 1) * 100, (high - 1) * 100))


def test_fieller_interval_is_unbounded_when_the_reference_mean_is_not_told_from_zero() -> None:
    assert welch_test([0.1, 5.0], [2.0, 3.0]).ci_ratio is None


def test_no_spread_at_all_is_exact() -> None:
    same = welch_test([5.0, 5.0], [5.0, 5.0])
    assert (same.p_value, same.significant, same.df) == (1.0, False, None)
    apart = welch_test([5.0, 5.0], [6.0, 6.0])
    assert (apart.p_value, apart.significant, apart.ci_ratio) == (0.0, True, (1.2, 1.2))


@pytest.mark.parametrize(("d", "per_side"), [(1.0, 17), (0.8, 26), (0.5, 64)])
def test_repetitions_needed_match_the_published_sample_sizes(d: float, per_side: int) -> None:
    # Two values m +- s/sqrt(2) have sample standard deviation s; here s = 1 on both sides
    spread = 1 / math.sqrt(2)
    a = [100 - spread, 100 + spread]
    b = [100 + d - spread, 100 + d + spread]
    needed = repetitions_needed(a, b, min_effect_pct=0)
    assert needed.per_side == per_side
    assert needed.effect == pytest.approx(d)
    assert "the observed difference" in needed.basis


def test_a_small_observed_difference_is_planned_at_the_minimum_effect() -> None:
    needed = repetitions_needed([100.0, 102.0], [100.5, 102.5], min_effect_pct=5)
    assert needed.effect == pytest.approx(5.05) and needed.effect_pct == pytest.approx(5.0)
    assert "a 5 % difference" in needed.basis


def test_hopeless_plans_stop_at_the_bound() -> None:
    assert repetitions_needed([1.0, 1000.0], [1.0, 1000.0], min_effect_pct=0.001).per_side == MAX_REPETITIONS


def test_one_repetition_on_a_side_cannot_be_tested_and_says_how_many_are_needed() -> None:
    answer = judge([3000.0, 3010.0, 3020.0], [3300.0])
    assert answer.outcome == "too_few" and answer.test is None
    assert answer.needed is not None and answer.needed.per_side == 2  # a 10 % gap, 0.3 % spread
    assert "no test is possible" in answer.reason and "spread of side a" in answer.reason
    nothing = judge([3000.0], [3300.0])
    assert nothing.outcome == "too_few" and nothing.needed is not None and nothing.needed.per_side is None
    assert "2 per side are the least a test needs" in nothing.reason


def test_judge_outcomes() -> None:
    different = judge([100.0, 101.0, 99.0], [110.0, 111.0, 109.0])
    assert different.outcome == "different" and different.needed is None
    # Identical runs: no difference, and 3 repetitions of this spread could have shown 5 %
    same = judge([100.0, 101.0, 99.0], [100.0, 101.0, 99.0])
    assert same.outcome == "no_difference" and same.test is not None and same.test.p_value == 1.0
    noisy = judge([100.0, 130.0], [90.0, 140.0])
    assert noisy.outcome == "too_few" and noisy.needed is not None and noisy.needed.per_side is not None
    assert noisy.needed.per_side > 2


@pytest.mark.parametrize(
    ("a", "b", "message"),
    [
        ([1.0], [2.0, 3.0], "a: Welch's t-test needs at least 2 values per side, got 1"),
        ([], [2.0, 3.0], "a: no values"),
        ([1.0, float("nan")], [2.0, 3.0], "a: values must be finite"),
    ],
)
def test_bad_input_names_the_side(a: list[float], b: list[float], message: str) -> None:
    with pytest.raises(ValueError, match=message.replace("(", r"\(")):
        welch_test(a, b)


def test_levels_are_checked() -> None:
    with pytest.raises(ValueError, match="alpha must be in"):
        welch_test([1.0, 2.0], [1.0, 2.0], alpha=1.5)
    with pytest.raises(ValueError, match="power must be in"):
        repetitions_needed([1.0, 2.0], [1.0, 2.0], power=0)


def test_equal_means_without_a_minimum_effect_leave_nothing_to_plan_for() -> None:
    answer = judge([100.0, 102.0], [102.0, 100.0], min_effect_pct=0)
    assert answer.outcome == "no_difference"
    assert answer.needed is not None and answer.needed.per_side is None
    assert "no difference to plan for" in answer.reason


def test_the_ratio_of_nonnegative_means_is_never_below_zero() -> None:
    """Two noisy latencies: Fieller's interval would start below 0 (a delta under -100 %)."""
    test = welch_test([0.30, 0.32], [0.10, 0.72])
    assert test.ci_ratio is not None
    low, high = test.ci_ratio
    assert low == 0.0 and high > 1.0
    signed = welch_test([-0.30, 0.32], [0.10, 0.72])  # with a negative value nothing is clipped
    assert signed.ci_ratio is None or signed.ci_ratio[0] != 0.0

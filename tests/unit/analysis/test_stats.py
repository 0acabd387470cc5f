"""Repetition statistics, the Student-t quantile and noise-aware change detection."""

from __future__ import annotations

import math
import statistics
from typing import Any

import pytest
from tests.support.records import latency, result_record

from storagebench.analysis.stats import (
    MAD_SCALE,
    aggregate,
    classify_change,
    mad,
    median,
    noise_band,
    regularized_incomplete_beta,
    summarize,
    t_cdf,
    t_quantile,
)
from storagebench.results.records import ResultRecord

# Two-sided 95 % critical values from any t table (3 decimals).
T_TABLE_975 = [(1, 12.706), (2, 4.303), (3, 3.182), (5, 2.571), (10, 2.228), (30, 2.042), (100, 1.984)]


@pytest.mark.parametrize(("df", "expected"), T_TABLE_975)
def test_t_quantile_matches_table(df: int, expected: float) -> None:
    assert t_quantile(0.975, df) == pytest.approx(expected, abs=5e-4)


@pytest.mark.parametrize(
    ("p", "df", "expected"),
    [
        (0.995, 1, 63.657),
        (0.9995, 1, 636.619),
        (0.95, 4, 2.132),
        (0.995, 20, 2.845),
        (0.9, 7, 1.415),
    ],
)
def test_t_quantile_other_levels(p: float, df: int, expected: float) -> None:
    assert t_quantile(p, df) == pytest.approx(expected, abs=5e-4)


def test_t_quantile_df1_is_cauchy_exactly() -> None:
    # t with one degree of freedom is the Cauchy distribution: quantile tan(pi (p - 1/2)).
    for p in (0.6, 0.9, 0.975, 0.999):
        assert t_quantile(p, 1) == pytest.approx(math.tan(math.pi * (p - 0.5)), rel=1e-9)


def test_t_quantile_symmetry_and_median() -> None:
    assert t_quantile(0.5, 7) == 0.0
    assert t_quantile(0.025, 9) == pytest.approx(-t_quantile(0.975, 9), rel=1e-12)


def test_t_quantile_large_df_tends_to_normal_and_paths_agree() -> None:
    z = statistics.NormalDist().inv_cdf(0.975)
    assert t_quantile(0.975, 1e6) == pytest.approx(z, abs=1e-5)
    assert t_quantile(0.975, math.inf) == pytest.approx(z, rel=1e-12)
    # Either side of the switch to the Cornish-Fisher expansion gives the same answer.
    assert t_quantile(0.975, 9999.999) == pytest.approx(t_quantile(0.975, 10000.0), abs=1e-8)


def test_t_quantile_is_inverse_of_cdf_for_fractional_df() -> None:
    for df in (0.5, 1.5, 2.5, 17.3):
        for p in (0.6, 0.95, 0.999):
            assert t_cdf(t_quantile(p, df), df) == pytest.approx(p, abs=1e-10)


def test_t_quantile_rejects_bad_input() -> None:
    for p in (0.0, 1.0, -0.1, 1.5):
        with pytest.raises(ValueError):
            t_quantile(p, 5)
    with pytest.raises(ValueError):
        t_quantile(0.975, 0)


def test_incomplete_beta_known_values() -> None:
    assert regularized_incomplete_beta(1, 1, 0.3) == pytest.approx(0.3)  # uniform
    assert regularized_incomplete_beta(2, 3, 0.4) == pytest.approx(0.5248)  # 1 - sum binomial
    assert regularized_incomplete_beta(2, 2, 0.5) == pytest.approx(0.5)
    assert regularized_incomplete_beta(3, 4, 0) == 0.0
    assert regularized_incomplete_beta(3, 4, 1) == 1.0


# --- summarize ----------------------------------------------------------------------------


def test_summary_ci_uses_student_t() -> None:
    values = [100.0, 110.0, 90.0, 105.0, 95.0]
    s = summarize(values)
    sd = statistics.stdev(values)
    half = 2.7764451 * sd / math.sqrt(5)  # t(0.975, 4)
    assert s.n == 5
    assert s.mean == pytest.approx(100.0)
    assert s.stdev == pytest.approx(sd)
    assert s.cv == pytest.approx(sd / 100.0)
    assert s.ci95_low == pytest.approx(100.0 - half, rel=1e-6)
    assert s.ci95_high == pytest.approx(100.0 + half, rel=1e-6)
    assert (s.min, s.max) == (90.0, 110.0)
    assert s.values == values
    assert s.note is None


def test_summary_two_values_has_wide_interval() -> None:
    s = summarize([10.0, 12.0])
    assert s.ci95_low is not None
    assert s.ci95_high is not None
    # t(0.975, 1) = 12.706; stdev = sqrt(2); half = 12.706 * sqrt(2) / sqrt(2)
    assert s.ci95_high - s.ci95_low == pytest.approx(2 * 12.7062047, rel=1e-6)


def test_summary_single_value_has_no_interval_and_says_so() -> None:
    s = summarize([42.0])
    assert s.n == 1
    assert s.mean == 42.0
    assert s.stdev is None
    assert s.cv is None
    assert s.ci95_low is None
    assert s.ci95_high is None
    assert s.note is not None
    assert "no confidence interval" in s.note


def test_summary_zero_mean_has_no_cv() -> None:
    s = summarize([-1.0, 1.0])
    assert s.cv is None
    assert s.stdev == pytest.approx(math.sqrt(2))


def test_summary_identical_values_zero_width() -> None:
    s = summarize([5.0, 5.0, 5.0])
    assert s.stdev == 0.0
    assert s.ci95_low == s.ci95_high == 5.0


def test_summary_rejects_empty_and_non_finite() -> None:
    with pytest.raises(ValueError):
        summarize([])
    with pytest.raises(ValueError):
        summarize([1.0, math.nan])
    with pytest.raises(ValueError):
        summarize([1.0, math.inf])


# --- aggregate ----------------------------------------------------------------------------


def _record(rep: int, **overrides: Any) -> ResultRecord:
    lat = latency(1_500.0 + 10 * rep, mean_us=900.0 + rep, stdev_us=50.0, min_us=100.0, max_us=30_000.0)
    lat = lat.model_copy(update={"p50_us": 800.0, "p99_us": 20_000.0, "p999_us": 25_000.0})
    names = {"config_id": "gp2-250", "target_id": "vol-a", "workload": "oltp", "profile": "randread-8k"}
    fields: dict[str, Any] = {**names, "variant": {"numjobs": 16}, "iops": 3000.0 + rep, "bw_mibps": 23.4}
    return result_record(**{**fields, "repetition": rep, "runtime_s": 60.0, "latency": lat, **overrides})


def test_aggregate_groups_by_key_and_summarises_repetitions() -> None:
    records = [
        _record(2),
        _record(1),
        _record(3),
        _record(1, variant={"numjobs": 32}, iops=5000.0),
        _record(1, direction="write", iops=100.0),
    ]
    aggs = aggregate(records)
    assert len(aggs) == 3
    first = aggs[0]
    assert first.key() == records[0].key()
    assert first.variant == "numjobs=16"
    assert first.repetitions == 3
    assert first.repetition_ids == [1, 2, 3]
    iops = first.metrics["iops"]
    assert iops.n == 3
    assert iops.mean == pytest.approx(3002.0)
    assert iops.values == [3002.0, 3001.0, 3003.0]
    assert first.metrics["lat_p95_us"].mean == pytest.approx(1520.0)
    assert first.metrics["lat_mean_us"].mean == pytest.approx(902.0)
    assert first.metrics["runtime_s"].stdev == 0.0
    assert "real_s" not in first.metrics  # no repetition had it
    assert first.warnings == []
    assert aggs[1].metrics["iops"].n == 1
    assert aggs[1].metrics["iops"].ci95_low is None
    assert aggs[2].direction == "write"


def test_aggregate_warns_on_gaps_and_duplicates() -> None:
    records = [_record(1), _record(2, latency=None), _record(2)]
    (agg,) = aggregate(records)
    assert agg.repetitions == 3
    assert agg.metrics["iops"].n == 3
    assert agg.metrics["lat_p95_us"].n == 2
    assert "repetition 2 appears more than once" in agg.warnings
    assert any(w.startswith("lat_p95_us: present in 2 of 3") for w in agg.warnings)


def test_aggregate_command_records_use_real_s() -> None:
    records = [
        _record(r, engine="command", iops=None, bw_mibps=None, latency=None, real_s=float(100 + r))
        for r in (1, 2)
    ]
    (agg,) = aggregate(records)
    assert set(agg.metrics) == {"runtime_s", "real_s"}
    assert agg.metrics["real_s"].mean == pytest.approx(101.5)


def test_aggregate_empty() -> None:
    assert aggregate([]) == []


# --- robust change detection ---------------------------------------------------------------


def test_median_and_mad() -> None:
    assert median([3.0, 1.0, 2.0]) == 2.0
    assert median([4.0, 1.0, 2.0, 3.0]) == 2.5
    # |x - 3| = 2,1,0,1,97 -> median 1 -> scaled
    assert mad([1.0, 2.0, 3.0, 4.0, 100.0]) == pytest.approx(MAD_SCALE)
    assert mad([5.0, 5.0, 5.0]) == 0.0
    with pytest.raises(ValueError):
        median([])
    with pytest.raises(ValueError):
        mad([])


def test_mad_estimates_stdev_for_normal_data() -> None:
    dist = statistics.NormalDist(100.0, 7.0)
    values = [dist.inv_cdf((i + 0.5) / 2001) for i in range(2001)]
    assert mad(values) == pytest.approx(7.0, rel=0.01)


def test_noise_band_uses_mad_and_floor() -> None:
    noisy = [100.0, 90.0, 110.0, 95.0, 105.0]  # median 100, MAD 5 * 1.4826
    low, high = noise_band(noisy, k=3.0, min_effect=0.05)
    assert (low, high) == pytest.approx((100 - 3 * 5 * MAD_SCALE, 100 + 3 * 5 * MAD_SCALE))
    quiet = [100.0, 100.0, 100.1, 100.0]
    assert noise_band(quiet) == pytest.approx((95.0, 105.0))  # the 5 % floor
    assert noise_band([200.0]) == pytest.approx((190.0, 210.0))


def test_noise_band_is_robust_to_one_bad_night() -> None:
    history = [1000.0, 1010.0, 990.0, 1005.0, 995.0, 1000.0]
    with_outlier = [*history, 100.0]
    assert noise_band(with_outlier) == pytest.approx(noise_band(history), rel=0.02)


def test_classify_change_directions() -> None:
    history = [1000.0, 1010.0, 990.0, 1005.0, 995.0]
    drop = classify_change(800.0, history, higher_is_better=True)
    assert drop.verdict == "regression"
    assert drop.delta_pct == pytest.approx(-20.0)
    assert drop.baseline == 1000.0
    assert drop.history_n == 5
    assert classify_change(1200.0, history, higher_is_better=True).verdict == "improvement"
    # Latency: higher is worse.
    assert classify_change(1200.0, history, higher_is_better=False).verdict == "regression"
    assert classify_change(800.0, history, higher_is_better=False).verdict == "improvement"
    within = classify_change(1030.0, history, higher_is_better=True)
    assert within.verdict == "none"
    assert within.band[0] < 1030.0 < within.band[1]


def test_classify_change_min_effect_suppresses_tiny_real_changes() -> None:
    history = [1000.0] * 10  # perfectly quiet: MAD 0
    assert classify_change(1030.0, history, higher_is_better=True).verdict == "none"
    assert classify_change(1060.0, history, higher_is_better=True).verdict == "improvement"
    assert classify_change(1030.0, history, higher_is_better=True, min_effect=0.0).verdict == "improvement"


def test_classify_change_zero_baseline() -> None:
    change = classify_change(1.0, [0.0, 0.0, 0.0], higher_is_better=False)
    assert change.delta_pct is None
    assert change.verdict == "regression"


def test_classify_change_needs_history() -> None:
    with pytest.raises(ValueError):
        classify_change(1.0, [], higher_is_better=True)
    with pytest.raises(ValueError):
        noise_band([1.0], k=-1.0)

"""Burst knee detection on synthetic 1 s rate series, and window labelling."""

from __future__ import annotations

import math
import random

import pytest

from storagebench.analysis.burst import Knee, detect_knee, fit_knee, label_window

BURST, BASELINE = 3_000.0, 750.0  # gp2 250 GB: 3,000 IOPS burst, 3 IOPS/GB baseline


def step_series(
    n: int, knee: int, *, before: float = BURST, after: float = BASELINE, noise: float = 0.0, seed: int = 0
) -> list[tuple[float, float]]:
    """1 s samples at t = 0..n-1; rate ``before`` until ``knee``, then ``after``; relative noise."""
    rng = random.Random(seed)
    return [(float(t), (before if t < knee else after) * (1.0 + rng.gauss(0.0, noise))) for t in range(n)]


def test_clean_knee_at_60s() -> None:
    knee = detect_knee(step_series(300, 60))
    assert knee is not None
    assert knee.knee_t == 60.0
    assert knee.time_to_knee_s == 60.0
    assert knee.knee_range == (60.0, 60.0)
    assert knee.before == pytest.approx(BURST)
    assert knee.after == pytest.approx(BASELINE)
    assert knee.ratio == pytest.approx(0.25)
    assert (knee.n_before, knee.n_after) == (60, 240)
    assert knee.r2 == pytest.approx(1.0)
    assert knee.confidence == pytest.approx(1.0)
    assert knee.accepted
    assert knee.rejected_because == []


def test_time_to_knee_is_relative_to_series_start_and_order_free() -> None:
    series = [(t + 1_000.0, x) for t, x in step_series(120, 45)]
    knee = detect_knee(list(reversed(series)))
    assert knee is not None
    assert knee.knee_t == 1_045.0
    assert knee.time_to_knee_s == 45.0


@pytest.mark.parametrize(
    ("noise", "knee_at", "n", "after"),
    [
        (0.10, 60, 300, BASELINE),
        (0.25, 60, 300, BASELINE),
        (0.20, 200, 600, BASELINE),
        (0.10, 60, 300, 1_500.0),  # a shallower drop (0.5)
    ],
)
def test_noisy_knee_within_10_percent(noise: float, knee_at: int, n: int, after: float) -> None:
    """The accuracy requirement: detected knee within 10 % of the true time, on every seed."""
    errors = []
    for seed in range(40):
        knee = detect_knee(step_series(n, knee_at, after=after, noise=noise, seed=seed))
        assert knee is not None, f"seed {seed}: knee missed"
        errors.append(abs(knee.knee_t - knee_at) / knee_at)
        assert knee.before == pytest.approx(BURST, rel=0.1)
        assert knee.after == pytest.approx(after, rel=0.1)
    assert max(errors) <= 0.10
    assert sum(errors) / len(errors) < 0.02  # measured: mean error well under one sample


def test_knee_range_covers_the_truth_most_of_the_time() -> None:
    covered = 0
    for seed in range(60):
        knee = detect_knee(step_series(300, 60, noise=0.25, seed=seed))
        assert knee is not None
        lo, hi = knee.knee_range
        assert lo <= knee.knee_t <= hi
        covered += lo <= 60.0 <= hi
    assert covered >= 0.8 * 60


def test_pure_noise_has_no_knee() -> None:
    for seed in range(30):
        series = step_series(300, 300, noise=0.3, seed=seed)  # never drops
        assert detect_knee(series) is None
        fit = fit_knee(series)
        assert fit is not None
        assert not fit.accepted
        assert fit.confidence == 0.0
        assert any("drop not material" in r for r in fit.rejected_because)


def test_constant_series_has_no_knee() -> None:
    fit = fit_knee([(float(t), 500.0) for t in range(100)])
    assert fit is not None
    assert not fit.accepted
    assert "constant series" in fit.rejected_because


def test_linear_ramp_is_not_a_knee() -> None:
    """A gradual decline: a step explains ~75 % of a ramp's variance, so r2 alone would pass it."""
    for seed in range(20):
        rng = random.Random(seed)
        series = [(float(t), (BURST - 7.0 * t) * (1 + rng.gauss(0, 0.05))) for t in range(300)]
        fit = fit_knee(series)
        assert fit is not None
        assert fit.r2 > 0.5
        assert not fit.accepted
        assert any("ramp" in r for r in fit.rejected_because)
        assert any("plateaus" in r for r in fit.rejected_because)


def test_exponential_decay_is_not_a_knee() -> None:
    series = [(float(t), BURST * 0.99**t) for t in range(300)]
    assert detect_knee(series) is None


def test_short_transition_is_still_a_knee() -> None:
    """Credits drain over ~20 s: the knee lands inside the transition."""
    rng = random.Random(7)

    def rate(t: int) -> float:
        if t < 50:
            return BURST
        if t >= 70:
            return BASELINE
        return BURST - (t - 50) * (BURST - BASELINE) / 20

    knee = detect_knee([(float(t), rate(t) * (1 + rng.gauss(0, 0.05))) for t in range(300)])
    assert knee is not None
    assert 50 <= knee.knee_t <= 70


@pytest.mark.parametrize("knee_at", [3, 5, 295, 297])
def test_knee_near_the_edges(knee_at: int) -> None:
    knee = detect_knee(step_series(300, knee_at, noise=0.05, seed=1))
    assert knee is not None
    assert knee.knee_t == knee_at
    assert min(knee.n_before, knee.n_after) >= 3


@pytest.mark.parametrize("knee_at", [1, 2, 298, 299])
def test_knee_with_fewer_than_3_samples_on_a_side_is_not_reported(knee_at: int) -> None:
    assert detect_knee(step_series(300, knee_at, noise=0.05, seed=1)) is None


def test_rise_is_not_a_burst_knee() -> None:
    assert detect_knee(step_series(300, 60, before=BASELINE, after=BURST)) is None


def test_material_drop_threshold() -> None:
    assert detect_knee(step_series(300, 60, after=0.75 * BURST)) is None  # 0.75 >= 0.7
    assert detect_knee(step_series(300, 60, after=0.65 * BURST)) is not None
    assert detect_knee(step_series(300, 60, after=0.75 * BURST), max_ratio=0.8) is not None


def test_too_short_series() -> None:
    assert fit_knee([(0.0, 1.0)] * 5) is None
    assert detect_knee([]) is None
    with pytest.raises(ValueError):
        fit_knee([(0.0, math.nan)] * 10)
    with pytest.raises(ValueError):
        fit_knee([(0.0, 1.0)] * 10, min_segment=0)


def test_irregular_sampling() -> None:
    # 2 s samples with a gap: the knee is reported on the series' own clock.
    series = [(float(t), BURST if t < 100 else BASELINE) for t in range(0, 300, 2) if not 150 < t < 170]
    knee = detect_knee(series)
    assert knee is not None
    assert knee.knee_t == 100.0


# --- labelling a record's window ---------------------------------------------------------


def test_label_window_with_a_time() -> None:
    assert label_window(0.0, 60.0, 120.0) == "burst"
    assert label_window(0.0, 120.0, 120.0) == "burst"  # ends exactly at the knee
    assert label_window(130.0, 190.0, 120.0) == "baseline"
    assert label_window(120.0, 190.0, 120.0) == "baseline"
    assert label_window(90.0, 150.0, 120.0) == "crossed-knee"
    assert label_window(100.0, 119.0, 120.0, margin_s=5.0) == "crossed-knee"
    with pytest.raises(ValueError):
        label_window(10.0, 5.0, 120.0)


def test_label_window_uses_knee_uncertainty() -> None:
    knee = detect_knee(step_series(300, 60))
    assert knee is not None
    wide = Knee.model_validate({**knee.model_dump(), "knee_range": (55.0, 66.0)})
    assert label_window(0.0, 58.0, knee) == "burst"
    assert label_window(0.0, 58.0, wide) == "crossed-knee"
    assert label_window(62.0, 100.0, wide) == "crossed-knee"
    assert label_window(66.0, 100.0, wide) == "baseline"

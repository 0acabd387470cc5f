"""The economy simulation: quiet metrics stop early, noisy ones run to max; seeded, so reproducible."""

from __future__ import annotations

import pytest

from storagebench.analysis.adaptive_economy import expected_repetitions, fixed_half_width
from storagebench.request.repetitions import AdaptiveRepetitions

POLICY = AdaptiveRepetitions(min=2, max=10, ci_pct=2)


def test_quiet_metrics_stop_early_and_noisy_ones_spend_more() -> None:
    quiet = expected_repetitions(0.005, POLICY, trials=300)
    noisy = expected_repetitions(0.05, POLICY, trials=300)
    assert quiet.mean_repetitions < 3.5 and quiet.precision_reached == 1.0
    assert noisy.mean_repetitions > 8 and noisy.precision_reached < 0.5
    assert expected_repetitions(0.005, POLICY, trials=300) == quiet  # seeded


def test_fixed_counts_pay_for_noise_in_precision() -> None:
    assert fixed_half_width(0.01, 3, trials=300) > fixed_half_width(0.01, 10, trials=300)
    with pytest.raises(ValueError, match="repetitions"):
        fixed_half_width(0.01, 1)


def test_noise_free_series_have_a_width_of_zero_not_infinity() -> None:
    policy = AdaptiveRepetitions(min=2, max=10, ci_pct=2.0)
    assert expected_repetitions(0.0, policy, trials=5).mean_half_width_pct == 0.0
    assert fixed_half_width(0.0, 3, trials=5) == 0.0

"""The clients' spread: min, max, median, CV and the straggler, by hand."""

from __future__ import annotations

import math

import pytest

from storagebench.results.clients.spread import ClientRate, client_spread


def rates(*values: float) -> list[ClientRate]:
    return [ClientRate(index=i, client=f"10.0.0.{i}:8765", iops=v) for i, v in enumerate(values, start=1)]


def test_three_clients_one_straggling() -> None:
    spread = client_spread(rates(100.0, 80.0, 120.0))
    assert (spread.clients, spread.iops_min, spread.iops_max, spread.iops_median) == (3, 80.0, 120.0, 100.0)
    assert spread.iops_cv_pct == pytest.approx(math.sqrt(800 / 3) / 100 * 100)  # population stdev 16.33
    assert (spread.straggler, spread.straggler_index) == ("10.0.0.2:8765", 2)
    assert spread.straggler_shortfall_pct == pytest.approx(20.0)


def test_four_clients_the_median_is_between_the_middle_two() -> None:
    spread = client_spread(rates(1000.0, 900.0, 1100.0, 500.0))
    assert spread.iops_median == 950.0
    assert spread.straggler_index == 4
    assert spread.straggler_shortfall_pct == pytest.approx((950 - 500) / 950 * 100)


def test_equal_clients_have_no_straggler() -> None:
    spread = client_spread(rates(500.0, 500.0))
    assert spread.iops_cv_pct == 0.0 and spread.straggler is None and spread.straggler_shortfall_pct is None


def test_a_tie_names_the_first_client() -> None:
    spread = client_spread(rates(100.0, 50.0, 50.0, 100.0, 100.0))
    assert spread.straggler_index == 2 and spread.straggler_shortfall_pct == pytest.approx(50.0)


def test_a_client_that_did_nothing_is_a_full_shortfall() -> None:
    spread = client_spread(rates(0.0, 300.0, 300.0))
    assert spread.straggler_index == 1 and spread.straggler_shortfall_pct == pytest.approx(100.0)


def test_no_rates_is_an_error() -> None:
    with pytest.raises(ValueError, match="no client rates"):
        client_spread([])

"""What a Spot instance paid (time-weighted over the price history) and the bundled Spot estimates."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from storagebench.prices.snapshot import load_snapshot
from storagebench.prices.spot import SpotPricePoint, SpotPriceUnavailable, paid
from storagebench.prices.spot_snapshot import load_spot_snapshot, spot_estimate, unknown_note

T0 = datetime(2026, 11, 1, 10, 0, tzinfo=UTC)


def at(minutes: float) -> datetime:
    return T0 + timedelta(minutes=minutes)


def test_one_price_for_the_whole_life() -> None:
    charge = paid([SpotPricePoint(at(-600), 0.06)], "c5.large", "us-east-1a", T0, at(90))
    assert charge.usd == pytest.approx(0.06 * 1.5)
    assert charge.average_usd_per_hour == pytest.approx(0.06)
    assert charge.seconds == 5400
    assert [s.usd_per_hour for s in charge.segments] == [0.06]
    assert charge.segments[0].start == "2026-11-01T10:00:00Z"  # from the launch, not from the change


def test_each_price_counts_for_the_time_it_was_in_effect() -> None:
    history = [  # given out of order, with a change before the launch and one after the end
        SpotPricePoint(at(75), 0.02),
        SpotPricePoint(at(-30), 0.04),
        SpotPricePoint(at(300), 9.99),
        SpotPricePoint(at(30), 0.10),
        SpotPricePoint(at(-90), 5.00),  # superseded before the launch
    ]
    charge = paid(history, "c5.large", "us-east-1a", T0, at(120))
    # 10:00-10:30 at 0.04, 10:30-11:15 at 0.10, 11:15-12:00 at 0.02
    assert charge.usd == pytest.approx(0.5 * 0.04 + 0.75 * 0.10 + 0.75 * 0.02)
    assert charge.average_usd_per_hour == pytest.approx(0.11 / 2)
    assert [(s.start[11:16], s.end[11:16], s.usd_per_hour) for s in charge.segments] == [
        ("10:00", "10:30", 0.04),
        ("10:30", "11:15", 0.10),
        ("11:15", "12:00", 0.02),
    ]
    assert charge.as_of == "2026-11-01"
    assert "2 price change(s), time-weighted" in charge.describe()


def test_a_change_at_the_launch_second_is_the_price_from_the_start() -> None:
    charge = paid([SpotPricePoint(at(-5), 0.5), SpotPricePoint(T0, 0.1)], "c5.large", "z", T0, at(60))
    assert charge.usd == pytest.approx(0.1) and len(charge.segments) == 1


def test_no_price_known_at_the_launch_is_refused_not_guessed() -> None:
    with pytest.raises(SpotPriceUnavailable, match=r"c5.large in us-east-1a .* 2026-11-01T10:00:00Z.*10:10"):
        paid([SpotPricePoint(at(10), 0.05)], "c5.large", "us-east-1a", T0, at(60))
    with pytest.raises(SpotPriceUnavailable, match="no Spot price"):
        paid([], "c5.large", "us-east-1a", T0, at(60))


def test_zero_seconds_and_backwards_lifetimes() -> None:
    assert paid([SpotPricePoint(at(-1), 0.2)], "c5.large", "z", T0, T0).average_usd_per_hour == 0.2
    with pytest.raises(ValueError, match="before its start"):
        paid([SpotPricePoint(at(-1), 0.2)], "c5.large", "z", T0, at(-5))


def test_a_point_needs_a_time_zone_and_a_price() -> None:
    with pytest.raises(ValueError, match="no time zone"):
        SpotPricePoint(datetime(2026, 11, 1), 0.1)
    with pytest.raises(ValueError, match="non-negative"):
        SpotPricePoint(T0, -0.1)


# ------------------------------------------------------------------------ the bundled Spot snapshot


def test_the_snapshot_is_dated_and_sourced() -> None:
    snapshot = load_spot_snapshot()
    assert snapshot.as_of == "2026-08-06"
    assert "spot.json" in snapshot.source and "69bcec6705869f89302ee456159dfe39f8dc2b7b" in snapshot.source
    price = spot_estimate("us-east-1", "c5.4xlarge")
    assert price is not None
    assert (price.usd, price.unit, price.source, price.as_of) == (
        0.2631,
        "Hrs",
        "spot-snapshot",
        "2026-08-06",
    )


def test_every_spot_price_is_below_the_types_on_demand_price() -> None:
    """EC2 never charges more than on-demand for Spot: a figure above it was misread."""
    on_demand = load_snapshot().regions["us-east-1"].ec2_instance_hour
    spot = load_spot_snapshot().regions["us-east-1"]
    checked = [t for t in spot if t in on_demand]
    assert len(checked) >= 10
    for instance_type in checked:
        assert 0 < spot[instance_type].usd < on_demand[instance_type].usd, instance_type


def test_the_event_types_are_either_priced_or_said_to_be_unknown() -> None:
    for instance_type in ("c5.large", "c5.2xlarge", "c5.4xlarge", "m7g.xlarge"):
        assert spot_estimate("us-east-1", instance_type) is not None
    for instance_type in ("r3.4xlarge", "r5b.24xlarge"):
        assert spot_estimate("us-east-1", instance_type) is None
        note = unknown_note("us-east-1", instance_type)
        assert note.startswith(f"Spot price unknown for {instance_type} in us-east-1")
        assert note.endswith("on-demand used as the upper bound")
    assert spot_estimate("eu-west-1", "c5.large") is None
    assert "not in the bundled Spot price snapshot" in unknown_note("eu-west-1", "c5.large")

"""Envelopes against the figures AWS documents (EBS User Guide, EBS-optimized instance tables)."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from storagebench.catalog.envelope import (
    emulation_limits,
    instance_limits,
    mb_to_mib,
    target_envelope,
    volume_envelope,
)

# --- gp2 -----------------------------------------------------------------------------------


def test_gp2_100_gib_bursts_to_3000_for_about_2000_s() -> None:
    env = volume_envelope("gp2", 100)
    assert env.baseline_iops == 300
    assert env.burst_iops == 3000
    assert env.burst_seconds == pytest.approx(2000)
    assert env.credit_capacity == 5_400_000
    assert env.credit_refill_per_s == 300
    assert env.credit_unit == "io"
    # 128 MiB/s up to 170 GiB while bursting; 300 IOPS x 256 KiB = 75 MiB/s once the bucket is empty.
    assert env.burst_mibps == 128
    assert env.baseline_mibps == 75
    assert env.io_size_kib == 256


def test_gp2_describe_line() -> None:
    assert volume_envelope("gp2", 100).describe() == (
        "gp2 100 GiB: 300 IOPS baseline, 3,000 burst for ~2,000 s, 75 MiB/s (128 MiB/s while bursting)"
    )


@pytest.mark.parametrize(
    ("size_gib", "baseline", "seconds"),
    [(1, 100, 1862), (100, 300, 2000), (334, 1002, 2703), (750, 2250, 7200)],
)
def test_gp2_burst_duration_table(size_gib: float, baseline: float, seconds: float) -> None:
    """The EBS User Guide's table: baseline and burst duration at 3,000 IOPS from a full bucket."""
    env = volume_envelope("gp2", size_gib)
    assert env.baseline_iops == baseline
    assert env.burst_seconds == pytest.approx(seconds, abs=1)


def test_gp2_1000_gib_does_not_burst() -> None:
    env = volume_envelope("gp2", 1000)
    assert env.baseline_iops == 3000
    assert env.burst_iops is None
    assert env.burst_mibps is None
    assert env.burst_seconds is None
    assert env.credit_capacity is None
    assert env.credit_unit is None
    assert env.baseline_mibps == 250
    assert not env.bursts


@pytest.mark.parametrize("size_gib", [5334, 16384])
def test_gp2_reaches_16000_iops_from_5334_gib(size_gib: float) -> None:
    assert volume_envelope("gp2", size_gib).baseline_iops == 16000


def test_gp2_just_below_5334_gib_is_below_16000() -> None:
    assert volume_envelope("gp2", 5333).baseline_iops == 15999


def test_gp2_throughput_tiers() -> None:
    at_170 = volume_envelope("gp2", 170)
    assert (at_170.baseline_mibps, at_170.burst_mibps) == (127.5, 128)
    middle = volume_envelope("gp2", 250)
    assert (middle.baseline_mibps, middle.burst_mibps) == (128, 250)
    at_334 = volume_envelope("gp2", 334)
    assert (at_334.baseline_mibps, at_334.burst_mibps) == (250, 250)
    assert at_334.burst_iops == 3000


def test_gp2_minimum_100_iops() -> None:
    assert volume_envelope("gp2", 10).baseline_iops == 100


# --- gp3 / io1 / io2 -----------------------------------------------------------------------


def test_gp3_defaults() -> None:
    env = volume_envelope("gp3", 100)
    assert (env.baseline_iops, env.baseline_mibps) == (3000, 125)
    assert (env.provisioned_iops, env.provisioned_mibps) == (3000, 125)
    assert env.burst_iops is None and env.credit_unit is None


def test_gp3_small_volume_keeps_included_iops() -> None:
    assert volume_envelope("gp3", 1).baseline_iops == 3000


def test_gp3_2025_maxima() -> None:
    env = volume_envelope("gp3", 160, iops=80000, throughput_mibps=2000)
    assert (env.baseline_iops, env.baseline_mibps) == (80000, 2000)


def test_gp3_ratios_are_enforced() -> None:
    with pytest.raises(ValueError, match="500 per GiB"):
        volume_envelope("gp3", 100, iops=80000)
    with pytest.raises(ValueError, match="needs at least 4,000 IOPS"):
        volume_envelope("gp3", 100, throughput_mibps=1000)
    assert volume_envelope("gp3", 100, iops=4000, throughput_mibps=1000).baseline_mibps == 1000


@pytest.mark.parametrize(
    ("iops", "mibps"),
    [(1000, 250), (2000, 500), (32000, 500), (48000, 750), (64000, 1000)],
)
def test_io1_throughput_follows_provisioned_iops(iops: int, mibps: float) -> None:
    """256 KiB per IOPS up to 500 MiB/s (reached at 2,000); above 32,000 IOPS 16 KiB per IOPS."""
    env = volume_envelope("io1", 1280, iops=iops)
    assert env.baseline_iops == iops
    assert env.baseline_mibps == mibps


def test_io1_needs_iops_within_50_per_gib() -> None:
    with pytest.raises(ValueError, match="requires provisioned IOPS"):
        volume_envelope("io1", 100)
    with pytest.raises(ValueError, match="50 per GiB"):
        volume_envelope("io1", 100, iops=64000)


@pytest.mark.parametrize(("iops", "mibps"), [(1000, 256), (15000, 3840), (16000, 4000), (256000, 4000)])
def test_io2_throughput(iops: int, mibps: float) -> None:
    assert volume_envelope("io2", 256, iops=iops).baseline_mibps == pytest.approx(mibps)


# --- HDD and magnetic ----------------------------------------------------------------------


def test_st1_2_tib_baseline_and_burst() -> None:
    env = volume_envelope("st1", 2048)
    assert (env.baseline_mibps, env.burst_mibps) == (80, 500)
    assert (env.baseline_iops, env.burst_iops) == (80, 500)
    assert env.credit_unit == "mib"
    assert env.credit_capacity == 2 * 1024 * 1024
    assert env.credit_refill_per_s == 80
    assert env.burst_seconds == pytest.approx(2 * 1024 * 1024 / (500 - 80))
    assert env.io_size_kib == 1024


def test_st1_and_sc1_table_points() -> None:
    assert (volume_envelope("st1", 1024).baseline_mibps, volume_envelope("st1", 1024).burst_mibps) == (
        40,
        250,
    )
    large = volume_envelope("st1", 12800)
    assert large.baseline_mibps == 500
    assert large.burst_mibps is None
    sc1 = volume_envelope("sc1", 1024)
    assert (sc1.baseline_mibps, sc1.burst_mibps) == (12, 80)
    assert volume_envelope("sc1", 16384).baseline_mibps == 192


def test_standard_magnetic() -> None:
    env = volume_envelope("standard", 250)
    assert (env.baseline_iops, env.burst_iops) == (100, 200)
    assert (env.baseline_mibps, env.burst_mibps) == (40, 90)
    assert env.burst_seconds is None
    assert env.credit_capacity is None


def test_invalid_requests() -> None:
    with pytest.raises(KeyError, match="allowed"):
        volume_envelope("gp9", 100)
    with pytest.raises(ValueError, match="size"):
        volume_envelope("st1", 100)
    with pytest.raises(ValueError, match="does not take provisioned IOPS"):
        volume_envelope("gp2", 100, iops=3000)
    with pytest.raises(ValueError, match="does not take provisioned throughput"):
        volume_envelope("io2", 100, iops=3000, throughput_mibps=500)


def test_envelopes_are_frozen() -> None:
    env = volume_envelope("gp2", 100)
    with pytest.raises(ValidationError):
        env.baseline_iops = 1  # type: ignore[misc]


# --- instances -----------------------------------------------------------------------------


def test_mb_to_mib() -> None:
    assert mb_to_mib(1_048_576 / 1_000_000) == pytest.approx(1)


def test_instance_limits_convert_mb_to_mib() -> None:
    limits = instance_limits("c5.large")
    assert limits is not None
    assert (limits.baseline_mbps, limits.max_mbps) == (81.25, 593.75)
    assert limits.max_mibps == pytest.approx(566.24, abs=0.01)
    assert limits.baseline_mibps == pytest.approx(77.49, abs=0.01)
    assert (limits.baseline_iops, limits.max_iops) == (4000, 20000)
    assert limits.burst_minutes_per_day == 30
    assert limits.instance_store is None


def test_instance_limits_instance_store_and_unknown() -> None:
    limits = instance_limits("i3en.24xlarge")
    assert limits is not None and limits.instance_store is not None
    assert (limits.instance_store.count, limits.instance_store.media) == (8, "nvme")
    assert limits.burst_minutes_per_day is None
    assert instance_limits("z9.mega") is None


# --- targets -------------------------------------------------------------------------------


def test_c5_large_caps_a_16000_iops_io2() -> None:
    target = target_envelope("c5.large", "io2", 100, 16000, None)
    limits = instance_limits("c5.large")
    assert limits is not None
    # The volume could move 4,000 MiB/s; the instance allows 566 MiB/s at most.
    assert target.mibps_bound_by == "instance"
    assert target.expected_mibps == pytest.approx(limits.max_mibps)
    # 16,000 IOPS fit under the 20,000 maximum, but not under the 4,000 baseline after 30 minutes.
    assert (target.expected_iops, target.iops_bound_by) == (16000, "volume")
    assert (target.sustained_iops, target.sustained_iops_bound_by) == (4000, "instance")
    assert target.sustained_mibps == pytest.approx(limits.baseline_mibps)
    assert any("30 min per 24 h" in note for note in target.notes)
    assert "instance-bound" in target.describe()


def test_raid0_of_four_gp3_sums_members() -> None:
    target = target_envelope("r5b.24xlarge", "gp3", 1000, 16000, 1000, count=4)
    assert (target.stripe_baseline_iops, target.stripe_baseline_mibps) == (64000, 4000)
    assert (target.expected_iops, target.iops_bound_by) == (64000, "volume")
    assert (target.expected_mibps, target.mibps_bound_by) == (4000, "volume")
    assert target.sustained_iops == 64000


def test_raid0_of_four_gp3_on_a_small_instance_is_instance_bound() -> None:
    target = target_envelope("m6i.2xlarge", "gp3", 1000, 16000, 1000, count=4)
    assert (target.expected_iops, target.iops_bound_by) == (40000, "instance")
    assert target.expected_mibps == pytest.approx(mb_to_mib(1250))
    assert target.mibps_bound_by == "instance"
    assert (target.sustained_iops, target.sustained_iops_bound_by) == (12000, "instance")


def test_raid0_of_gp2_sums_bursts_and_baselines() -> None:
    target = target_envelope(None, "gp2", 100, None, None, count=4)
    assert target.stripe_burst_iops == 12000
    assert (target.expected_iops, target.iops_bound_by) == (12000, "unknown-instance")
    assert target.sustained_iops == 1200
    assert target.instance is None


def test_unknown_instance_applies_no_cap() -> None:
    target = target_envelope("z9.mega", "io2", 256, 256000, None)
    assert (target.expected_iops, target.iops_bound_by) == (256000, "unknown-instance")
    assert target.mibps_bound_by == "unknown-instance"
    assert any("not in the catalog" in note for note in target.notes)


def test_xen_instance_caps_io1_per_volume() -> None:
    target = target_envelope("r3.4xlarge", "io1", 1000, 40000, None)
    assert target.stripe_baseline_iops == 32000
    assert target.stripe_baseline_mibps == 500
    assert (target.expected_iops, target.iops_bound_by) == (16000, "instance")
    assert any("not Nitro" in note for note in target.notes)
    assert any("EBS-optimized" in note for note in target.notes)


def test_report_card_setup_is_instance_bound_on_throughput() -> None:
    """Three 250 GiB gp2 volumes on r3.4xlarge (2014 report card): 750 MiB/s of volume, 238 of instance."""
    target = target_envelope("r3.4xlarge", "gp2", 250, None, None, count=3)
    assert target.stripe_burst_mibps == 750
    assert target.expected_mibps == pytest.approx(mb_to_mib(250))
    assert target.mibps_bound_by == "instance"
    assert (target.expected_iops, target.iops_bound_by) == (9000, "volume")
    assert target.sustained_iops == 2250


def test_count_must_be_positive() -> None:
    with pytest.raises(ValueError, match="count"):
        target_envelope("c5.large", "gp3", 100, None, None, count=0)


# --- emulation -----------------------------------------------------------------------------


def test_gp2_emulation_bucket_empties_at_the_knee() -> None:
    env = volume_envelope("gp2", 100)
    limits = emulation_limits(env)
    assert limits["credit_capacity"] == 60 * (3000 - 300)
    assert limits["credit_refill_per_s"] == 300
    assert limits["credit_unit"] == "io"
    assert (limits["iops"], limits["burst_iops"]) == (300, 3000)
    assert (limits["mibps"], limits["burst_mibps"]) == (75, 128)
    # At full burst demand the balance drains at burst - refill: empty after knee_seconds.
    drain = limits["burst_iops"] - limits["credit_refill_per_s"]
    assert limits["credit_capacity"] / drain == pytest.approx(60)
    longer = emulation_limits(env, knee_seconds=120)
    assert longer["credit_capacity"] == 120 * 2700


def test_st1_emulation_uses_throughput_credits() -> None:
    limits = emulation_limits(volume_envelope("st1", 2048), knee_seconds=30)
    assert limits["credit_unit"] == "mib"
    assert limits["credit_capacity"] == 30 * (500 - 80)
    assert limits["credit_refill_per_s"] == 80
    assert limits["io_size_kib"] == 1024


def test_no_bucket_without_credits() -> None:
    for env in (
        volume_envelope("gp3", 100),
        volume_envelope("gp2", 1000),
        volume_envelope("io2", 100, iops=5000),
    ):
        limits = emulation_limits(env)
        assert "credit_capacity" not in limits
        assert "burst_iops" not in limits
        assert limits["iops"] == env.baseline_iops


def test_emulation_io_size_override_and_bad_knee() -> None:
    env = volume_envelope("gp3", 100)
    assert emulation_limits(env, io_size_kib=16)["io_size_kib"] == 16
    assert emulation_limits(env)["io_size_kib"] == 256
    with pytest.raises(ValueError, match="knee_seconds"):
        emulation_limits(env, knee_seconds=0)

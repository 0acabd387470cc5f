"""Delivered vs provisioned, and what bound the result."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Literal

import pytest
from tests.support.records import result_record

from storagebench.analysis.delivery import (
    NETWORK_BOUND,
    bound_label,
    check_delivery,
    check_envelope,
    combined_rate,
    ebs_bound,
)
from storagebench.results.records import ResultRecord
from storagebench.results.volume import VolumeSide


def test_saturating_workload_at_ceiling_is_volume_bound() -> None:
    d = check_delivery(2_950.0, 3_000.0, "volume", "iops")
    assert d.status == "delivered"
    assert d.bound == "volume"
    assert d.ratio == pytest.approx(2_950 / 3_000)
    assert d.warnings == []


@pytest.mark.parametrize(("measured", "status"), [(2_700.0, "delivered"), (2_699.0, "under-delivered")])
def test_90_percent_boundary(measured: float, status: str) -> None:
    assert check_delivery(measured, 3_000.0, "volume", "iops").status == status


@pytest.mark.parametrize(("measured", "status"), [(3_300.0, "delivered"), (3_301.0, "over-delivered")])
def test_110_percent_boundary(measured: float, status: str) -> None:
    assert check_delivery(measured, 3_000.0, "volume", "iops").status == status


def test_instance_bound_when_instance_limit_is_lower() -> None:
    d = check_delivery(593.0, 593.75, "instance", "throughput", unit="MiB/s")
    assert d.status == "delivered"
    assert d.bound == "instance"
    assert len(d.warnings) == 1
    assert d.warnings[0].startswith("instance-bound")
    assert "MiB/s" in d.warnings[0]


def test_under_delivered_says_provisioned_not_delivered() -> None:
    d = check_delivery(1_500.0, 10_000.0, "volume", "iops", unit="IOPS")
    assert d.status == "under-delivered"
    assert d.bound == "neither"
    assert d.ratio == pytest.approx(0.15)
    assert d.warnings == ["provisioned not delivered: 1,500 IOPS of 10,000 IOPS expected (15%)"]


def test_under_delivered_with_unknown_instance_limit_blames_nobody_yet() -> None:
    d = check_delivery(1_500.0, 10_000.0, "unknown-instance", "iops")
    assert d.status == "under-delivered"
    assert any("instance limit unknown" in w for w in d.warnings)


def test_delivered_with_unknown_instance_limit_assumes_volume() -> None:
    d = check_delivery(9_800.0, 10_000.0, "unknown-instance", "iops")
    assert d.status == "delivered"
    assert d.bound == "volume"
    assert any("instance limit unknown" in w for w in d.warnings)


def test_io1_over_delivering_its_throughput_sla() -> None:
    """Study 4: Provisioned IOPS volumes gave about 2x their throughput SLA on sequential reads."""
    d = check_delivery(320.0, 160.0, "volume", "throughput", unit="MiB/s")
    assert d.status == "over-delivered"
    assert d.bound == "neither"
    assert d.ratio == pytest.approx(2.0)
    assert d.warnings[0].startswith("over-delivered")


@pytest.mark.parametrize("intent", ["latency", "metadata", "command"])
def test_non_saturating_intents_are_not_applicable(intent: str) -> None:
    d = check_delivery(200.0, 3_000.0, "volume", intent)
    assert d.status == "not-applicable"
    assert d.bound == "neither"
    assert d.ratio == pytest.approx(200 / 3_000)  # still reported, just not judged
    assert len(d.warnings) == 1


@pytest.mark.parametrize("expected", [None, 0.0, -5.0, math.nan])
def test_no_expectation_is_not_applicable(expected: float | None) -> None:
    d = check_delivery(100.0, expected, "volume", "iops")
    assert d.status == "not-applicable"
    assert d.ratio is None


def test_invalid_inputs() -> None:
    with pytest.raises(ValueError):
        check_delivery(-1.0, 100.0, "volume", "iops")
    with pytest.raises(ValueError):
        check_delivery(math.inf, 100.0, "volume", "iops")
    with pytest.raises(ValueError, match="volume, instance, network or unknown-instance, got 'cache'"):
        check_delivery(100.0, 100.0, "cache", "iops")


def test_a_result_the_clients_network_held_is_labelled_instance_bound_network() -> None:
    d = check_delivery(2_900.0, 2_980.0, "network", "throughput", unit="MiB/s")
    assert (d.status, d.bound) == ("delivered", "network")
    assert bound_label(d) == NETWORK_BOUND == "instance-bound:network"
    assert d.warnings[0].startswith("instance-bound: network: the client's network is below the storage's")
    ebs = check_delivery(2_900.0, 2_980.0, "instance", "throughput")
    assert bound_label(ebs) == "instance-bound"
    assert bound_label(check_delivery(2_000.0, 2_980.0, "network", "throughput")) is None  # under-delivered
    assert bound_label(check_delivery(2_900.0, 2_980.0, "volume", "throughput")) is None


def test_custom_tolerances() -> None:
    assert check_delivery(2_850.0, 3_000.0, "volume", "iops", delivered_at=0.99).status == "under-delivered"
    assert (
        check_delivery(3_200.0, 3_000.0, "volume", "iops", over_delivered_above=1.05).status
        == "over-delivered"
    )


# --- envelope protocol ---------------------------------------------------------------------


@dataclass(frozen=True)
class FakeEnvelope:
    """Shaped like catalog.envelope.TargetEnvelope; frozen to prove read-only access suffices."""

    expected_iops: float | None
    expected_mibps: float | None
    iops_bound_by: Literal["volume", "instance", "unknown-instance"]
    mibps_bound_by: Literal["volume", "instance", "unknown-instance"]


def test_check_envelope_picks_the_metric() -> None:
    env = FakeEnvelope(
        expected_iops=3_000.0, expected_mibps=250.0, iops_bound_by="volume", mibps_bound_by="instance"
    )
    iops = check_envelope(2_990.0, env, "iops", "iops")
    assert (iops.status, iops.bound, iops.expected) == ("delivered", "volume", 3_000.0)
    mibps = check_envelope(240.0, env, "mibps", "throughput")
    assert (mibps.status, mibps.bound, mibps.expected) == ("delivered", "instance", 250.0)
    assert "MiB/s" in mibps.warnings[0]
    missing = FakeEnvelope(
        expected_iops=None, expected_mibps=None, iops_bound_by="volume", mibps_bound_by="volume"
    )
    assert check_envelope(1.0, missing, "iops", "iops").status == "not-applicable"


# --- combining directions -----------------------------------------------------------------


def _record(direction: str, iops: float | None, **overrides: Any) -> ResultRecord:
    bw = None if iops is None else iops * 4 / 1024
    fields = {"config_id": "c", "target_id": "t", "workload": "randrw", "profile": "randrw-4k", "bytes": 0}
    return result_record(**fields, direction=direction, iops=iops, bw_mibps=bw, runtime_s=60.0, **overrides)


def test_combined_rate_sums_directions_and_groups() -> None:
    records = [_record("read", 750.0), _record("write", 2_250.0), _record("read", 100.0, group=1)]
    assert combined_rate(records, "iops") == pytest.approx(3_100.0)
    assert combined_rate(records, "bw_mibps") == pytest.approx(3_100 * 4 / 1024)
    d = check_delivery(combined_rate(records, "iops") or 0.0, 3_000.0, "volume", "iops")
    assert d.status == "delivered"


def test_combined_rate_edge_cases() -> None:
    assert combined_rate([], "iops") is None
    assert combined_rate([_record("read", None)], "iops") is None
    with pytest.raises(ValueError):
        combined_rate([_record("read", 1.0), _record("write", 1.0, repetition=2)], "iops")
    with pytest.raises(ValueError):
        combined_rate([_record("read", 1.0), _record("write", 1.0, phase="create")], "iops")
    with pytest.raises(ValueError):
        combined_rate([_record("mixed", 2.0), _record("read", 1.0)], "iops")


# --- what EBS says bound the phase ----------------------------------------------------------


def _ebs(source: str = "nvme-log-page", **bound: float | None) -> VolumeSide:
    return VolumeSide(source=source, devices=1, ops=180_000, bytes=180_000 * 4096, **bound)  # type: ignore[arg-type]


def test_ebs_names_the_limit_that_held_most_of_the_phase() -> None:
    read = _record("read", 3_000.0, volume=_ebs(volume_iops_bound_s=57.0, instance_iops_bound_s=0.0))
    assert ebs_bound([read]) == ("volume-iops", pytest.approx(0.95))
    instance = _record(
        "read", 3_000.0, volume=_ebs(volume_iops_bound_s=5.0, instance_throughput_bound_s=48.0)
    )
    assert ebs_bound([instance]) == ("instance-throughput", pytest.approx(0.8))


def test_a_saturating_phase_ebs_did_not_throttle_is_said_so() -> None:
    quiet = _record("read", 1_200.0, volume=_ebs(volume_iops_bound_s=3.0, volume_throughput_bound_s=0.0))
    assert ebs_bound([quiet]) == ("unthrottled", pytest.approx(0.05))


def test_no_ebs_statistics_no_claim() -> None:
    assert ebs_bound([_record("read", 3_000.0)]) is None
    emulated = _record("read", 3_000.0, volume=_ebs(source="kernel-counters"))
    assert ebs_bound([emulated]) is None

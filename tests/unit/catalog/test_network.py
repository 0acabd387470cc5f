"""Network bandwidth in the catalog, and the network envelope: min(storage, the clients' network)."""

from __future__ import annotations

import json
from importlib import resources
from typing import Any

import pytest
from pydantic import ValidationError

from storagebench.catalog import Catalog, load_catalog
from storagebench.catalog.envelope import mb_to_mib
from storagebench.catalog.network import StorageSide, network_envelope, network_limits


def _raw() -> dict[str, Any]:
    text = resources.files("storagebench.catalog").joinpath("catalog.json").read_text(encoding="utf-8")
    return json.loads(text)  # type: ignore[no-any-return]


def test_every_instance_type_has_a_sourced_baseline_and_burst_network_bandwidth() -> None:
    catalog = load_catalog()
    raw = _raw()["instances"]
    for name, spec in catalog.instances.items():
        assert "network_baseline_gbps" in raw[name] and "network_burst_gbps" in raw[name], name
        assert 0 < spec.network_baseline_gbps <= spec.network_burst_gbps, name
        assert spec.network_source in catalog.sources, name
    note = catalog.sources["ec2-network-bandwidth"].note or ""
    assert "inbound and outbound" in note and "r3.4xlarge" in note


@pytest.mark.parametrize("field", ["network_baseline_gbps", "network_burst_gbps", "network_source"])
def test_an_instance_type_without_its_network_is_refused(field: str) -> None:
    data = _raw()
    del data["instances"]["c5.large"][field]
    with pytest.raises(ValidationError, match=field):
        Catalog.model_validate(data)


def test_a_burst_below_the_baseline_is_refused() -> None:
    data = _raw()
    data["instances"]["c5.large"]["network_burst_gbps"] = 0.5
    with pytest.raises(
        ValidationError, match=r"network_burst_gbps 0\.5 is below network_baseline_gbps 0\.75"
    ):
        Catalog.model_validate(data)


@pytest.mark.parametrize(
    ("name", "baseline", "burst"),
    [
        ("r5b.24xlarge", 25, 25),
        ("r5n.24xlarge", 100, 100),
        ("i3en.24xlarge", 100, 100),
        ("c5.large", 0.75, 10),
        ("m5.large", 0.75, 10),
        ("c5.2xlarge", 2.5, 10),
        ("c5.4xlarge", 5, 10),
        ("c5.9xlarge", 12, 12),
        ("m6i.large", 0.781, 12.5),
        ("c7g.4xlarge", 7.5, 15),
        ("r3.4xlarge", 2, 10),
    ],
)
def test_published_network_figures(name: str, baseline: float, burst: float) -> None:
    limits = network_limits(name)
    assert limits is not None
    assert (limits.baseline_gbps, limits.burst_gbps) == (baseline, burst)
    assert limits.baseline_mbps == baseline * 125
    assert limits.baseline_mibps == pytest.approx(mb_to_mib(baseline * 125))


def test_r5n_24xlarge_is_a_complete_100_gbit_client() -> None:
    spec = load_catalog().instances["r5n.24xlarge"]
    assert (spec.vcpus, spec.memory_gib, spec.arch, spec.nitro) == (96, 768, "x86_64", True)
    assert (spec.ebs_max_mbps, spec.ebs_max_iops, spec.ebs_max_bandwidth_mbit) == (2375, 80000, 19000)
    assert spec.on_demand_usd_per_hour_us_east_1 == 7.152
    assert (spec.source, spec.spec_source, spec.price_source) == (
        "ebs-optimized",
        "ec2-instance-types",
        "ec2-pricing",
    )


def test_network_limits_describe_each_way_and_the_burst() -> None:
    r5b = network_limits("r5b.24xlarge")
    c5 = network_limits("c5.large")
    assert r5b is not None and c5 is not None
    assert r5b.describe() == "r5b.24xlarge network 25 Gbps (3,125 MB/s, 2,980 MiB/s each way)"
    assert c5.describe() == (
        "c5.large network 0.75 Gbps (93.75 MB/s, 89.41 MiB/s each way baseline; 10 Gbps, 1,250 MB/s, "
        "1,192 MiB/s burst on network credits)"
    )
    assert network_limits("z9.mega") is None


def test_storage_above_the_client_network_is_network_bound() -> None:
    storage = StorageSide(mibps=14901.0, iops=1280000.0, basis="5 controllers")
    env = network_envelope("r5b.24xlarge", storage)
    assert env.expected_mibps == pytest.approx(2980.23, abs=0.01)
    assert (env.mibps_bound_by, env.sustained_mibps_bound_by) == ("network", "network")
    assert (env.expected_iops, env.iops_bound_by) == (1280000.0, "volume")  # the network caps bytes
    assert env.network_bound
    warning = env.warning("vsan")
    assert warning is not None
    assert "r5b.24xlarge network 25 Gbps (3,125 MB/s, 2,980 MiB/s each way)" in warning
    assert "14,901 MiB/s (5 controllers)" in warning and "instance-bound: network" in warning


def test_storage_below_the_client_network_is_storage_bound_and_not_warned() -> None:
    env = network_envelope("r5n.24xlarge", StorageSide(mibps=1500.0, basis="EFS elastic"))
    assert (env.expected_mibps, env.mibps_bound_by) == (1500.0, "volume")
    assert not env.network_bound
    assert env.warning("efs") is None


def test_a_burstable_client_is_capped_at_its_burst_short_and_its_baseline_long() -> None:
    env = network_envelope("c5.large", StorageSide(mibps=1000.0, basis="FSx"))
    assert (env.expected_mibps, env.mibps_bound_by) == (1000.0, "volume")  # 1,192 MiB/s burst
    assert env.sustained_mibps == pytest.approx(mb_to_mib(93.75))
    assert env.sustained_mibps_bound_by == "network"
    assert env.network_bound
    warning = env.warning("fsx")
    assert warning is not None and "0.75 Gbps (93.75 MB/s, 89.41 MiB/s each way baseline; 10 Gbps" in warning


def test_several_clients_add_their_network() -> None:
    env = network_envelope("r5b.24xlarge", StorageSide(mibps=5000.0, basis="x"), clients=2)
    assert (env.expected_mibps, env.mibps_bound_by) == (5000.0, "volume")


def test_unknown_storage_or_client() -> None:
    unknown_storage = network_envelope("r5b.24xlarge", StorageSide(mibps=None, basis="NFS"))
    assert unknown_storage.mibps_bound_by == "network"
    assert unknown_storage.warning("nfs") is None  # nothing known to be capped
    unknown_client = network_envelope("z9.mega", StorageSide(mibps=900.0, basis="EFS"))
    assert (unknown_client.expected_mibps, unknown_client.mibps_bound_by) == (900.0, "unknown-instance")
    with pytest.raises(ValueError, match="clients must be at least 1, got 0"):
        network_envelope("c5.large", StorageSide(mibps=1.0, basis="x"), clients=0)


def test_ceiling_at_an_io_size_takes_the_storage_iops_into_account() -> None:
    env = network_envelope("r5n.24xlarge", StorageSide(mibps=14901.0, iops=1280000.0, basis="x"))
    at_8k, bound = env.ceiling_mibps(8192, sustained=False)
    assert (at_8k, bound) == (pytest.approx(10000.0), "volume")  # 1.28 M x 8 KiB, under 100 Gbps
    at_1m, bound = env.ceiling_mibps(1 << 20, sustained=True)
    assert (at_1m, bound) == (pytest.approx(11920.93, abs=0.01), "network")

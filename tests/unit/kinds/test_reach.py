"""kinds.reach: storage reached over the clients' network is capped at min(storage, their network)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from storagebench.catalog.envelope import TargetEnvelope, mb_to_mib
from storagebench.catalog.network import NetworkEnvelope
from storagebench.kinds.reach import network_checks, storage_side, target_ceiling
from storagebench.request import parse_request
from storagebench.request.model import Config

EVENTS = Path(__file__).resolve().parents[3] / "events"
GBIT_MIBPS = mb_to_mib(125)  # one Gbps in MiB/s


def one_config(instance_type: str, targets: list[dict[str, Any]], **extra: Any) -> Config:
    document = {
        "name": "t",
        "configs": [{"id": "c", "instance_type": instance_type, "targets": targets, **extra}],
        "workloads": [{"profile": "std-randread-4k"}],
    }
    return parse_request(document).configs[0]


def network(config: Config) -> NetworkEnvelope:
    envelope = target_ceiling(config, config.targets[0])
    assert isinstance(envelope, NetworkEnvelope)
    return envelope


def test_efs_elastic_is_capped_by_a_small_clients_network_and_not_by_a_100_gbit_one() -> None:
    efs = [{"id": "fs", "kind": "efs", "throughput_mode": "elastic"}]
    small = network(one_config("c5.large", efs))
    assert small.storage.mibps == 1500  # EFS elastic, one client
    assert small.expected_mibps == pytest.approx(10 * GBIT_MIBPS)  # 10 Gbps burst
    assert small.sustained_mibps == pytest.approx(0.75 * GBIT_MIBPS)  # 0.75 Gbps baseline
    assert (small.mibps_bound_by, small.sustained_mibps_bound_by) == ("network", "network")
    big = network(one_config("r5n.24xlarge", efs))
    assert (big.expected_mibps, big.sustained_mibps, big.mibps_bound_by) == (1500, 1500, "volume")
    assert network_checks(one_config("r5n.24xlarge", efs))[0].warning is None
    (check,) = network_checks(one_config("c5.large", efs))
    assert check.warning is not None and check.warning.startswith("c: client c5.large network 0.75 Gbps")


def test_efs_per_client_limit_scales_with_the_clients() -> None:
    efs = [{"id": "fs", "kind": "efs", "throughput_mode": "elastic"}]
    four = one_config("r5n.24xlarge", efs, clients=4)
    side = storage_side(four, four.targets[0])
    assert side is not None and side.mibps == 4 * 1500 and "4 x 1,500 MiB/s per client" in side.basis


def test_fsx_lustre_above_the_client_network_is_network_bound() -> None:
    fsx = [
        {
            "id": "fs",
            "kind": "fsx_lustre",
            "deployment_type": "PERSISTENT_2",
            "storage_capacity_gib": 24000,
            "per_unit_storage_throughput": 1000,
        }
    ]
    on_r5b = network(one_config("r5b.24xlarge", fsx))
    assert on_r5b.storage.mibps == pytest.approx(mb_to_mib(1000) * 24000 / 1024)  # ~22,352 MiB/s
    assert (on_r5b.expected_mibps, on_r5b.mibps_bound_by) == (pytest.approx(25 * GBIT_MIBPS), "network")
    on_r5n = network(one_config("r5n.24xlarge", fsx))
    assert (on_r5n.expected_mibps, on_r5n.mibps_bound_by) == (pytest.approx(100 * GBIT_MIBPS), "network")
    small = [{"id": "fs", "kind": "fsx_lustre", "deployment_type": "SCRATCH_2", "storage_capacity_gib": 1200}]
    assert network(one_config("r5n.24xlarge", small)).mibps_bound_by == "volume"


def virtual_san(client: str, controllers: int = 5) -> Config:
    document = json.loads((EVENTS / "virtual-san.json").read_text(encoding="utf-8"))
    config = next(c for c in document["configs"] if c["id"] == "r5b-io2-controllers")
    config["instance_type"] = client
    config["nodes"][0]["count"] = controllers
    return parse_request({**document, "configs": [config], "baseline": config["id"]}).configs[0]


def test_a_topology_delivers_per_node_min_of_its_storage_and_network_summed() -> None:
    envelope = network(virtual_san("r5b.24xlarge"))
    node = 25 * GBIT_MIBPS  # each r5b controller's 5 shared io2 volumes (EBS 7,153 MiB/s) capped by 25 Gbps
    assert envelope.storage.mibps == pytest.approx(5 * node)
    # the 5 controllers reach the same 5 Multi-Attach volumes: their IOPS count once (5 x 260,000 of
    # the controllers' EBS, capped by the volumes' 5 x 256,000)
    assert envelope.storage.iops == 5 * 256_000
    assert envelope.storage.basis == (
        "5 controller r5b.24xlarge: ebs 7,153 MiB/s, network 2,980 MiB/s each; "
        "shared Multi-Attach volumes 20,000 MiB/s, 1,280,000 IOPS in all"
    )
    assert (envelope.expected_mibps, envelope.mibps_bound_by) == (pytest.approx(node), "network")
    # a 100 Gbit client takes 3 controllers whole; 5 of them (125 Gbps) still cap at its 100 Gbps
    assert network(virtual_san("r5n.24xlarge", 3)).mibps_bound_by == "volume"
    assert network(virtual_san("r5n.24xlarge")).expected_mibps == pytest.approx(100 * GBIT_MIBPS)


def test_instance_store_nodes_without_catalog_rates_count_their_network() -> None:
    document = json.loads((EVENTS / "virtual-san.json").read_text(encoding="utf-8"))
    request = parse_request(document)
    i3en = request.config("i3en-controllers")
    side = storage_side(i3en, i3en.targets[0])
    assert side is not None and side.mibps == pytest.approx(8 * 100 * GBIT_MIBPS) and side.iops is None
    assert "rate not in the catalog: at most the node's network" in side.basis


def test_targets_not_reached_over_the_network_keep_their_own_envelope() -> None:
    ebs = one_config("c5.large", [{"kind": "ebs", "type": "gp3", "size_gib": 100}])
    assert storage_side(ebs, ebs.targets[0]) is None
    assert isinstance(target_ceiling(ebs, ebs.targets[0]), TargetEnvelope)
    assert network_checks(ebs) == []
    directory = one_config("c5.large", [{"id": "d", "kind": "local", "path": "/tmp/x"}])
    assert storage_side(directory, directory.targets[0]) is None and network_checks(directory) == []


def test_an_nfs_server_outside_the_catalog_is_capped_by_the_client_only_and_not_warned() -> None:
    nfs = one_config("c5.large", [{"id": "n", "kind": "nfs", "server": "10.0.0.5", "export": "/data"}])
    envelope = network(nfs)
    assert envelope.storage.mibps is None and envelope.mibps_bound_by == "network"
    assert network_checks(nfs)[0].warning is None


def test_nodes_that_declare_no_storage_serve_an_unknown_rate_not_zero() -> None:
    # Two controllers serving a file from their root volume (the local NBD stand-in): nothing is
    # known of their rate, so the ceiling is the client's network, not "storage 0 MiB/s".
    nodes = [{"role": "controller", "count": 2, "instance_type": "c5.large"}]
    config = one_config("c5.large", [{"id": "vsan", "kind": "local", "path": "/mnt/vsan"}], nodes=nodes)
    envelope = network(config)
    assert envelope.storage.mibps is None and envelope.mibps_bound_by != "volume"
    assert envelope.storage.basis.endswith("no node declares a storage target")
    assert "0 MiB/s" not in envelope.describe()

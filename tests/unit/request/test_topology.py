"""Configs with more than one machine: node groups, several clients, placement, their ports.

Each bad topology is refused at its field with the value and what is allowed; a good one keeps a
history of its own (its storage-option key) and its node hooks count as privileged shell.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest
from tests.support.requests import controllers

from storagebench.kinds import storage_option
from storagebench.request import RequestError, parse_request
from storagebench.request.privilege import privileged_content
from storagebench.request.purchase import effective_purchase
from storagebench.request.topology import PortRange, parse_port

CONTROLLER = controllers(3, ports=["tcp/4420"])

# A volume shared by every controller (EBS Multi-Attach), as the virtual SAN study's io2 was.
SHARED: dict[str, Any] = {
    "id": "shared",
    "kind": "ebs",
    "type": "io2",
    "size_gib": 500,
    "iops": 16000,
    "filesystem": "raw",
    "multi_attach": True,
}


def request_with(**config: Any) -> dict[str, Any]:
    return {
        "name": "topology",
        "region": "us-east-1",
        "configs": [
            {
                "id": "vsan",
                "instance_type": "c5.4xlarge",
                "targets": [{"id": "vsan", "kind": "local", "path": "/mnt/vsan"}],
                **config,
            }
        ],
        "workloads": [{"profile": "std-randread-4k"}],
    }


def problems(document: dict[str, Any]) -> dict[str, str]:
    with pytest.raises(RequestError) as caught:
        parse_request(document)
    return {e.path: str(e) for e in caught.value.errors}


def test_a_config_with_controllers_and_clients_validates() -> None:
    request = parse_request(request_with(nodes=[CONTROLLER], clients=2, placement="cluster"))
    config = request.configs[0]
    assert config.instance_count == 5
    assert config.nodes[0].targets[0].id == "data"


@pytest.mark.parametrize(
    ("config", "path", "fragments"),
    [
        pytest.param(
            {"nodes": [{**CONTROLLER, "role": "client"}]},
            "configs[0].nodes[0].role",
            ["client names the config's own instances", '(got "client")'],
            id="role-client",
        ),
        pytest.param(
            {"nodes": [CONTROLLER, {**CONTROLLER, "count": 1}]},
            "configs[0].nodes[1].role",
            ["already names nodes[0]", "unique"],
            id="duplicate-role",
        ),
        pytest.param(
            {"nodes": [{**CONTROLLER, "count": 17}]},
            "configs[0].nodes[0].count",
            ["<= 16", "(got 17)"],
            id="group-too-large",
        ),
        pytest.param(
            {"nodes": [{**CONTROLLER, "role": f"r{i}", "count": 16} for i in range(3)]},
            "configs[0].nodes",
            ["at most 32 nodes per config", "(got 48)"],
            id="too-many-nodes",
        ),
        pytest.param(
            {"nodes": [{**CONTROLLER, "instance_type": "r5b.huge"}]},
            "configs[0].nodes[0].instance_type",
            ["r5b.huge"],
            id="unknown-node-type",
        ),
        pytest.param(
            {"nodes": [{**CONTROLLER, "targets": [{"kind": "instance_store"}]}]},
            "configs[0].nodes[0].targets[0].kind",
            ["r5b.4xlarge has no instance store"],
            id="node-without-instance-store",
        ),
        pytest.param(
            {"nodes": [{**CONTROLLER, "targets": [{"kind": "efs"}]}]},
            "configs[0].nodes[0].targets[0].kind",
            ["must be one of ebs, instance_store", '(got "efs")'],
            id="node-with-a-file-system",
        ),
        pytest.param(
            {"nodes": [{**CONTROLLER, "ports": ["tcp/70000"]}]},
            "configs[0].nodes[0].ports[0]",
            ["1..65535", '(got "tcp/70000")'],
            id="port-out-of-range",
        ),
        pytest.param(
            {"nodes": [{**CONTROLLER, "ports": ["tcp/9422-9419"]}]},
            "configs[0].nodes[0].ports[0]",
            ["from its lower port to its higher"],
            id="port-range-backwards",
        ),
        pytest.param(
            {"nodes": [{**CONTROLLER, "ports": ["sctp/4420"]}]},
            "configs[0].nodes[0].ports[0]",
            ['(got "sctp/4420")'],
            id="port-protocol",
        ),
        pytest.param(
            {"nodes": [{**CONTROLLER, "targets": [{**SHARED, "type": "gp3", "iops": None}]}]},
            "configs[0].nodes[0].targets[0].type",
            ["Multi-Attach is offered on io1, io2 only", '(got "gp3")'],
            id="multi-attach-gp3",
        ),
        pytest.param(
            {"nodes": [{**CONTROLLER, "targets": [{**SHARED, "filesystem": "xfs"}]}]},
            "configs[0].nodes[0].targets[0].filesystem",
            ["EBS does no I/O fencing", "single-host file system", "use raw", '(got "xfs")'],
            id="multi-attach-xfs",
        ),
        pytest.param(
            {"nodes": [{**CONTROLLER, "instance_type": "r3.4xlarge", "targets": [SHARED]}]},
            "configs[0].nodes[0].instance_type",
            ["Multi-Attach, which EBS offers on Nitro instances only", '(got "r3.4xlarge")'],
            id="multi-attach-xen-node",
        ),
        pytest.param(
            {"targets": [{**SHARED, "kind": "ebs"}]},
            "configs[0].targets[0].multi_attach",
            ["shared by the nodes of a node group", "nodes[].targets", "(got true)"],
            id="multi-attach-on-the-client",
        ),
        pytest.param(
            {"clients": 17},
            "configs[0].clients",
            ["<= 16", "(got 17)"],
            id="too-many-clients",
        ),
        pytest.param(
            {"clients": 4, "targets": [{"kind": "ebs", "type": "gp3", "size_gib": 100}]},
            "configs[0].clients",
            [
                "4 clients drive one shared target",
                "targets[0] (ebs) belong(s) to one instance",
                "efs, fsx_lustre",
            ],
            id="clients-on-a-volume",
        ),
        pytest.param(
            {"placement": "cluster"},
            "configs[0].placement",
            ["add nodes or clients > 1", '(got "cluster")'],
            id="placement-of-one-instance",
        ),
        pytest.param(
            {"nodes": [CONTROLLER], "placement": "rack"},
            "configs[0].placement",
            ["cluster", "spread", "partition"],
            id="placement-unknown",
        ),
    ],
)
def test_a_bad_topology_is_refused_at_its_field(
    config: dict[str, Any], path: str, fragments: list[str]
) -> None:
    found = problems(request_with(**config))
    assert list(found) == [path], found
    for fragment in fragments:
        assert fragment in found[path], (fragment, found[path])


def test_a_node_group_reports_every_problem_in_one_pass() -> None:
    bad = {**CONTROLLER, "role": "client", "instance_type": "r5b.huge", "ports": ["tcp/0"]}
    found = problems(request_with(nodes=[bad]))
    assert set(found) == {
        "configs[0].nodes[0].role",
        "configs[0].nodes[0].instance_type",
        "configs[0].nodes[0].ports[0]",
    }


def test_ports_parse_to_ranges() -> None:
    assert parse_port("tcp/4420") == PortRange("tcp", 4420, 4420)
    assert str(parse_port("udp/9000-9010")) == "udp/9000-9010"
    with pytest.raises(ValueError, match="protocol/port"):
        parse_port("4420")


def test_the_storage_option_key_tells_topologies_apart() -> None:
    def key(**config: Any) -> str:
        request = parse_request(request_with(**config))
        return storage_option(request.configs[0], "vsan")

    alone = key()
    assert alone == "c5.4xlarge/local:/mnt/vsan"  # unchanged for one machine: stored histories keep their key
    three = key(nodes=[CONTROLLER])
    five = key(nodes=[{**CONTROLLER, "count": 5}])
    assert len({alone, three, five, key(nodes=[CONTROLLER], clients=4)}) == 4
    assert three == "c5.4xlarge/local:/mnt/vsan+controller=3xr5b.4xlarge[ebs:io2:500GiB:16000iops:xfs]"
    # the same topology written in another order is the same option
    other = {**CONTROLLER, "role": "witness", "count": 1}
    assert key(nodes=[CONTROLLER, other]) == key(nodes=[other, CONTROLLER])


def test_node_hooks_are_privileged() -> None:
    group = {**CONTROLLER, "setup": "modprobe nvmet", "teardown": "true"}
    request = parse_request(request_with(nodes=[group]))
    found = {p.path: p.what for p in privileged_content(request)}
    assert found == {
        "configs[0].nodes[0].setup": "a setup hook on the controller nodes (shell, as root)",
        "configs[0].nodes[0].teardown": "a teardown hook on the controller nodes (shell, as root)",
    }
    plain = copy.deepcopy(request_with(nodes=[CONTROLLER]))
    assert privileged_content(parse_request(plain)) == []


def test_a_clients_matrix_expands_into_one_config_per_count() -> None:
    document = request_with(
        targets=[{"id": "shared", "kind": "efs", "storage_gib_hint": 1024}], matrix={"clients": [1, 4, 8]}
    )
    request = parse_request(document)
    assert [(c.id, c.clients) for c in request.configs] == [
        ("vsan-1clients", 1),
        ("vsan-4clients", 4),
        ("vsan-8clients", 8),
    ]


def test_several_clients_run_fio_workloads_only() -> None:
    document = request_with(clients=2, targets=[{"id": "shared", "kind": "efs"}])
    document["workloads"] = [{"profile": "std-randread-4k"}, {"profile": "dd-seq-write-1m-dsync"}]
    found = problems(document)
    assert list(found) == ["configs[0].clients"]
    assert "2 clients run fio workloads only" in found["configs[0].clients"]
    assert "dd-seq-write-1m-dsync is a dd workload" in found["configs[0].clients"]
    document["workloads"] = [{"profile": "sla-randread-4k"}]
    assert "a latency-SLA search" in problems(document)["configs[0].clients"]
    document["workloads"] = [{"profile": "std-randread-4k"}, {"suite": "virtual-san"}]
    assert parse_request(document).configs[0].clients == 2


def test_several_machines_are_bought_on_demand() -> None:
    found = problems(request_with(nodes=[CONTROLLER], purchase="spot"))
    assert list(found) == ["configs[0].purchase"] and "bought on-demand" in found["configs[0].purchase"]
    document = request_with(nodes=[CONTROLLER])
    document["purchase"] = "spot"  # the request's (or the stack's) Spot does not reach it
    request = parse_request(document)
    assert effective_purchase(None, request.purchase, "spot", machines=request.configs[0].instance_count) == (
        "on-demand"
    )
    assert effective_purchase(None, "spot", "on-demand") == "spot"


def test_a_multi_attach_volume_validates_on_a_node_group_and_keys_its_own_history() -> None:
    shared = parse_request(request_with(nodes=[{**CONTROLLER, "targets": [SHARED]}], placement="cluster"))
    group = shared.configs[0].nodes[0]
    assert group.targets[0].multi_attach is True
    own = parse_request(
        request_with(
            nodes=[{**CONTROLLER, "targets": [{**SHARED, "multi_attach": False}]}], placement="cluster"
        )
    )
    assert storage_option(shared.configs[0], "vsan") != storage_option(own.configs[0], "vsan")
    assert "multi-attach" in storage_option(shared.configs[0], "vsan")


def test_a_node_group_larger_than_multi_attach_allows_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    """The group limit (16) is EBS's today; the rule reads the catalog's, so a smaller one binds."""
    from storagebench.catalog.loader import ebs_volume_type
    from storagebench.request import configs

    io2 = ebs_volume_type("io2")
    assert io2.multi_attach is not None and io2.multi_attach.max_instances == 16
    two = io2.multi_attach.model_copy(update={"max_instances": 2})
    smaller = io2.model_copy(update={"multi_attach": two})
    monkeypatch.setattr(configs, "ebs_volume_type", lambda name: smaller)
    found = problems(request_with(nodes=[{**CONTROLLER, "targets": [SHARED]}], placement="cluster"))
    assert list(found) == ["configs[0].nodes[0].count"], found
    assert "io2 allows at most 2 instances per volume" in found["configs[0].nodes[0].count"]
    assert "(got 3)" in found["configs[0].nodes[0].count"]

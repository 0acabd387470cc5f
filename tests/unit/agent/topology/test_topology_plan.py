"""The plan check names every bad field of ``topology`` and of a step's ``clients``."""

from __future__ import annotations

import copy
from typing import Any, Dict

import pytest

from storagebench.protocol.plan import PlanError, check_plan


def machines() -> list:  # type: ignore[type-arg]
    return [
        {"role": "client", "index": 0, "instance_id": "i-c0", "ip": "10.0.1.5", "devices": {}},
        {"role": "client", "index": 1, "instance_id": "i-c1", "ip": "10.0.1.6", "devices": {}},
        {
            "role": "server",
            "index": 0,
            "instance_id": "i-s0",
            "ip": "10.0.1.7",
            "devices": {"data": "/dev/nvme1n1"},
        },
    ]


def plan(role: str = "client", index: int = 0, **changes: Any) -> Dict[str, Any]:
    document: Dict[str, Any] = {
        "plan_version": 1,
        "run_id": "r1",
        "config_id": "c1",
        "targets": [{"id": "shared", "kind": "directory", "path": "/mnt/shared"}],
        "steps": [
            {
                "id": "s1",
                "target": "shared",
                "repetition": 1,
                "clients": ["10.0.1.5,8765", "10.0.1.6,8765"],
                "phases": [{"name": "p", "engine": "fio", "fio": {"jobs": [{"name": "j", "options": {}}]}}],
            }
        ],
        "topology": {
            "self": {"role": role, "index": index},
            "machines": machines(),
            "control_port": 8764,
            "fio_port": 8765,
            "ready_timeout_s": 1800,
        },
    }
    document.update(changes)
    return document


def problems(document: Dict[str, Any]) -> list:  # type: ignore[type-arg]
    with pytest.raises(PlanError) as caught:
        check_plan(document)
    return caught.value.problems


def test_a_primary_clients_plan_with_topology_and_clients_is_valid() -> None:
    assert check_plan(plan())["topology"]["self"] == {"role": "client", "index": 0}


def test_a_node_plan_needs_no_target_and_runs_no_step() -> None:
    server = plan("server", 0, targets=[], steps=[])
    assert check_plan(server)["steps"] == []
    del server["targets"]
    check_plan(server)
    assert problems(plan("server", 0)) == [
        "steps: a node (topology.self not client 0) runs no steps; the primary client runs them"
    ]


def test_a_plan_without_topology_still_needs_a_target() -> None:
    document = plan(targets=[], steps=[])
    del document["topology"]
    assert problems(document) == ["targets: at least one target is required"]


def test_every_bad_topology_field_is_named() -> None:
    document = plan()
    topology = document["topology"]
    topology["self"] = {"role": "Client!", "index": -1}
    topology["machines"][1]["ip"] = "10.0.1.5"  # the primary's
    topology["machines"][2]["ip"] = "not-an-ip"
    topology["machines"][2]["devices"] = {"data": 7}
    topology["control_port"] = 0
    topology["fio_port"] = 70000
    topology["ready_timeout_s"] = "soon"
    found = problems(document)
    assert (
        "topology.self.role: 'Client!' must be client or a node role (1-63 lowercase letters, digits, dashes)"
        in found
    )
    assert "topology.self.index: -1 must be an integer >= 0" in found
    assert "topology.machines[1].ip: '10.0.1.5' is also the address of client-0" in found
    assert (
        "topology.machines[2].ip: 'not-an-ip' must be an IPv4 address (the machine's private address)"
        in found
    )
    assert "topology.machines[2].devices: {'data': 7} must map target ids to device paths" in found
    assert "topology.control_port: 0 must be a port number 1..65535" in found
    assert "topology.fio_port: 70000 must be a port number 1..65535" in found
    assert "topology.ready_timeout_s: 'soon' must be an integer >= 1 (seconds)" in found
    assert "topology.self: Client!--1 is not one of topology.machines" in found


def test_self_must_be_a_machine_and_the_primary_must_exist() -> None:
    document = plan("server", 3, targets=[], steps=[])
    document["topology"]["machines"] = [m for m in machines() if m["role"] != "client" or m["index"] != 0]
    found = problems(document)
    assert "topology.self: server-3 is not one of topology.machines" in found
    assert "topology.machines: client 0 (the primary client) is missing" in found
    assert "topology.machines: the indexes of role 'client' are [1], expected 0..0" in found


def test_duplicate_machines_and_equal_ports_are_refused() -> None:
    document = plan()
    document["topology"]["machines"].append(copy.deepcopy(document["topology"]["machines"][2]))
    document["topology"]["machines"][3]["ip"] = "10.0.1.9"
    document["topology"]["fio_port"] = 8764
    found = problems(document)
    assert "topology.machines[3]: server-0 is listed twice" in found
    assert "topology.fio_port: must differ from control_port (both are served on each machine)" in found


def test_bad_clients_of_a_step_are_named() -> None:
    document = plan()
    document["steps"][0]["clients"] = ["10.0.1.5,8765", "10.0.1.5,8765", "host,99999", 7, ""]
    assert problems(document) == [
        "steps[0].clients[1]: '10.0.1.5,8765' is listed twice",
        "steps[0].clients[2]: 'host,99999' must be host or host,port (port 1..65535)",
        "steps[0].clients[3]: 7 must be host or host,port (port 1..65535)",
        "steps[0].clients[4]: '' must be host or host,port (port 1..65535)",
    ]
    document["steps"][0]["clients"] = []
    assert problems(document) == [
        "steps[0].clients: expected a non-empty list of fio connect strings (host or host,port)"
    ]


def test_a_latency_search_cannot_run_on_several_clients() -> None:
    document = plan()
    document["steps"][0]["phases"][0]["search"] = {
        "percentile": 99,
        "target_us": 1000,
        "low_iops": 100,
        "high_iops": 1000,
        "tolerance": 0.1,
        "max_probes": 4,
    }
    assert problems(document) == [
        "steps[0].phases[0].search: a latency search runs on one client, the step has clients"
    ]


def test_a_topology_that_is_not_an_object_is_named() -> None:
    assert problems(plan(topology=[1])) == ["topology: expected an object, got list"]


def test_every_client_of_a_multi_client_config_installs_fio_for_its_server() -> None:
    from storagebench.agent.packages import needs

    extra = plan("client", 1, steps=[])
    assert needs(extra) == ["fio"]  # no step of its own, but it serves fio --server
    server = plan("server", 0, targets=[], steps=[])
    assert needs(server) == []
    alone = plan("server", 0, targets=[], steps=[])
    alone["topology"]["machines"] = [m for m in machines() if (m["role"], m["index"]) != ("client", 1)]
    extra_free = plan(steps=[])
    extra_free["topology"]["machines"] = alone["topology"]["machines"]
    assert needs(extra_free) == []  # one client: fio runs locally, and only if a step uses it

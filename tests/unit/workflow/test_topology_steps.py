"""A config of several machines through Provision, CheckReady, StartAgent and Cleanup.

Every node and extra client is launched with its own client token into the config's security
group, awaited like the primary, started with its own plan before the primary, and released on
every path; the primary's plan carries the topology and drives fio on every client.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from tests.support import workflow_fakes as wf

from storagebench.core.errors import NotReadyError
from storagebench.core.state import ComputeStatus, ConfigState, NetworkRef, Resources
from storagebench.core.tags import TAG_NODE
from storagebench.workflow.steps.check_ready import check_ready
from storagebench.workflow.steps.cleanup import release
from storagebench.workflow.steps.provision import provision
from storagebench.workflow.steps.start_agent import start_agent

StateOf = Callable[..., ConfigState]

MULTI: dict[str, Any] = {
    "id": "multi",
    "instance_type": "c5.large",
    "clients": 2,
    "targets": [{"id": "shared", "kind": "local", "path": "/mnt/shared"}],
    "setup": "mount-the-share",
    "nodes": [
        {
            "role": "server",
            "instance_type": "c5.large",
            "ports": ["tcp/9000"],
            "setup": "serve",
            "teardown": "stop-serving",
            "targets": [
                {
                    "id": "data",
                    "kind": "ebs",
                    "type": "gp3",
                    "size_gib": 10,
                    "filesystem": "raw",
                    "prepare": False,
                }
            ],
        }
    ],
}


class AddressedCompute(wf.FakeCompute):  # type: ignore[misc,name-defined]
    """The fake compute, giving each instance an address and optionally a state."""

    def __init__(self) -> None:
        super().__init__()
        self.states: dict[str, str] = {}

    def status(self, resources: Resources) -> ComputeStatus:
        number = int(str(resources.instance_id).split("-")[1])
        return self.status_value.model_copy(
            update={
                "private_ip": f"10.0.0.{number}",
                "instance_state": self.states.get(str(resources.instance_id), "running"),
            }
        )


@pytest.fixture
def multi(fakes: Any, state_of: StateOf) -> tuple[Any, ConfigState, wf.FakeNetwork]:
    network = wf.FakeNetwork(group_id="sg-multi")
    compute = AddressedCompute()
    fakes.services.network = network
    fakes.services.compute = compute
    fakes.compute = compute
    document = wf.request_doc(configs=[MULTI])
    return fakes, state_of("multi", document), network


def test_provision_launches_every_machine_into_the_configs_network(multi: Any) -> None:
    fakes, state, network = multi
    provisioned = provision(state, fakes.services)
    (spec,) = network.opened
    assert [(r.protocol, r.from_port, r.to_port) for r in spec.ingress] == [
        ("tcp", 8764, 8764),  # the agents' control endpoints
        ("tcp", 8765, 8765),  # fio's server on every client
        ("tcp", 9000, 9000),  # what the server role declares
    ]
    launches = fakes.compute.launches
    assert len(launches) == 3 and len({s.client_token for s in launches}) == 3
    assert all(s.security_group_ids == ["sg-multi"] for s in launches)
    primary, server, client = launches
    assert [v.target_id for v in server.volumes] == ["data"] and not client.volumes and not primary.volumes
    assert (server.tags[TAG_NODE], client.tags[TAG_NODE]) == ("server-0", "client-1")
    assert all(s.market == "on-demand" for s in launches)
    assert [n.name for n in provisioned.resources.nodes] == ["server-0", "client-1"]
    # a retried Provision launches nothing new: the same tokens, the same instances
    again = provision(provisioned, fakes.services)
    assert [n.instance_id for n in again.resources.nodes] == [
        n.instance_id for n in provisioned.resources.nodes
    ]
    assert len(network.opened) == 1


def test_ready_waits_for_every_node_and_fails_on_one_gone(multi: Any) -> None:
    fakes, state, _ = multi
    provisioned = provision(state, fakes.services)
    ready = check_ready(provisioned, fakes.services)
    assert ready.ready is not None and ready.ready.state == "ready", ready.ready
    assert [n.private_ip for n in ready.resources.nodes] == ["10.0.0.2", "10.0.0.3"]
    fakes.compute.states[str(provisioned.resources.nodes[0].instance_id)] = "terminated"
    with pytest.raises(NotReadyError, match=r"server-0 .* is terminated"):
        check_ready(provisioned, fakes.services)


def test_the_nodes_start_before_the_primary_with_their_own_plans(multi: Any) -> None:
    fakes, state, _ = multi
    ready = check_ready(provision(state, fakes.services), fakes.services)
    started = start_agent(ready, "token", fakes.services)
    names = [name for name, *_ in fakes.agents.node_starts]
    assert names == ["server-0", "client-1"] and len(fakes.agents.starts) == 1
    server_plan = fakes.agents.node_starts[0][2]
    assert server_plan["steps"] == [] and server_plan["setup"] == "serve"
    assert [t["id"] for t in server_plan["targets"]] == ["data"]
    assert server_plan["topology"]["self"] == {"role": "server", "index": 0}
    client_plan = fakes.agents.node_starts[1][2]
    assert client_plan["setup"] == "mount-the-share" and client_plan["topology"]["self"]["index"] == 1
    primary = fakes.agents.starts[0].plan
    machines = primary["topology"]["machines"]
    assert [(m["role"], m["index"], m["ip"]) for m in machines] == [
        ("client", 0, "10.0.0.1"),
        ("server", 0, "10.0.0.2"),
        ("client", 1, "10.0.0.3"),
    ]
    assert all(step["clients"] == ["10.0.0.1,8765", "10.0.0.3,8765"] for step in primary["steps"])
    # each machine writes under its own prefix only
    prefixes = {prefix for *_, prefix in fakes.agents.node_starts}
    assert len(prefixes) == 2 and all("AROAFAKEROLE:i-" in p for p in prefixes)
    assert started.agent is not None


def test_cleanup_stops_every_machine_and_closes_the_network(multi: Any) -> None:
    fakes, state, network = multi
    provisioned = provision(state, fakes.services)
    report = release("run-1", "multi", provisioned.resources, fakes.services)
    stopped = [resources.instance_id for *_, resources in fakes.agents.stops]
    assert stopped == [
        provisioned.resources.instance_id,
        *(n.instance_id for n in provisioned.resources.nodes),
    ]
    assert network.closed == [NetworkRef(security_group_id="sg-multi")]
    assert "sg-multi" in report.deleted

"""A config's other machines: which they are, how each is launched, what each agent is told.

The primary client (index 0) is the config's instance as before; the others are its node groups'
nodes and its extra clients. Every machine runs the same SSM document with its own plan: the nodes
and extra clients a plan without steps (their hooks, a control endpoint, a fio server for extra
clients), the primary the config's plan with the topology (``protocol.topology``), so the servers'
hooks run before any client's and every workload starts on all clients at once.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from storagebench.core.state import NetworkSpec, NodeRef, PortRule, Resources
from storagebench.kinds import kind_of
from storagebench.protocol.plan import PLAN_VERSION, Plan, PowerOff
from storagebench.request.model import Config, NodeGroup
from storagebench.request.topology import CLIENT_ROLE, FIO_SERVER_PORT, parse_port

CONTROL_PORT = 8764
"""Each agent's control endpoint (status, finish) on a multi-machine config: the primary's barriers."""


@dataclass(frozen=True)
class Machine:
    """One machine of a config other than its primary client."""

    role: str
    index: int
    group: NodeGroup | None  # None: an extra client, launched as the config's own instance

    @property
    def name(self) -> str:
        return f"{self.role}-{self.index}"


def is_topology(config: Config) -> bool:
    """More than one machine: nodes, or several clients."""
    return config.instance_count > 1


def other_machines(config: Config) -> list[Machine]:
    """The node groups' nodes in request order, then the extra clients (index 1 and up)."""
    machines = [Machine(g.role, i, g) for g in config.nodes for i in range(g.count)]
    return machines + [Machine(CLIENT_ROLE, i, None) for i in range(1, config.clients)]


def needs_network(config: Config) -> bool:
    """Whether the config gets a security group of its own: several machines, or a file system."""
    return is_topology(config) or bool(file_system_ports(config))


def file_system_ports(config: Config) -> list[str]:
    """What the config's instances reach its file systems on (EFS's NFS, Lustre's ports)."""
    ports = [port for target in config.targets for port in kind_of(target).client_ports]
    return list(dict.fromkeys(ports))


def network_spec(config: Config, run_id: str, tags: dict[str, str]) -> NetworkSpec:
    """The config's security group: with several machines every port a role declares, the agents'
    control port and, with several clients, fio's server port; with file systems their ports (their
    mount targets join the group); each open to the config's own machines only."""
    ports: dict[tuple[str, int, int], None] = {}
    if is_topology(config):
        ports[("tcp", CONTROL_PORT, CONTROL_PORT)] = None
    if config.clients > 1:
        ports[("tcp", FIO_SERVER_PORT, FIO_SERVER_PORT)] = None
    declared = [text for group in config.nodes for text in group.ports] + file_system_ports(config)
    for text in declared:
        port = parse_port(text)
        ports[(port.protocol, port.from_port, port.to_port)] = None
    return NetworkSpec(
        run_id=run_id,
        config_id=config.id,
        tags=tags,
        ingress=[PortRule.model_validate({"protocol": p, "from_port": a, "to_port": b}) for p, a, b in ports],
        placement=config.placement,
    )


def machine_name(resources: Resources, instance_id: str | None) -> str:
    """``client-0`` for the primary, the node's name otherwise (for messages)."""
    if instance_id is not None and instance_id == resources.instance_id:
        return f"{CLIENT_ROLE}-0"
    for node in resources.nodes:
        if node.instance_id == instance_id:
            return node.name
    return str(instance_id)


def topology_document(resources: Resources, role: str, index: int, ready_timeout_s: int) -> dict[str, Any]:
    """The plan's ``topology``: who the agent is and every machine with its address."""
    everyone = [(CLIENT_ROLE, 0, resources.instance_id, resources.private_ip)]
    everyone += [(n.role, n.index, n.instance_id, n.private_ip) for n in resources.nodes]
    machines: list[dict[str, Any]] = [
        {"role": r, "index": i, "instance_id": instance, "ip": ip, "devices": {}}
        for r, i, instance, ip in everyone
    ]
    missing = [m for m in machines if not m["ip"] or not m["instance_id"]]
    if missing:
        named = ", ".join(f"{m['role']}-{m['index']}" for m in missing)
        raise ValueError(f"no private address for {named}: the topology is given once every machine is ready")
    return {
        "self": {"role": role, "index": index},
        "machines": machines,
        "control_port": CONTROL_PORT,
        "fio_port": FIO_SERVER_PORT,
        "ready_timeout_s": ready_timeout_s,
    }


def with_topology(plan: Plan, config: Config, resources: Resources, ready_timeout_s: int) -> Plan:
    """The primary client's plan: its topology, and every fio step driven on all clients at once."""
    updated: dict[str, Any] = dict(plan)
    updated["topology"] = topology_document(resources, CLIENT_ROLE, 0, ready_timeout_s)
    if config.clients > 1:
        clients = [resources.private_ip, *(n.private_ip for n in resources.nodes if n.role == CLIENT_ROLE)]
        connect = [f"{ip},{FIO_SERVER_PORT}" for ip in clients]
        updated["steps"] = [
            {**step, "clients": connect}
            if all(phase.get("engine") == "fio" and "search" not in phase for phase in step.get("phases", []))
            else step
            for step in plan.get("steps", [])
        ]
    return updated  # type: ignore[return-value]


def removal_of(plan: Plan, role: str, index: int) -> PowerOff | None:
    """Where the primary's plan removes this node (a phase's ``node_loss``): the step, and how long
    after the primary's word, just before that phase's fio starts (its ramp plus ``at_s``); None
    when it is never removed."""
    for step in plan.get("steps", []):
        for phase in step.get("phases", []):
            loss = phase.get("node_loss")
            if loss is not None and (loss["role"], loss["index"]) == (role, index):
                after_s = float(loss.get("ramp_s", 0.0)) + float(loss["at_s"])
                return {"step": step["id"], "after_s": round(after_s, 3)}
    return None


def node_plan(
    config: Config,
    node: NodeRef,
    resources: Resources,
    run_id: str,
    region: str,
    ready_timeout_s: int,
    removal: PowerOff | None = None,
) -> Plan:
    """A node's or an extra client's plan: its own targets and hooks, no steps, the topology, and
    its removal when a step removes it (``power_off``: the node powers itself off then).

    A node's targets are its own volumes (bound to the ones it was launched with); an extra client
    mounts the config's shared targets like the primary does."""
    group = next((g for g in config.nodes if g.role == node.role), None)
    if group is not None:
        targets = [kind_of(t).agent_spec(t, node.view(), region) for t in group.targets]
        setup, teardown = group.setup, group.teardown
    else:
        targets = [kind_of(t).agent_spec(t, resources, region) for t in config.targets]
        setup, teardown = config.setup, config.teardown
    plan: dict[str, Any] = {
        "plan_version": PLAN_VERSION,
        "run_id": run_id,
        "config_id": config.id,
        "targets": targets,
        "prewarm": {"method": "none", "targets": []},
        "steps": [],
        "setup": setup,
        "teardown": teardown,
        "fail_fast": True,
        "topology": topology_document(resources, node.role, node.index, ready_timeout_s),
    }
    if removal is not None:
        plan["power_off"] = removal
    return plan  # type: ignore[return-value]

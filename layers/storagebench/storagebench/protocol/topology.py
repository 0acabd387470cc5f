"""The machines of a multi-machine config as the plan's ``topology`` gives them to every agent.

Every machine of such a config (storage servers, controllers, the clients) runs the same agent
with its own plan; ``topology`` says who this agent is (``self``) and where everyone else is
(``machines``). Client 0 is the primary: it runs the workloads and tells the others when to
finish; every other machine is a node (``agent.node``). A plan without ``topology`` is a single
machine's, as before.
"""

from __future__ import annotations

import ipaddress
import json
import os
import re
from typing import Any, Dict, List, Optional, TypedDict

CLIENT_ROLE = "client"
DEFAULT_CONTROL_PORT = 8764
DEFAULT_FIO_PORT = 8765
DEFAULT_READY_TIMEOUT_S = 1800
_ROLE = re.compile(r"^[a-z0-9][a-z0-9-]{0,62}$")  # the request's slug: lowercase, digits, dashes


class MachineSelf(TypedDict):
    role: str
    index: int


class Machine(TypedDict, total=False):
    role: str
    index: int
    instance_id: str
    ip: str
    devices: Dict[str, str]  # target id -> /dev/...[:/dev/...], what the workflow knows (may be {})


class Topology(TypedDict, total=False):
    self: MachineSelf
    machines: List[Machine]
    control_port: int
    fio_port: int
    ready_timeout_s: int


class TopologyError(RuntimeError):
    """Another machine of the config is not where the run needs it; the message names it."""


class NodeFailedError(TopologyError):
    """A machine answered that its setup failed."""


class NodeLostError(TopologyError):
    """A machine stopped answering, or answered with a state it must not be in."""


class BarrierTimeoutError(TopologyError):
    """Machines were not ready within ``ready_timeout_s``."""


def machine_name(machine: Machine) -> str:
    """``server-0 (i-0abc, 10.0.1.5)``: how errors and logs name a machine."""
    where = ", ".join(v for v in (machine.get("instance_id"), machine.get("ip")) if v)
    return f"{machine.get('role')}-{machine.get('index')}" + (f" ({where})" if where else "")


def is_primary(topology: Topology) -> bool:
    me = topology["self"]
    return me["role"] == CLIENT_ROLE and me["index"] == 0


def node_label(topology: Optional[Topology]) -> Optional[str]:
    """``server-0`` for a node (what its machine-wide names add), None for the primary or a solo plan."""
    if topology is None or is_primary(topology):
        return None
    return f"{topology['self']['role']}-{topology['self']['index']}"


def own_machine(topology: Topology) -> Machine:
    me = topology["self"]
    for machine in topology["machines"]:
        if machine["role"] == me["role"] and machine["index"] == me["index"]:
            return machine
    raise TopologyError(f"topology.self {me['role']}-{me['index']} is not one of topology.machines")


def others(topology: Topology) -> List[Machine]:
    me = topology["self"]
    return [m for m in topology["machines"] if (m["role"], m["index"]) != (me["role"], me["index"])]


def servers(topology: Topology) -> List[Machine]:
    """Every machine that is not a client: their hooks run before any client's."""
    return [m for m in topology["machines"] if m["role"] != CLIENT_ROLE]


def extra_clients(topology: Topology) -> List[Machine]:
    return [m for m in topology["machines"] if m["role"] == CLIENT_ROLE and m["index"] > 0]


def control_port(topology: Topology) -> int:
    return int(topology.get("control_port", DEFAULT_CONTROL_PORT))


def fio_port(topology: Topology) -> int:
    return int(topology.get("fio_port", DEFAULT_FIO_PORT))


def ready_timeout_s(topology: Topology) -> float:
    return float(topology.get("ready_timeout_s", DEFAULT_READY_TIMEOUT_S))


def role_variable(role: str) -> str:
    """``SB_NODES_<ROLE>_IPS``: the role upper-cased, ``-`` as ``_``."""
    return "SB_NODES_" + role.upper().replace("-", "_") + "_IPS"


def topology_environment(topology: Topology, path: str) -> Dict[str, str]:
    """What every hook of every machine gets: who it is, and every role's addresses in index order."""
    me = own_machine(topology)
    env = {
        "SB_TOPOLOGY": path,
        "SB_NODE_ROLE": me["role"],
        "SB_NODE_INDEX": str(me["index"]),
        "SB_NODE_IP": me["ip"],
    }
    roles: Dict[str, List[Machine]] = {CLIENT_ROLE: []}
    for machine in topology["machines"]:
        roles.setdefault(machine["role"], []).append(machine)
    for role, machines in roles.items():
        env[role_variable(role)] = " ".join(m["ip"] for m in sorted(machines, key=lambda m: m["index"]))
    return env


def write_topology(topology: Topology, directory: str) -> str:
    """The topology as a JSON file for the hooks (``SB_TOPOLOGY``); returns its path."""
    os.makedirs(directory, exist_ok=True)
    path = os.path.join(directory, "topology.json")
    with open(path, "w", encoding="utf-8") as handle:
        json.dump(topology, handle, indent=2, sort_keys=True)
    return path


# ---------------------------------------------------------------------- the plan check


def _check_port(problems: List[str], path: str, value: Any) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= 65535:
        problems.append(f"{path}: {value!r} must be a port number 1..65535")


def _is_index(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _check_role_index(problems: List[str], path: str, entry: Dict[str, Any]) -> None:
    role, index = entry.get("role"), entry.get("index")
    if not isinstance(role, str) or not _ROLE.match(role):
        problems.append(
            f"{path}.role: {role!r} must be client or a node role (1-63 lowercase letters, digits, dashes)"
        )
    if not _is_index(index):
        problems.append(f"{path}.index: {index!r} must be an integer >= 0")


def _check_machine(problems: List[str], path: str, machine: Any) -> None:
    if not isinstance(machine, dict):
        problems.append(f"{path}: expected an object, got {type(machine).__name__}")
        return
    _check_role_index(problems, path, machine)
    ip = machine.get("ip")
    try:
        ipaddress.IPv4Address(ip)
    except (ValueError, TypeError):
        problems.append(f"{path}.ip: {ip!r} must be an IPv4 address (the machine's private address)")
    instance_id = machine.get("instance_id", "")
    if not isinstance(instance_id, str):
        problems.append(f"{path}.instance_id: {instance_id!r} must be text")
    devices = machine.get("devices", {})
    if not isinstance(devices, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in devices.items()
    ):
        problems.append(f"{path}.devices: {devices!r} must map target ids to device paths")


def check_topology(problems: List[str], topology: Any) -> None:
    """Append a problem for every bad field of a plan's ``topology`` (named ``topology.<field>``)."""
    if not isinstance(topology, dict):
        problems.append(f"topology: expected an object, got {type(topology).__name__}")
        return
    me = topology.get("self")
    if not isinstance(me, dict):
        problems.append(f"topology.self: expected {{role, index}}, got {me!r}")
        me = {}
    else:
        _check_role_index(problems, "topology.self", me)
    machines = topology.get("machines")
    if not isinstance(machines, list) or not machines:
        problems.append("topology.machines: at least one machine (every machine of the config) is required")
        machines = []
    seen_ips: Dict[Any, str] = {}
    seen_ids = set()
    for i, machine in enumerate(machines):
        path = f"topology.machines[{i}]"
        _check_machine(problems, path, machine)
        if not isinstance(machine, dict):
            continue
        key = (machine.get("role"), machine.get("index"))
        if key in seen_ids:
            problems.append(f"{path}: {key[0]}-{key[1]} is listed twice")
        seen_ids.add(key)
        ip = machine.get("ip")
        if ip in seen_ips:
            problems.append(f"{path}.ip: {ip!r} is also the address of {seen_ips[ip]}")
        seen_ips.setdefault(ip, f"{key[0]}-{key[1]}")
    for role in {m.get("role") for m in machines if isinstance(m, dict)}:
        indexes: List[int] = sorted(
            m["index"]
            for m in machines
            if isinstance(m, dict) and m.get("role") == role and _is_index(m.get("index"))
        )
        if indexes and indexes != list(range(len(indexes))):
            problems.append(
                f"topology.machines: the indexes of role {role!r} are {indexes}, "
                f"expected 0..{len(indexes) - 1}"
            )
    if machines and (CLIENT_ROLE, 0) not in seen_ids:
        problems.append("topology.machines: client 0 (the primary client) is missing")
    if me and (me.get("role"), me.get("index")) not in seen_ids:
        problems.append(f"topology.self: {me.get('role')}-{me.get('index')} is not one of topology.machines")
    for port_key in ("control_port", "fio_port"):
        if port_key in topology:
            _check_port(problems, f"topology.{port_key}", topology[port_key])
    if topology.get("control_port", DEFAULT_CONTROL_PORT) == topology.get("fio_port", DEFAULT_FIO_PORT):
        problems.append("topology.fio_port: must differ from control_port (both are served on each machine)")
    if "ready_timeout_s" in topology:
        value = topology["ready_timeout_s"]
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            problems.append(f"topology.ready_timeout_s: {value!r} must be an integer >= 1 (seconds)")


_HOST = re.compile(r"^[A-Za-z0-9]([A-Za-z0-9.-]{0,252})$")


def check_clients(problems: List[str], path: str, clients: Any) -> None:
    """A step's ``clients``: fio ``--client`` connect strings, ``host`` or ``host,port``, no repeats."""
    if not isinstance(clients, list) or not clients:
        problems.append(f"{path}: expected a non-empty list of fio connect strings (host or host,port)")
        return
    for i, client in enumerate(clients):
        host, _, port = client.partition(",") if isinstance(client, str) else ("", "", "")
        good_port = not port or (port.isdigit() and 1 <= int(port) <= 65535)
        if not isinstance(client, str) or not _HOST.match(host) or not good_port:
            problems.append(f"{path}[{i}]: {client!r} must be host or host,port (port 1..65535)")
        elif clients.index(client) != i:
            problems.append(f"{path}[{i}]: {client!r} is listed twice")

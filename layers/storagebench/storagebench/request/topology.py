"""The vocabulary of configs with more than one machine: node roles, ports, placement, clients.

A config is one client instance unless it says otherwise. ``nodes`` adds groups of servers
(virtual-SAN controllers, a MooseFS master and its chunk servers) launched, priced and released
with it; ``clients`` runs its workloads on that many identical clients at once against the same
shared target. The request model (``request.model.NodeGroup``) holds the fields; this module the
rules and names they share with the workflow, the bill and the network.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from storagebench.workloads import get_profile


class _Workload(Protocol):
    id: str
    profile: str


class _Config(Protocol):
    clients: int


class _Request(Protocol):
    """What the multi-client rule reads of a request (``request.model`` imports this module)."""

    @property
    def configs(self) -> Sequence[_Config]: ...

    def resolved_workloads(self) -> Sequence[_Workload]: ...


CLIENT_ROLE = "client"
"""The role of the config's own instances; a node group cannot take it."""
MAX_CLIENTS = 16
MAX_NODE_GROUPS = 8
MAX_NODES = 32  # every group of a config together
MAX_NODES_PER_GROUP = 16
FIO_SERVER_PORT = 8765
"""fio's client/server port: the clients of a multi-client config admit each other on it (the
first client drives the others with ``fio --client``, which starts each workload on all at once)."""

Placement = Literal["cluster", "spread", "partition"]
PLACEMENT_DESCRIPTION = (
    "an EC2 placement group for the config's instances: cluster (one rack's low-latency network, "
    "the virtual SAN's case), spread (distinct hardware) or partition; needs nodes or clients > 1"
)

PORT_PATTERN = r"^(tcp|udp)/[0-9]{1,5}(-[0-9]{1,5})?$"
PORTS_DESCRIPTION = (
    'what this role serves to the config\'s other instances, e.g. "tcp/4420" (NVMe/TCP) or '
    '"tcp/9419-9422" (a MooseFS master): the config\'s security group admits these from its own '
    "instances and nothing else reaches them"
)
_PORT = re.compile(PORT_PATTERN)


@dataclass(frozen=True)
class PortRange:
    """One ``protocol/from[-to]`` a role declares, parsed."""

    protocol: Literal["tcp", "udp"]
    from_port: int
    to_port: int

    def __str__(self) -> str:
        span = str(self.from_port) if self.from_port == self.to_port else f"{self.from_port}-{self.to_port}"
        return f"{self.protocol}/{span}"


def parse_port(text: str) -> PortRange:
    """``tcp/4420`` or ``udp/9000-9010``; ValueError saying what is allowed otherwise."""
    if not _PORT.match(text):
        raise ValueError("a port is protocol/port or protocol/from-to, e.g. tcp/4420 or tcp/9419-9422")
    protocol, span = text.split("/", 1)
    low, _, high = span.partition("-")
    first, last = int(low), int(high or low)
    if not 1 <= first <= last <= 65535:
        raise ValueError("ports are 1..65535 and a range runs from its lower port to its higher")
    return PortRange("tcp" if protocol == "tcp" else "udp", first, last)


SHARED_KINDS = ("efs", "fsx_lustre", "nfs", "file_gateway", "local")
"""Targets several clients can drive at once: file systems and paths every client mounts (a
virtual-SAN volume the setup hook connects). EBS volumes and instance store belong to one instance."""


def multi_client_problems(request: _Request) -> Iterator[tuple[tuple[str | int, ...], Any, str]]:
    """(location, value, message) of each workload a multi-client config cannot run: several clients
    start a workload together through fio's client/server mode, so only fio jobs (not dd, a command,
    nor a latency-SLA search, whose rate steps one fio at a time) run on them."""
    many = [(position, config) for position, config in enumerate(request.configs) if config.clients > 1]
    if not many:
        return
    for position, config in many:
        for workload in request.resolved_workloads():
            try:
                profile = get_profile(workload.profile)
            except KeyError:
                continue  # reported at workloads[].profile
            if profile.engine != "fio" or profile.intent == "sla":
                what = "a latency-SLA search" if profile.intent == "sla" else f"a {profile.engine} workload"
                yield (
                    ("configs", position, "clients"),
                    config.clients,
                    f"{config.clients} clients run fio workloads only (fio's client/server mode starts "
                    f"each on all clients together); {workload.id} is {what}: run it from one client "
                    "in another config",
                )
                break

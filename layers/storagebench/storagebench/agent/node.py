"""What this machine does in its config's topology, at the points where the runner asks.

* ``Solo``: a plan without ``topology``, today's single machine: nothing to coordinate.
* ``Primary`` (client 0): waits for the servers before its setup and for the extra clients after
  it, serves ``fio --server`` itself when there are extra clients, checks every other machine
  between steps, and tells the extra clients then the servers to finish after its own teardown.
* ``Node`` (a server, or an extra client): serves its state on the control endpoint, prepares
  its targets and runs its hooks, then holds until the primary says finish (an extra client
  first waits for the servers, and serves ``fio --server`` while it holds).

Every hook of every machine gets the topology environment (``protocol.topology``).
"""

from __future__ import annotations

from typing import Callable, Dict, List, Optional

from storagebench.agent import barrier
from storagebench.agent.control import FAILED, FINISHED, READY, ControlEndpoint
from storagebench.agent.fio_server import FioServer
from storagebench.agent.proc import CommandError
from storagebench.protocol.plan import Plan
from storagebench.protocol.topology import (
    CLIENT_ROLE,
    NodeLostError,
    Topology,
    control_port,
    extra_clients,
    fio_port,
    is_primary,
    machine_name,
    others,
    own_machine,
    ready_timeout_s,
    servers,
    topology_environment,
    write_topology,
)

FINISHED_LINGER_S = 10.0  # a finished node answers that long for the primary to see it, then exits
HOLD_POLL_S = 0.5


class Solo:
    """A single machine: every point is a no-op."""

    def __init__(self) -> None:
        self.hook_env: Dict[str, str] = {}

    def start(self) -> None:
        """Before anything: a node's endpoint comes up."""

    def before_setup(self) -> None:
        """Before the setup hook: wait for the machines whose hooks run first."""

    def ready(self, procs_file: Optional[str]) -> None:
        """Targets prepared, hooks run, pre-warmed."""

    def between_steps(self, after: str) -> None:
        """Before each step but the first (``after``: the step before it)."""

    def failed(self, message: str, interrupted: bool) -> None:
        """The run failed or was stopped (before teardown)."""

    def before_teardown(self) -> None:
        """On every path, before the teardown hook."""

    def after_teardown(self) -> List[str]:
        """On every path, after the teardown hook; returns problems to record (not failures)."""
        return []


class _Member(Solo):
    """What the primary and the nodes share: the topology file and environment, a fio server."""

    def __init__(self, topology: Topology, output_dir: str, say: Callable[[str], None]) -> None:
        super().__init__()
        self.topology = topology
        self.me = own_machine(topology)
        self.say = say
        self.hook_env = topology_environment(topology, write_topology(topology, output_dir))
        self.output_dir = output_dir
        self.fio_server: Optional[FioServer] = None

    def _start_fio_server(self, procs_file: Optional[str], on_exit: Callable[[str], None]) -> None:
        self.fio_server = FioServer(
            self.me["ip"], fio_port(self.topology), self.output_dir, procs_file, on_exit
        )
        self.fio_server.wait_listening()
        self.say(f"fio --server listening on {self.me['ip']},{fio_port(self.topology)}")

    def _stop_fio_server(self) -> None:
        if self.fio_server is not None:
            self.fio_server.stop()
            self.fio_server = None


class Primary(_Member):
    def __init__(self, topology: Topology, output_dir: str, say: Callable[[str], None]) -> None:
        super().__init__(topology, output_dir, say)
        self.port = control_port(topology)
        self.fio_lost: Optional[str] = None

    def before_setup(self) -> None:
        barrier.wait_ready(servers(self.topology), self.port, ready_timeout_s(self.topology), self.say)

    def ready(self, procs_file: Optional[str]) -> None:
        clients = extra_clients(self.topology)
        barrier.wait_ready(clients, self.port, ready_timeout_s(self.topology), self.say)
        if clients:
            self._start_fio_server(procs_file, self._fio_exited)

    def _fio_exited(self, message: str) -> None:
        self.fio_lost = message
        self.say(message)

    def between_steps(self, after: str) -> None:
        if self.fio_lost is not None:
            raise NodeLostError(f"{machine_name(self.me)}: {self.fio_lost} {after}")
        barrier.check_alive(others(self.topology), self.port, after)

    def before_teardown(self) -> None:
        self._stop_fio_server()

    def after_teardown(self) -> List[str]:
        """Clients' teardown before the servers': they unmount what the servers serve."""
        problems = barrier.finish(extra_clients(self.topology), self.port, self.say)
        return problems + barrier.finish(servers(self.topology), self.port, self.say)


class Node(_Member):
    def __init__(self, topology: Topology, output_dir: str, say: Callable[[str], None]) -> None:
        super().__init__(topology, output_dir, say)
        self.port = control_port(topology)
        self.endpoint: Optional[ControlEndpoint] = None
        self.extra_client = self.me["role"] == CLIENT_ROLE
        self.interrupted = False
        self.fio_lost: Optional[str] = None

    def start(self) -> None:
        if self.endpoint is None:
            self.endpoint = ControlEndpoint(self.me["role"], self.me["index"], self.me["ip"], self.port)
            self.say(f"{machine_name(self.me)}: control endpoint on {self.endpoint.address} (setting-up)")

    def before_setup(self) -> None:
        if self.extra_client:
            barrier.wait_ready(servers(self.topology), self.port, ready_timeout_s(self.topology), self.say)

    def ready(self, procs_file: Optional[str]) -> None:
        if self.extra_client:
            self._start_fio_server(procs_file, self._fio_exited)
        assert self.endpoint is not None
        self.endpoint.set_state(READY)
        self.say(f"{machine_name(self.me)} is ready; holding until the primary client says finish")
        self._hold()
        if self.fio_lost is not None:  # the endpoint said so meanwhile; the manifest says it too
            raise CommandError(self.fio_lost)

    def _fio_exited(self, message: str) -> None:
        self.say(message)
        self.fio_lost = message
        if self.endpoint is not None and not self.endpoint.finish_requested.is_set():
            self.endpoint.set_state(FAILED, message)

    def _hold(self) -> None:
        """Until ``POST /finish``; a signal (the command's deadline, a cancel) ends it in the runner."""
        assert self.endpoint is not None
        while not self.endpoint.finish_requested.wait(HOLD_POLL_S):
            pass
        self.say("the primary client said finish")

    def failed(self, message: str, interrupted: bool) -> None:
        self.interrupted = interrupted
        if self.endpoint is not None:
            self.endpoint.set_state(FAILED, message)

    def before_teardown(self) -> None:
        """A failed node keeps saying so until told to finish (the primary reads why), unless stopped."""
        if self.endpoint is not None and self.endpoint.status()["state"] == FAILED and not self.interrupted:
            self._hold()
        self._stop_fio_server()

    def after_teardown(self) -> List[str]:
        if self.endpoint is None:
            return []
        self.endpoint.set_state(FINISHED)
        if self.endpoint.finish_requested.is_set():  # someone waits to read "finished"
            self.endpoint.finished_seen.wait(FINISHED_LINGER_S)
        self.endpoint.close()
        return []


def role_for(plan: Plan, output_dir: str, say: Callable[[str], None]) -> Solo:
    """The role of this machine in the plan's topology (Solo without one)."""
    topology = plan.get("topology")
    if topology is None:
        return Solo()
    if is_primary(topology):
        return Primary(topology, output_dir, say)
    return Node(topology, output_dir, say)


def in_node_mode(plan: Plan) -> bool:
    """A machine that never reports to the workflow: a server, or a client other than client 0."""
    topology = plan.get("topology")
    return topology is not None and not is_primary(topology)

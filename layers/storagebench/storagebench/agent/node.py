"""What this machine does in its config's topology, at the points where the runner asks.

* ``Solo``: a plan without ``topology``, today's single machine: nothing to coordinate.
* ``Primary`` (client 0): waits for the servers before its setup and for the extra clients after
  it, serves ``fio --server`` itself when there are extra clients, checks every other machine
  between steps, and tells the extra clients then the servers to finish after its own teardown.
* ``Node`` (a server, or an extra client): serves its state on the control endpoint, prepares
  its targets and runs its hooks, then holds until the primary says finish (an extra client
  first waits for the servers, and serves ``fio --server`` while it holds).

A node whose plan has ``power_off`` (``workloads[].node_loss``) removes itself: the primary tells
it when the measured fio phase of that step starts (``POST /node-loss``, just before fio), the
node waits the plan's ``after_s`` and powers its machine off (``agent.power``). The primary then
skips the later steps (``runner``) and does not tell the removed node to finish.

Every hook of every machine gets the topology environment (``protocol.topology``).
"""

from __future__ import annotations

import time
from typing import Callable, Dict, List, Optional

from storagebench.agent import barrier
from storagebench.agent.control import FAILED, FINISHED, READY, ControlEndpoint
from storagebench.agent.fio_server import FioServer
from storagebench.agent.power import power_off
from storagebench.agent.proc import CommandError
from storagebench.protocol.manifest import PhaseResult
from storagebench.protocol.plan import Phase, Plan, PowerOff
from storagebench.protocol.topology import (
    CLIENT_ROLE,
    Machine,
    NodeLostError,
    Topology,
    TopologyError,
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
GONE_CHECK_S = 3.0  # a removed node must not answer its control endpoint within this


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

    def phase_starts(self, step: str, phase: Phase) -> Optional[float]:
        """Just before a phase runs: a phase that removes a node tells that node now, and returns
        when the node took the word (epoch ms: its removal counts from then); None otherwise."""
        if "node_loss" in phase:
            raise TopologyError(
                f"step {step} removes {phase['node_loss']['role']}-{phase['node_loss']['index']}, "
                "but this plan has no topology: a single machine has no node to lose"
            )
        return None

    def phase_ended(self, step: str, phase: Phase, outcome: PhaseResult) -> None:
        """After a phase ran (its result may be amended)."""

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
        self.removed: List[Machine] = []  # nodes removed on purpose (node_loss): gone, not lost

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
        barrier.check_alive(self._present(others(self.topology)), self.port, after)

    def phase_starts(self, step: str, phase: Phase) -> Optional[float]:
        loss = phase.get("node_loss")
        if loss is None:
            return None
        named = [m for m in others(self.topology) if (m["role"], m["index"]) == (loss["role"], loss["index"])]
        if not named:
            raise TopologyError(
                f"step {step} removes {loss['role']}-{loss['index']}, which is not a machine of the topology"
            )
        barrier.start_node_loss(named[0], self.port, step)
        told_at_ms = time.time() * 1000.0
        self.removed.append(named[0])
        self.say(f"{machine_name(named[0])} powers off {loss['at_s']:g} s into step {step}'s measured run")
        return told_at_ms

    def phase_ended(self, step: str, phase: Phase, outcome: PhaseResult) -> None:
        """The removed node must be gone: one that still answers was not removed, and a measurement
        around a removal that did not happen is no measurement (the phase says why instead)."""
        loss = phase.get("node_loss")
        gone = [m for m in self.removed if loss and (m["role"], m["index"]) == (loss["role"], loss["index"])]
        if not gone:
            return
        try:
            answer = barrier.status(gone[0], self.port, GONE_CHECK_S)
        except barrier.UnreachableError:
            return  # powered off, as planned
        said = f" ({answer['error']})" if answer.get("error") else ""
        self.removed.remove(gone[0])  # still there: told to finish with the others
        outcome.pop("node_loss", None)
        outcome["node_loss_error"] = (
            f"{machine_name(gone[0])} still answered {answer['state']}{said} after step {step}'s "
            "measured run: it was not removed, so there is no pause or recovery to report"
        )
        self.say(outcome["node_loss_error"])

    def _present(self, machines: List[Machine]) -> List[Machine]:
        return [m for m in machines if m not in self.removed]

    def before_teardown(self) -> None:
        self._stop_fio_server()

    def after_teardown(self) -> List[str]:
        """Clients' teardown before the servers': they unmount what the servers serve. A node
        removed on purpose is gone: it is not told (the workflow's cleanup terminates it)."""
        for machine in self.removed:
            self.say(f"{machine_name(machine)} was removed by its node_loss step: not told to finish")
        problems = barrier.finish(self._present(extra_clients(self.topology)), self.port, self.say)
        return problems + barrier.finish(self._present(servers(self.topology)), self.port, self.say)


class Node(_Member):
    def __init__(
        self,
        topology: Topology,
        output_dir: str,
        say: Callable[[str], None],
        removal: Optional[PowerOff] = None,
        machine_off: Callable[[], None] = power_off,
    ) -> None:
        super().__init__(topology, output_dir, say)
        self.port = control_port(topology)
        self.endpoint: Optional[ControlEndpoint] = None
        self.extra_client = self.me["role"] == CLIENT_ROLE
        self.interrupted = False
        self.fio_lost: Optional[str] = None
        self.removal = removal  # plan.power_off: this node removes itself in that step
        self.machine_off = machine_off  # the machine-level action (agent.power)

    def start(self) -> None:
        if self.endpoint is None:
            loss_step = self.removal["step"] if self.removal is not None else None
            self.endpoint = ControlEndpoint(
                self.me["role"], self.me["index"], self.me["ip"], self.port, loss_step
            )
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
        """Until ``POST /finish``; a signal (the command's deadline, a cancel) ends it in the runner.
        A planned removal happens meanwhile, once its step's measured phase has started."""
        assert self.endpoint is not None
        while not self.endpoint.finish_requested.wait(HOLD_POLL_S):
            if self.endpoint.loss_started.is_set() and self.removal is not None:
                removal, self.removal = self.removal, None  # once, even when it fails
                self._remove(removal)
        self.say("the primary client said finish")

    def _remove(self, removal: PowerOff) -> None:
        """``after_s`` after the primary said the phase starts, power the machine off; a finish
        before then (the step ended early) cancels it."""
        assert self.endpoint is not None and self.endpoint.loss_started_at is not None
        at = self.endpoint.loss_started_at + float(removal["after_s"])
        if self.endpoint.finish_requested.wait(max(0.0, at - time.monotonic())):
            self.say(f"step {removal['step']} ended before the planned removal: not powering off")
            return
        self.say(
            f"{machine_name(self.me)}: powering off {removal['after_s']:g} s into step {removal['step']} "
            "(node_loss)"
        )
        try:
            self.machine_off()
        except CommandError as exc:  # the machine stays: the primary reads why and records no loss
            self.endpoint.set_state(FAILED, f"could not power off for step {removal['step']}: {exc}")
            raise

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
    return Node(topology, output_dir, say, plan.get("power_off"))


def in_node_mode(plan: Plan) -> bool:
    """A machine that never reports to the workflow: a server, or a client other than client 0."""
    topology = plan.get("topology")
    return topology is not None and not is_primary(topology)

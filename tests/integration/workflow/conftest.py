"""The benchmark workflow end to end on this machine: the real ASL on moto's interpreter, the
handlers in-process, moto EC2, the real agent on emulated EBS volumes, DynamoDB Local.

One ``LocalSession`` serves the whole directory (``bench``, package scope: starting DynamoDB Local,
moto and the handler endpoint costs ~15 s). Faults are set per run: the session's ``FaultPlan`` is
shared by reference with the handler endpoint and the local agents, so ``Bench.run(request,
faults)`` replaces its ``faults`` list in place (copies, since a fault counts down as it fires),
clears ``fired``, runs, keeps what fired and empties the plan again.

State transitions per config come from the execution history. Every event names the event before
it (``previousEventId``); inside a Map iteration that chain leads back to the iteration's
``MapIterationStarted`` event, whose ``index`` names the iteration, while run-level events (Plan,
the Map state itself, Finalize) lead back to ``ExecutionStarted`` or to a Map state event first.
Each ``*StateEntered`` event is one transition; the config of an iteration is the ``item.config_id``
of the input of its first state. Past 40 configs each config runs as a child execution of the
Distributed Map, with a history of its own (``Execution.child_histories``): all of a child's
transitions are its config's, counted under the inline branch's state names (the Distributed Map's
copy renames each state, ``scripts/asl_branches.py``), so both paths compare state for state.
Moto records a Retry as another ``TaskScheduled`` under the same
``TaskStateEntered``; AWS bills each retry as a transition, so ``billed`` adds them. The per-config
counts plus the run-level ones must add up to every ``*StateEntered`` event of the history.

After every test, each run it started (or a module fixture started for it) must have left nothing:
``session.leaks(run_id)`` (moto instances, volumes and file systems tagged with the run, loop
devices, mounts, md arrays and cgroups of the run) is polled until empty for up to 15 s (the kernel
releases autoclear loop devices asynchronously); anything left is cleaned by tag and fails the test.

Markers: ``root`` and ``slow``. Skipped with the reason when not root, or fio, losetup, java or
DynamoDB Local are missing.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import shutil
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from storagebench.core.guardrails import Guardrails
from storagebench.planning.local import LocalOptions
from storagebench.workflow.steps.sweep_run import cleanup_run
from storagebench_local.adapters.faults import Fault, FaultPlan
from storagebench_local.session import Execution, LocalSession

REPO = Path(__file__).resolve().parents[3]
ASL = REPO / "statemachines" / "benchmark.asl.json"
MIB = 1 << 20
CAPACITY_BYTES = 512 * MIB
KNEE_SECONDS = 30.0
LEAK_SETTLE_S = 15.0
RUN_TIMEOUT_S = 300.0  # the longest run takes ~40 s: a hang ends here, stopped, not hours later
RUN_LEVEL_STATES = ("Plan", "RouteConfigs", "Configs", "Finalize")
DISTRIBUTED_RUN_LEVEL_STATES = ("Plan", "RouteConfigs", "DistributedConfigs", "Finalize")
# The path of a config that is ready at its first poll and succeeds: one transition per state.
HAPPY_PATH = ["Provision", "WaitUntilReady", "CheckReady", "IsReady", "RunAgent", "Collect", "Cleanup"]
MAX_TRANSITIONS_PER_CONFIG = 60

# Numbers the project reports, printed at the end of the session (pytest_terminal_summary).
SUMMARY: dict[str, Any] = {
    "runs": 0,
    "faults_configured": 0,
    "faults_fired": 0,
    "leaks_found": 0,
    "leaky_runs": {},
    "measured": {},
}


# ------------------------------------------------------------------------------ request builders


def ebs(
    config_id: str,
    volume_type: str = "gp3",
    *,
    size_gib: int = 100,
    iops: int | None = None,
    target_id: str = "main",
) -> dict[str, Any]:
    """A config with one emulated EBS volume (io1/io2 need ``iops``)."""
    target: dict[str, Any] = {"kind": "ebs", "id": target_id, "type": volume_type, "size_gib": size_gib}
    if iops is not None:
        target["iops"] = iops
    return {"id": config_id, "instance_type": "c5.large", "targets": [target]}


def local(config_id: str, path: Path, *, target_id: str = "main") -> dict[str, Any]:
    """A config benchmarking a directory of this machine (fast: no loop device, no mkfs)."""
    path.mkdir(parents=True, exist_ok=True)
    return {
        "id": config_id,
        "instance_type": "c5.large",
        "targets": [{"kind": "local", "id": target_id, "path": str(path)}],
    }


def short_workloads(scale: float = 0.01, targets: list[str] | None = None) -> list[dict[str, Any]]:
    where = {"targets": targets} if targets else {}
    return [
        {"profile": "std-randread-4k", "scale": scale, **where},
        {"profile": "std-latency-4k-qd1", "scale": scale, **where},
    ]


def command(workload_id: str, script: str, targets: list[str] | None = None) -> dict[str, Any]:
    """The ``command`` profile: a shell command timed by the agent (``sleep N`` simulates a long run)."""
    where = {"targets": targets} if targets else {}
    return {"profile": "command", "id": workload_id, "params": {"command": script}, **where}


def request(
    name: str,
    configs: list[dict[str, Any]],
    *,
    workloads: list[dict[str, Any]] | None = None,
    prewarm: str = "none",
    repetitions: int = 1,
    max_concurrency: int | None = None,
    **timing: float,
) -> dict[str, Any]:
    """A small, fast request: 1 s readiness polls, 3 s heartbeats, one short fio workload."""
    return {
        "name": name,
        "configs": configs,
        "prewarm": {"method": prewarm},
        "workloads": workloads or [{"profile": "std-randread-4k", "scale": 0.01}],
        "repetitions": repetitions,
        "max_concurrency": max_concurrency or min(len(configs), 6),
        "timing": {"ready_poll_s": 1, "command_poll_s": 3, **timing},
    }


def attempts(state: str, error: str) -> int:
    """How many times a state runs before it gives up on ``error``: 1 + its Retry's MaxAttempts."""
    definition = json.loads(ASL.read_text(encoding="utf-8"))
    states = dict(definition["States"])
    states.update(definition["States"]["Configs"]["ItemProcessor"]["States"])
    for retrier in states[state].get("Retry", []):
        if error in retrier["ErrorEquals"]:
            return 1 + int(retrier["MaxAttempts"])
    return 1


# ------------------------------------------------------------------------------ transitions


@dataclass
class Transitions:
    states: list[str] = field(default_factory=list)  # the states entered, in order
    tasks_entered: int = 0  # TaskStateEntered events
    tasks_scheduled: int = 0  # TaskScheduled events: one per attempt of a Task state

    @property
    def entered(self) -> int:
        return len(self.states)

    @property
    def retries(self) -> int:
        """Task attempts beyond the first of each Task state entered (each a Retry)."""
        return self.tasks_scheduled - self.tasks_entered

    @property
    def billed(self) -> int:
        return self.entered + self.retries


def branch_names() -> dict[str, str]:
    """A state of the Distributed Map's branch -> the same state of the inline Map's (the copy keeps
    the order of the states it renames)."""
    states = json.loads(ASL.read_text(encoding="utf-8"))["States"]
    inline = states["Configs"]["ItemProcessor"]["States"]
    distributed = states["DistributedConfigs"]["ItemProcessor"]["States"]
    assert len(inline) == len(distributed), "the branches differ: make asl-branches"
    return dict(zip(distributed, inline, strict=True))


def child_transitions(history: list[dict[str, Any]]) -> tuple[str, Transitions]:
    """One child execution of the Distributed Map: its config and every transition it made."""
    names = branch_names()
    counts = Transitions()
    config_id: str | None = None
    for event in sorted(history, key=lambda e: e["id"]):
        kind = event["type"]
        if kind.endswith("StateEntered"):
            details = event["stateEnteredEventDetails"]
            counts.states.append(names[details["name"]])
            counts.tasks_entered += kind == "TaskStateEntered"
            if config_id is None:
                config_id = str(json.loads(details["input"])["item"]["config_id"])
        elif kind == "TaskScheduled":
            counts.tasks_scheduled += 1
    assert config_id is not None, "a child execution entered no state"
    return config_id, counts


def transitions(
    history: list[dict[str, Any]], child_histories: Iterable[list[dict[str, Any]]] = ()
) -> tuple[dict[str, Transitions], Transitions]:
    """State transitions of each config (by Map iteration, or by child execution of the Distributed
    Map) and of the run itself."""
    by_id = {event["id"]: event for event in history}
    owner: dict[int, int | None] = {}

    def iteration(event: dict[str, Any]) -> int | None:
        chain: list[int] = []
        current: dict[str, Any] | None = event
        found: int | None = None
        while current is not None:
            if current["id"] in owner:
                found = owner[current["id"]]
                break
            chain.append(current["id"])
            kind = current["type"]
            if kind == "MapIterationStarted":
                found = int(current["mapIterationStartedEventDetails"]["index"])
                break
            if kind.startswith(("Map", "Execution")):
                break
            current = by_id.get(current.get("previousEventId", 0))
        for event_id in chain:
            owner[event_id] = found
        return found

    per_index: dict[int, Transitions] = {}
    config_of: dict[int, str] = {}
    run_level = Transitions()
    entered_total = 0
    for event in sorted(history, key=lambda e: e["id"]):
        kind = event["type"]
        index = iteration(event)
        counts = run_level if index is None else per_index.setdefault(index, Transitions())
        if kind.endswith("StateEntered"):
            entered_total += 1
            details = event["stateEnteredEventDetails"]
            counts.states.append(details["name"])
            counts.tasks_entered += kind == "TaskStateEntered"
            if index is not None and index not in config_of:
                config_of[index] = json.loads(details["input"])["item"]["config_id"]
        elif kind == "TaskScheduled":
            counts.tasks_scheduled += 1
    per_config = {config_of[index]: counts for index, counts in per_index.items()}
    attributed = run_level.entered + sum(t.entered for t in per_config.values())
    assert attributed == entered_total, f"attributed {attributed} of {entered_total} transitions"
    for child in child_histories:
        config_id, counts = child_transitions(child)
        assert config_id not in per_config, f"{config_id} ran twice"
        per_config[config_id] = counts
    return per_config, run_level


# ------------------------------------------------------------------------------ the bench


@dataclass
class RunResult:
    execution: Execution
    request: dict[str, Any]
    fired: list[dict[str, Any]]
    leaks: list[str]
    per_config: dict[str, Transitions]
    run_level: Transitions

    @property
    def run_id(self) -> str:
        return self.execution.run_id

    @property
    def status(self) -> str | None:
        """SUCCEEDED, PARTIAL or FAILED from Finalize (None when the execution itself failed)."""
        return (self.execution.output or {}).get("status")

    @property
    def configs(self) -> dict[str, dict[str, Any]]:
        return {c["config_id"]: c for c in (self.execution.output or {}).get("configs", [])}

    def fired_count(self, point: str, config_id: str) -> int:
        return sum(1 for f in self.fired if f["point"] == point and f["config_id"] == config_id)


class Bench:
    """A LocalSession plus what the tests need around it: faults per run, leak checks, numbers."""

    def __init__(self, session: LocalSession, scratch: Path) -> None:
        self.session = session
        self.scratch = scratch
        self.config_ids: dict[str, list[str]] = {}
        self.unchecked: list[str] = []

    @property
    def services(self) -> Any:
        assert self.session.services is not None
        return self.session.services

    def directory(self, name: str) -> Path:
        return self.scratch / name

    def local(self, config_id: str, target_id: str = "main") -> dict[str, Any]:
        return local(config_id, self.directory(config_id), target_id=target_id)

    def set_faults(self, faults: Iterable[Fault]) -> None:
        plan: FaultPlan = self.session.faults
        plan.faults[:] = [dataclasses.replace(f) for f in faults]
        plan.fired.clear()

    def start(self, document: dict[str, Any]) -> tuple[str, str]:
        run_id, arn = self.session.start(document)
        self.config_ids[run_id] = [str(c.get("id")) for c in document.get("configs", [])]
        self.unchecked.append(run_id)
        SUMMARY["runs"] += 1
        return run_id, arn

    def run(
        self, document: dict[str, Any], faults: Iterable[Fault] = (), timeout_s: float = RUN_TIMEOUT_S
    ) -> RunResult:
        faults = list(faults)
        self.set_faults(faults)
        try:
            run_id, arn = self.start(document)
            execution = self.session.wait(run_id, arn, timeout_s=timeout_s)
            fired = list(self.session.faults.fired)
        finally:
            self.set_faults(())
        SUMMARY["faults_configured"] += len(faults)
        SUMMARY["faults_fired"] += len(fired)
        leaks = self.settled_leaks(run_id)
        self.count_leaks(run_id, leaks)
        per_config, run_level = transitions(execution.history, execution.child_histories)
        return RunResult(execution, document, fired, leaks, per_config, run_level)

    def settled_leaks(self, run_id: str, timeout_s: float = LEAK_SETTLE_S) -> list[str]:
        """What the run still holds, once the kernel has let go of what was released."""
        deadline = time.monotonic() + timeout_s
        while True:
            left = self.session.leaks(run_id)
            if not left or time.monotonic() > deadline:
                return left
            time.sleep(0.25)

    @staticmethod
    def count_leaks(run_id: str, leaks: list[str]) -> None:
        if leaks:
            SUMMARY["leaks_found"] += len(leaks)
            SUMMARY["leaky_runs"][run_id] = leaks

    def store(self, run_id: str) -> dict[str, Any]:
        """The run, its configs and its results, as DynamoDB Local holds them."""
        record: dict[str, Any] = self.services.store.get_run(run_id)
        return record

    def results_of(self, run_id: str, config_id: str) -> list[dict[str, Any]]:
        return [r for r in self.store(run_id)["results"] if r["config_id"] == config_id]

    def artifacts(self, run_id: str, config_id: str) -> Path:
        """The agent's output as the instance last uploaded it (downloaded into the disk mirror)."""
        prefix = self.session.instance_prefix(run_id, config_id)
        assert prefix is not None, f"no instance was launched for {config_id}"
        return Path(self.services.artifacts.fetch(f"{prefix}agent/"))

    def instance_count(self) -> int:
        """Every instance moto knows, in any state (terminated ones stay listed)."""
        import boto3

        ec2 = boto3.client("ec2", region_name="us-east-1")
        return sum(len(r["Instances"]) for r in ec2.describe_instances()["Reservations"])

    @contextlib.contextmanager
    def guardrails(self, limits: Guardrails) -> Iterator[None]:
        """The stack's limits for the runs inside (what ``LocalSession(guardrails=...)`` sets)."""
        saved = self.services.guardrails
        self.services.guardrails = limits
        self.session.guardrails = limits
        try:
            yield
        finally:
            self.services.guardrails = saved
            self.session.guardrails = saved

    def clean(self, run_id: str) -> None:
        """Release everything of a run by its tags (what an operator does after an abort)."""
        cleanup_run(run_id, self.config_ids.get(run_id, []), self.services)


def wait_for(condition: Callable[[], Any], what: str, timeout_s: float = 60.0, poll_s: float = 0.2) -> Any:
    """Poll until ``condition()`` is truthy; its value, or AssertionError after ``timeout_s``."""
    deadline = time.monotonic() + timeout_s
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout_s:.0f} s waiting for {what}")
        time.sleep(poll_s)


def read_json(path: Path) -> dict[str, Any]:
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return document if isinstance(document, dict) else {}


# ------------------------------------------------------------------------------ fixtures


def _missing_requirements() -> str | None:
    if os.geteuid() != 0:
        return "needs root: local mode emulates EBS with loop devices, mkfs, mounts and cgroup throttling"
    for tool, why in (
        ("fio", "the agent's workloads (apt-get install fio)"),
        ("losetup", "emulated EBS volumes (util-linux)"),
        ("java", "DynamoDB Local, where results are stored (apt-get install openjdk-17-jre-headless)"),
    ):
        if shutil.which(tool) is None:
            return f"{tool} is not installed: needed for {why}"
    return None


@pytest.fixture(scope="package")
def bench(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Bench]:
    missing = _missing_requirements()
    if missing:
        pytest.skip(missing)
    root = tmp_path_factory.mktemp("storagebench-root")
    session = LocalSession(
        root,
        LocalOptions(capacity_bytes=CAPACITY_BYTES, knee_seconds=KNEE_SECONDS),
        faults=FaultPlan(),
        fast_retries=True,
    )
    started = time.monotonic()
    with session:
        if session.dynamodb_endpoint is None:
            pytest.skip("; ".join(session.notices) or "DynamoDB Local did not start")
        SUMMARY["measured"]["session start (s)"] = round(time.monotonic() - started, 1)
        bench = Bench(session, tmp_path_factory.mktemp("storagebench-dirs"))
        try:
            yield bench
        finally:
            for run_id in bench.config_ids:  # never leave a throttled loop device behind
                if session.leaks(run_id):
                    with contextlib.suppress(Exception):
                        bench.clean(run_id)


@pytest.fixture(autouse=True)
def _no_leaks(bench: Bench) -> Iterator[None]:
    yield
    leaky: dict[str, list[str]] = {}
    while bench.unchecked:
        run_id = bench.unchecked.pop(0)
        left = bench.settled_leaks(run_id)
        if left:
            leaky[run_id] = left
            bench.clean(run_id)
    if leaky:
        pytest.fail(f"runs left resources behind (now cleaned by tag): {leaky}")


# ------------------------------------------------------------------------------ the report


def pytest_terminal_summary(terminalreporter: Any) -> None:
    if not SUMMARY["runs"]:
        return
    write = terminalreporter.write_line
    terminalreporter.section("storagebench workflow: what the local runs measured")
    rows = [
        ("runs (executions started)", SUMMARY["runs"]),
        ("faults injected (configured)", SUMMARY["faults_configured"]),
        ("faults fired (incl. each retry)", SUMMARY["faults_fired"]),
        ("leaks found after runs", SUMMARY["leaks_found"]),
        *SUMMARY["measured"].items(),
    ]
    width = max(len(str(name)) for name, _ in rows)
    for name, value in rows:
        write(f"{name:<{width}}  {value}")
    for run_id, leaks in SUMMARY["leaky_runs"].items():
        write(f"LEAK {run_id}: {leaks}")
    matrix = SUMMARY.get("matrix")
    if matrix:
        columns = ("configs", "faults", "fired", "leaks")
        write("")
        write(f"{'fault matrix run':<22}" + "".join(f"{c:>8}" for c in columns) + f"{'wall s':>8}  status")
        for name, row in matrix.items():
            cells = "".join(f"{row[c]:>8}" for c in columns)
            write(f"{name:<22}{cells}{row['wall_s']:>8.1f}  {row['status']}")
        totals = Counter()
        for row in matrix.values():
            totals.update({c: row[c] for c in columns})
        cells = "".join(f"{totals[c]:>8}" for c in columns)
        wall = sum(r["wall_s"] for r in matrix.values())
        write(f"{'total':<22}{cells}{wall:>8.1f}  {len(matrix)} runs")

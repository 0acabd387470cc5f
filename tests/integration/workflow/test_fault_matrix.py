"""Every step broken on purpose, in every way the workflow distinguishes, next to a healthy config.

Each group is one run: a healthy emulated-EBS config that must keep its results, and up to five
faulty configs (MaxConcurrency 6), each with its own faults. A fault is raised at the handler of a
state (``handler.<Function>``: before the handler runs), in the local agent fleet when the agent
is started (``agents.start``), or as the agent's behaviour (``agent.run``). How often each fires is
part of the expectation: a retried error fires once per attempt, up to the Retry's MaxAttempts + 1
as the ASL defines it (``attempts()``), and an error no Retry names (a handler bug, a
ProvisioningError, ...) fires once however many times it was armed.

For each case: the config's status and records (from Finalize, and as recorded in DynamoDB Local),
its errors (step and error name, in order), what fired; for each run: its status, the healthy
sibling's records, and nothing left (moto instances, volumes and file systems of the run, loop
devices, mounts, cgroups).

Outside the groups: a command that overruns its timeout (its own run, stopped at a deadline so a
local-mode bug cannot cost the suite ten minutes), a Plan handler bug (nothing launched) and a
Finalize handler bug (FinalizeFailed: execution FAILED, nothing leaked). Then issue 11's cases, one
run each: request.json deleted or corrupted mid-run, a second start with the same idempotency key,
two starts of one scheduled occurrence, and a stop while Provision is under way (twice: Provision
releases its late launch, or, its check defeated, SweepRun's second sweep does).
"""

from __future__ import annotations

import math
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import boto3
import pytest
from tests.support.modules import load_module

from storagebench.adapters.aws.report_links import S3ReportLinks
from storagebench.adapters.aws.run_sweeper import LambdaSweeper
from storagebench.adapters.aws.stepfunctions import StepFunctionsLauncher
from storagebench.api.models import RunCreated
from storagebench.api.service import ApiService
from storagebench.core.clock import iso
from storagebench.core.interruption import interruption_line
from storagebench.core.tags import TAG_RUN
from storagebench.workflow.artifact_keys import request_key
from storagebench.workflow.events import SweepRunEvent
from storagebench.workflow.ports import IN_FLIGHT_S
from storagebench.workflow.run_ids import schedule_group
from storagebench_local.adapters.faults import Fault

from .conftest import (
    MAX_TRANSITIONS_PER_CONFIG,
    REPO,
    RUN_TIMEOUT_S,
    SUMMARY,
    Bench,
    RunResult,
    attempts,
    command,
    ebs,
    request,
    transitions,
    wait_for,
)

pytestmark = [pytest.mark.root, pytest.mark.slow]

# A task whose heartbeats stop: AWS reports States.HeartbeatTimeout; moto 5.2.5 reports States.Timeout.
HEARTBEAT_LOST = ("States.HeartbeatTimeout", "States.Timeout")
COMMAND_TIMEOUT_H = 0.006  # 22 s: the healthy agents of that run take ~5 s
HEARTBEAT_S = 3
DYING_SLEEP_S = 15  # the dying agent's only workload: still running when its "instance" dies at ~3 s


@dataclass(frozen=True)
class Injected:
    point: str
    kind: str
    times: int
    fires: int


def once(point: str, kind: str) -> Injected:
    """An error no Retry names: armed three times, it must fire exactly once."""
    return Injected(point, kind, times=3, fires=1)


def retried(point: str, kind: str, times: int) -> Injected:
    """A retried error that fires ``times`` times, then the step succeeds."""
    return Injected(point, kind, times=times, fires=times)


def until_give_up(point: str, kind: str, state: str) -> Injected:
    """A retried error armed for more attempts than the state makes: it gives up."""
    tries = attempts(state, kind)
    return Injected(point, kind, times=tries + 5, fires=tries)


def behaviour(kind: str) -> Injected:
    """What the agent's run does instead of reporting success (taken once, when the agent starts)."""
    return Injected("agent.run", kind, times=1, fires=1)


def handler(function: str) -> str:
    return f"handler.{function}Function"


@dataclass(frozen=True)
class Case:
    config_id: str
    group: str
    inject: tuple[Injected, ...]
    status: str  # succeeded | partial | failed
    errors: tuple[tuple[str, tuple[str, ...]], ...] = ()  # (step, accepted error names), in order
    target: str = "local"  # local | ebs | dying (emulated EBS running only a long sleep)
    bug: str | None = None  # the errors differ from what the workflow promises: strict xfail


def err(step: str, *names: str) -> tuple[str, tuple[str, ...]]:
    return (step, names)


P, R, S, C = handler("Provision"), handler("CheckReady"), handler("StartAgent"), handler("Collect")
F, K, FIN, PLAN = handler("RecordFailure"), handler("Cleanup"), handler("Finalize"), handler("Plan")

CASES: list[Case] = [
    # ---------------------------------------------------------------- provision
    Case("prov-capacity-once", "provision", (retried(P, "CapacityError", 1),), "succeeded"),
    Case(
        "prov-capacity-gives-up",
        "provision",
        (until_give_up(P, "CapacityError", "Provision"),),
        "failed",
        (err("provision", "CapacityError"),),
    ),
    Case("prov-throttled-twice", "provision", (retried(P, "ThrottledError", 2),), "succeeded"),
    Case(
        "prov-error",
        "provision",
        (once(P, "ProvisioningError"),),
        "failed",
        (err("provision", "ProvisioningError"),),
    ),
    Case("prov-bug", "provision", (once(P, "RuntimeError"),), "failed", (err("provision", "RuntimeError"),)),
    # ---------------------------------------------------------------- readiness
    Case("ready-dead", "ready", (once(R, "NotReadyError"),), "failed", (err("ready", "NotReadyError"),)),
    Case("ready-throttled", "ready", (retried(R, "ThrottledError", 1),), "succeeded"),
    Case("ready-bug", "ready", (once(R, "RuntimeError"),), "failed", (err("ready", "RuntimeError"),)),
    Case("ready-not-consistent", "ready", (retried(R, "NotYetConsistentError", 2),), "succeeded"),
    Case("prov-not-consistent", "ready", (retried(P, "NotYetConsistentError", 2),), "succeeded"),
    # ---------------------------------------------------------------- starting the agent
    Case(
        "start-agent-error",
        "start",
        (once("agents.start", "AgentError"),),
        "failed",
        (err("agent", "AgentError"), err("collect", "CollectError")),
    ),
    Case("start-throttled", "start", (retried(S, "ThrottledError", 1),), "succeeded"),
    Case(
        "start-bug",
        "start",
        (once(S, "RuntimeError"),),
        "failed",
        (err("agent", "RuntimeError"), err("collect", "CollectError")),
    ),
    Case("start-fleet-throttled", "start", (retried("agents.start", "ThrottledError", 2),), "succeeded"),
    Case(
        "start-fleet-bug",
        "start",
        (once("agents.start", "RuntimeError"),),
        "failed",
        (err("agent", "RuntimeError"), err("collect", "CollectError")),
    ),
    # ---------------------------------------------------------------- inside the document and the agent
    Case(
        "doc-agent-checksum",  # the document stops before the agent: the error comes from SSM's output
        "instance",
        (behaviour("agent_checksum"),),
        "failed",
        (err("agent", "AgentError"), err("collect", "CollectError")),
    ),
    Case(
        "doc-plan-checksum",
        "instance",
        (behaviour("plan_checksum"),),
        "failed",
        (err("agent", "AgentError"), err("collect", "CollectError")),
    ),
    Case(
        "doc-package-install",
        "instance",
        (behaviour("package_install"),),
        "failed",
        (err("agent", "AgentError"), err("collect", "CollectError")),
    ),
    Case(
        "doc-output-upload",
        "instance",
        (behaviour("output_upload"),),
        "failed",
        (err("agent", "AgentError"), err("collect", "CollectError")),
    ),
    Case(
        "doc-callback",  # measured and uploaded; only the report is refused: the results are kept
        "instance",
        (behaviour("callback"),),
        "partial",
        (err("agent", "AgentError", *HEARTBEAT_LOST),),
    ),
    # ---------------------------------------------------------------- the agent's run
    Case(
        "run-instance-died",
        "agent",
        (behaviour("instance_died"),),
        "failed",
        (err("agent", *HEARTBEAT_LOST),),
        target="dying",
    ),
    Case(
        "run-output-missing",
        "agent",
        (behaviour("output_missing"),),
        "failed",
        (err("collect", "CollectError"),),
    ),
    Case(
        "record-fails-after-agent",
        "agent",
        (once("agents.start", "AgentError"), once(F, "RuntimeError")),
        "failed",
        (err("agent", "AgentError"), err("record_failure", "RuntimeError"), err("collect", "CollectError")),
    ),
    # ---------------------------------------------------------------- collect (caught straight to Cleanup)
    Case("collect-error", "collect", (once(C, "CollectError"),), "failed", (err("collect", "CollectError"),)),
    Case("collect-throttled", "collect", (retried(C, "ThrottledError", 1),), "succeeded"),
    Case("collect-bug", "collect", (once(C, "RuntimeError"),), "failed", (err("collect", "RuntimeError"),)),
    Case("collect-not-consistent", "collect", (retried(C, "NotYetConsistentError", 2),), "succeeded"),
    Case(
        "record-throttled",
        "collect",
        (once(P, "ProvisioningError"), retried(F, "ThrottledError", 1)),
        "failed",
        (err("provision", "ProvisioningError"),),  # recorded once, by the retry that succeeded
    ),
    # ---------------------------------------------------------------- record-failure failing too
    Case(
        "record-fails-after-provision",
        "record",
        (once(P, "ProvisioningError"), once(F, "RuntimeError")),
        "failed",
        (err("provision", "ProvisioningError"), err("record_failure", "RuntimeError")),
    ),
    Case(
        "record-fails-after-ready",
        "record",
        (once(R, "NotReadyError"), once(F, "ProvisioningError")),
        "failed",
        (err("ready", "NotReadyError"), err("record_failure", "ProvisioningError")),
    ),
    # ---------------------------------------------------------------- cleanup
    Case("cleanup-busy-twice", "record", (retried(K, "ResourceBusyError", 2),), "succeeded"),
    Case(
        "cleanup-busy-gives-up",
        "record",
        (until_give_up(K, "ResourceBusyError", "Cleanup"),),
        "partial",  # measured, but its cleanup failed: Finalize released it by its tags
        (err("cleanup", "ResourceBusyError"),),
        target="ebs",
    ),
    Case(
        "cleanup-bug",
        "cleanup",
        (once(K, "RuntimeError"),),
        "partial",
        (err("cleanup", "RuntimeError"),),
        target="ebs",
    ),
    Case("cleanup-throttled", "cleanup", (retried(K, "ThrottledError", 2),), "succeeded"),
    Case(
        "cleanup-fails-after-provision",
        "cleanup",
        (once(P, "ProvisioningError"), once(K, "RuntimeError")),
        "failed",
        (err("provision", "ProvisioningError"), err("cleanup", "RuntimeError")),
    ),
    Case(
        "record-and-cleanup-fail",
        "cleanup",
        (once(P, "ProvisioningError"), once(F, "RuntimeError"), once(K, "RuntimeError")),
        "failed",
        (
            err("provision", "ProvisioningError"),
            err("record_failure", "RuntimeError"),
            err("cleanup", "RuntimeError"),
        ),
    ),
]


@dataclass(frozen=True)
class Group:
    name: str
    healthy: str  # volume type of the healthy sibling
    run_faults: tuple[Injected, ...] = ()  # at run-level handlers (config "*")
    timing: dict[str, Any] = field(default_factory=dict)

    @property
    def cases(self) -> list[Case]:
        return [c for c in CASES if c.group == self.name]

    @property
    def sibling(self) -> str:
        return f"healthy-{self.name}"

    def expected_status(self) -> str:
        statuses = {"succeeded"} | {c.status for c in self.cases}
        if statuses == {"succeeded"}:
            return "SUCCEEDED"
        return "FAILED" if statuses <= {"failed"} else "PARTIAL"


# Heartbeat windows: the agent heartbeats every half window through the local stack's one process
# (moto, the Lambda endpoint, every config's handlers). A 3 s window lost three healthy agents of the
# collect group (States.Timeout) while make test ran its other streams beside; only the groups whose
# cases lose an instance on purpose keep a short one (6 s: a dead instance found in 6 s).
LOSES_INSTANCES = {"command_poll_s": 6}
KEEPS_INSTANCES = {"command_poll_s": 20}
GROUPS = {
    g.name: g
    for g in (
        Group("provision", "gp2", run_faults=(retried(PLAN, "ThrottledError", 2),), timing=KEEPS_INSTANCES),
        Group("ready", "gp3", timing=KEEPS_INSTANCES),
        Group("start", "io1", run_faults=(retried(FIN, "ThrottledError", 1),), timing=KEEPS_INSTANCES),
        Group("agent", "gp3", timing=LOSES_INSTANCES),
        Group("instance", "gp2", timing=LOSES_INSTANCES),
        Group("collect", "gp2", timing=KEEPS_INSTANCES),
        Group("record", "gp3", timing=KEEPS_INSTANCES),
        Group(
            "cleanup", "io1", run_faults=(retried(FIN, "NotYetConsistentError", 2),), timing=KEEPS_INSTANCES
        ),
    )
}
# Outside the groups: the overrunning command, the Plan bug and the Finalize bug (one fault each).
OTHER_FAULTS = 3
assert len({c.config_id for c in CASES}) == len(CASES)
assert all(0 < len(g.cases) <= 5 for g in GROUPS.values())
GROUP_FAULTS = sum(len(c.inject) for c in CASES) + sum(len(g.run_faults) for g in GROUPS.values())
assert GROUP_FAULTS + OTHER_FAULTS >= 30, GROUP_FAULTS


def healthy_config(config_id: str, volume_type: str) -> dict[str, Any]:
    return ebs(config_id, volume_type, iops=3000 if volume_type in ("io1", "io2") else None)


class Matrix:
    """Runs each group once, when a test first needs it, and keeps the result (or the error)."""

    def __init__(self, bench: Bench) -> None:
        self.bench = bench
        self.results: dict[str, RunResult | BaseException] = {}

    def result(self, name: str) -> RunResult:
        if name not in self.results:
            try:
                self.results[name] = self._run(GROUPS[name])
            except Exception as exc:
                self.results[name] = exc
        outcome = self.results[name]
        if isinstance(outcome, BaseException):
            raise AssertionError(f"the {name} group's run did not complete: {outcome!r}") from outcome
        return outcome

    def _config(self, case: Case) -> dict[str, Any]:
        if case.target == "ebs":
            return ebs(case.config_id, "gp3")
        if case.target == "dying":
            return ebs(case.config_id, "gp3", target_id="slow")
        return self.bench.local(case.config_id)

    def _run(self, group: Group) -> RunResult:
        configs = [healthy_config(group.sibling, group.healthy), *(self._config(c) for c in group.cases)]
        workloads: list[dict[str, Any]] = [{"profile": "std-randread-4k", "scale": 0.01, "targets": ["main"]}]
        if any(c.target == "dying" for c in group.cases):
            workloads.append(command("long-sleep", f"sleep {DYING_SLEEP_S}", ["slow"]))
        document = request(f"wf-faults-{group.name}", configs, workloads=workloads, **group.timing)
        faults = [
            Fault(i.point, i.kind, config_id=c.config_id, times=i.times, message=f"injected {i.kind}")
            for c in group.cases
            for i in c.inject
        ]
        faults += [Fault(i.point, i.kind, config_id="*", times=i.times) for i in group.run_faults]
        started = time.monotonic()
        result = self.bench.run(document, faults)
        record_row(group.name, len(configs), len(faults), result, time.monotonic() - started)
        return result


def record_row(name: str, configs: int, faults: int, result: RunResult, wall_s: float) -> None:
    SUMMARY.setdefault("matrix", {})[name] = {
        "configs": configs,
        "faults": faults,
        "fired": len(result.fired),
        "leaks": len(result.leaks),
        "wall_s": wall_s,
        "status": f"{result.status or result.execution.status} {result.run_id}",
    }


@pytest.fixture(scope="module")
def matrix(bench: Bench) -> Matrix:
    return Matrix(bench)


def _case_params(with_bugs: bool) -> list[Any]:
    params = []
    for case in CASES:
        marks = [pytest.mark.xfail(strict=True, reason=case.bug)] if with_bugs and case.bug else []
        params.append(pytest.param(case, id=case.config_id, marks=marks))
    return params


# ------------------------------------------------------------------------------ per run


@pytest.mark.parametrize("name", list(GROUPS))
def test_run_outcome_and_healthy_sibling(bench: Bench, matrix: Matrix, name: str) -> None:
    group = GROUPS[name]
    result = matrix.result(name)
    assert result.execution.status == "SUCCEEDED", (result.execution.error, result.execution.cause)
    assert result.status == group.expected_status()
    assert result.run_level.states == ["Plan", "RouteConfigs", "Configs", "Finalize"]
    stored = bench.store(result.run_id)
    assert stored["run"]["status"] == group.expected_status()

    sibling = result.configs[group.sibling]
    assert (sibling["status"], sibling["errors"], sibling["leftovers"]) == ("succeeded", [], [])
    assert len(bench.results_of(result.run_id, group.sibling)) == sibling["records"] > 0

    for fault in group.run_faults:
        assert result.fired_count(fault.point, "*") == fault.fires, fault
    for config_id, counts in result.per_config.items():
        assert counts.billed <= MAX_TRANSITIONS_PER_CONFIG, (config_id, counts)
    worst = max(result.per_config.items(), key=lambda item: item[1].billed)
    SUMMARY["measured"].setdefault("fault matrix: most transitions of a config (incl. retries)", {})[name] = (
        f"{worst[1].billed} ({worst[0]})"
    )
    assert result.leaks == []


# ------------------------------------------------------------------------------ per faulty config


@pytest.mark.parametrize("case", _case_params(with_bugs=False))
def test_config_status(bench: Bench, matrix: Matrix, case: Case) -> None:
    result = matrix.result(case.group)
    config = result.configs[case.config_id]
    assert config["status"] == case.status, config
    assert config["leftovers"] == [], config
    assert len(bench.results_of(result.run_id, case.config_id)) == config["records"]
    assert (config["records"] > 0) == (case.status != "failed")
    recorded = {c["config_id"]: c for c in bench.store(result.run_id)["run"]["config_results"]}
    assert recorded[case.config_id]["status"] == case.status
    assert recorded[case.config_id]["errors"] == config["errors"]
    assert bool(config["errors"]) == (case.status != "succeeded"), config["errors"]
    if case.errors:
        # The step that broke is named first, whatever else went wrong afterwards.
        assert config["errors"][0]["step"] == case.errors[0][0], config["errors"]


@pytest.mark.parametrize("case", _case_params(with_bugs=False))
def test_config_path(matrix: Matrix, case: Case) -> None:
    """The states the config went through: its failure recorded, then cleaned up (or handed to Finalize)."""
    states = matrix.result(case.group).per_config[case.config_id].states
    broken = {step for step, _ in case.errors}
    # A Cleanup that gave up ends in CleanupFailed; Finalize then releases the config by its tags.
    errors = matrix.result(case.group).configs[case.config_id]["errors"]
    assert states[-1] == ("CleanupFailed" if "cleanup" in broken else "Cleanup"), (states, errors)
    assert ("RecordFailure" in states) == bool(broken & {"provision", "ready"}), states
    assert ("RecordAgentFailure" in states) == ("agent" in broken), states
    assert states.count("Provision") == 1  # retries stay inside their state: one transition each


@pytest.mark.parametrize("case", _case_params(with_bugs=True))
def test_config_errors(matrix: Matrix, case: Case) -> None:
    config = matrix.result(case.group).configs[case.config_id]
    got = [(e["step"], e["error"]) for e in config["errors"]]
    assert [step for step, _ in got] == [step for step, _ in case.errors], config["errors"]
    for (_, name), (_, accepted) in zip(got, case.errors, strict=True):
        assert name in accepted, got


@pytest.mark.parametrize("case", _case_params(with_bugs=False))
def test_fault_fired(matrix: Matrix, case: Case) -> None:
    result = matrix.result(case.group)
    for injected in case.inject:
        assert result.fired_count(injected.point, case.config_id) == injected.fires, injected


STEP_NAMED = {
    "doc-agent-checksum": "step 'verify agent' failed",
    "doc-plan-checksum": "step 'verify plan' failed",
    "doc-package-install": "step 'install packages' failed",
    "doc-output-upload": "step 'upload output' failed",
}


@pytest.mark.parametrize("config_id", list(STEP_NAMED))
def test_a_failure_inside_the_document_names_its_step(matrix: Matrix, config_id: str) -> None:
    """Never a silent heartbeat timeout: the cause says which step of the instance side broke."""
    [first, *_] = matrix.result("instance").configs[config_id]["errors"]
    assert STEP_NAMED[config_id] in first["cause"], first


def test_a_refused_callback_keeps_what_was_measured(bench: Bench, matrix: Matrix) -> None:
    result = matrix.result("instance")
    config = result.configs["doc-callback"]
    assert config["records"] > 0 and len(bench.results_of(result.run_id, "doc-callback")) == config["records"]
    refusal = bench.services.agents.refusal
    assert refusal is not None and "SendTaskSuccess" in refusal.refused


def test_a_dead_instance_is_recorded_as_lost(bench: Bench, matrix: Matrix) -> None:
    result = matrix.result("agent")
    stored = {c["config_id"]: c for c in bench.store(result.run_id)["configs"]}
    assert stored["run-instance-died"]["state"]["outcome"]["status"] == "lost"
    manifest = bench.artifacts(result.run_id, "run-instance-died") / "manifest.json"
    assert manifest.exists()  # written by the agent before it was killed: the sweep cleaned the machine


# ------------------------------------------------------------------------------ an overrunning command


@dataclass
class Overrun:
    run_id: str
    budget_s: float  # how long after RunAgent began the config should have left it (as on AWS)
    left_after_s: float | None  # when it did (None: not by the budget; the run was then stopped)
    fired: list[dict[str, Any]]
    stopped: bool
    sibling: str = "healthy-timeout"
    config: str = "run-timed-out"


@pytest.fixture(scope="module")
def overrun(bench: Bench) -> Overrun:
    """A command that never reports, in a run whose command timeout is 22 s, watched to a deadline."""
    sibling, config = "healthy-timeout", "run-timed-out"
    document = request(
        "wf-command-timeout",
        [healthy_config(sibling, "gp3"), ebs(config, "gp3")],
        command_timeout_h=COMMAND_TIMEOUT_H,
        command_poll_s=HEARTBEAT_S,
    )
    command_timeout_s = math.ceil(COMMAND_TIMEOUT_H * 3600)
    budget = command_timeout_s + 2 * HEARTBEAT_S + 20  # the command's limit, heartbeats, collect, slack
    sfn = boto3.client("stepfunctions", region_name="us-east-1")
    bench.set_faults([Fault("agent.run", "command_timed_out", config_id=config)])
    started = time.monotonic()
    try:
        run_id, arn = bench.start(document)

        def states() -> list[str]:
            history = sfn.get_execution_history(executionArn=arn, maxResults=1000)["events"]
            per_config, _ = transitions(history)
            return per_config[config].states if config in per_config else []

        wait_for(lambda: "RunAgent" in states(), "RunAgent to start", timeout_s=60)
        began = time.monotonic()
        left_after: float | None = None
        while time.monotonic() - began < budget:
            if states()[-1] != "RunAgent":
                left_after = time.monotonic() - began
                break
            time.sleep(0.5)
        fired = list(bench.session.faults.fired)
        stopped = left_after is None
        if stopped:
            sfn.stop_execution(executionArn=arn, error="Overrun", cause="the test's deadline passed")
            wait_for(
                lambda: sfn.describe_execution(executionArn=arn)["status"] != "RUNNING",
                "the stopped execution to end",
            )
            bench.clean(run_id)
        else:
            bench.session.wait(run_id, arn)
    finally:
        bench.set_faults(())
    SUMMARY["faults_configured"] += 1
    SUMMARY["faults_fired"] += len(fired)
    leaks = bench.settled_leaks(run_id)
    bench.count_leaks(run_id, leaks)
    SUMMARY.setdefault("matrix", {})["command-timeout"] = {
        "configs": 2,
        "faults": 1,
        "fired": len(fired),
        "leaks": len(leaks),
        "wall_s": time.monotonic() - started,
        "status": f"{'stopped at the deadline' if stopped else 'ended'} {run_id}",
    }
    return Overrun(run_id, budget, left_after, fired, stopped)


def test_an_overrunning_command_fails_at_its_timeout(overrun: Overrun) -> None:
    assert overrun.left_after_s is not None, (
        f"{overrun.config} still in RunAgent {overrun.budget_s:.0f} s after it began "
        f"(command timeout {math.ceil(COMMAND_TIMEOUT_H * 3600)} s, heartbeats every {HEARTBEAT_S} s)"
    )


def test_an_overrunning_command_spares_its_sibling_and_leaks_nothing(bench: Bench, overrun: Overrun) -> None:
    assert [(f["point"], f["config_id"]) for f in overrun.fired] == [("agent.run", overrun.config)]
    configs = {c["config_id"]: c for c in bench.store(overrun.run_id)["configs"]}
    assert configs[overrun.sibling]["status"] == "SUCCEEDED"
    assert len(bench.results_of(overrun.run_id, overrun.sibling)) > 0
    assert bench.settled_leaks(overrun.run_id) == []


# ------------------------------------------------------------------------------ run-level handlers


def test_a_plan_bug_launches_nothing(bench: Bench) -> None:
    before = bench.instance_count()
    document = request("wf-plan-bug", [bench.local("plan-bug")])
    result = bench.run(document, [Fault(PLAN, "RuntimeError", times=3)])
    assert result.execution.status == "FAILED"
    assert result.execution.error == "RuntimeError"
    assert len(result.fired) == 1  # a handler bug is not retried
    assert result.run_level.states == ["Plan"]
    assert result.per_config == {}
    assert bench.instance_count() == before
    with pytest.raises(KeyError):
        bench.store(result.run_id)
    assert result.leaks == []


def test_a_finalize_bug_fails_the_execution_but_leaks_nothing(bench: Bench) -> None:
    document = request("wf-finalize-bug", [ebs("finalize-bug", "gp3")])
    result = bench.run(document, [Fault(FIN, "RuntimeError", times=3)])
    assert result.execution.status == "FAILED"
    assert result.execution.error == "RuntimeError"
    assert result.run_level.states == ["Plan", "RouteConfigs", "Configs", "Finalize", "FinalizeFailed"]
    assert len(result.fired) == 1
    assert result.leaks == []  # every config was cleaned up before Finalize
    stored = bench.store(result.run_id)
    [config] = stored["configs"]
    assert config["status"] == "SUCCEEDED"
    assert len(bench.results_of(result.run_id, "finalize-bug")) > 0
    # As the ASL documents (FinalizeFailed): the record stays RUNNING until the janitor marks it FAILED.
    assert stored["run"]["status"] == "RUNNING"
    assert result.run_id in {r["run_id"] for r in bench.services.store.runs_in_progress()}


def test_matrix_totals() -> None:
    """The numbers the project reports (printed in the terminal summary)."""
    rows = {name: row for name, row in SUMMARY.get("matrix", {}).items() if name not in TRUST_ROWS}
    if not set(GROUPS) <= set(rows):
        pytest.skip(f"only {sorted(rows)} of the groups ran (a selection)")
    assert sum(r["faults"] for r in rows.values()) == GROUP_FAULTS + 1  # + the overrunning command
    assert sum(r["leaks"] for r in rows.values()) == 0
    SUMMARY["measured"]["fault matrix: cases / faults injected / runs"] = (
        f"{len(CASES)} cases in {len(GROUPS)} runs + the overrun run: {GROUP_FAULTS + 1} faults; "
        f"+ {OTHER_FAULTS - 1} run-level handler bugs in 2 more runs"
    )


# ------------------------------------------------------------------------------ issue 11: trust boundary
#
# Each its own run, outside the groups: the run's request.json deleted or corrupted mid-run, a
# second start with the same idempotency key (through the API service, on this stack), two starts
# of one scheduled occurrence, and a stop while Provision is under way (its launch held until the
# stop's first sweep is done, then let go). Every one ends with nothing of the run left.

REGION = "us-east-1"
SWEEP_RUN = "SweepRunFunction"  # the local endpoint serves each function under its logical id
TRUST_ROWS = (
    "request-deleted",
    "request-corrupt",
    "same-idempotency-key",
    "same-occurrence",
    "stop-in-provision",
    "stop-in-provision-b",
)


def local_api(bench: Bench, sweeper: Any = None) -> ApiService:
    """The API's service on this stack: the launcher, store and sweeper it uses on AWS."""
    return ApiService(
        store=bench.services.store,
        launcher=StepFunctionsLauncher(
            boto3.client("stepfunctions", region_name=REGION), bench.session.state_machine_arn
        ),
        links=S3ReportLinks(boto3.client("s3", region_name=REGION), bench.services.artifacts.bucket.bucket),
        sweeper=sweeper or LambdaSweeper(boto3.client("lambda", region_name=REGION), SWEEP_RUN),
        guardrails=bench.session.guardrails,
    )


@dataclass
class ThreadSweeper:
    """SweepRun's event, run by the SweepRun function's handler on a thread of its own: the local
    endpoint serves one invocation at a time, and the stop under test happens while Provision's
    invocation is under way (on AWS they run side by side)."""

    threads: list[threading.Thread] = field(default_factory=list)

    def sweep(self, event: SweepRunEvent) -> None:
        thread = threading.Thread(
            target=sweep_run_handler(), args=(event.model_dump(), LambdaContextStub()), daemon=True
        )
        thread.start()
        self.threads.append(thread)


def sweep_run_handler() -> Any:
    return load_module("sweep_run_app", REPO / "functions" / "sweep_run" / "app.py").handler


class LambdaContextStub:
    """What Powertools' decorators read of a Lambda context."""

    function_name = "SweepRunFunction"
    memory_limit_in_mb = 512
    invoked_function_arn = "arn:aws:lambda:us-east-1:123456789012:function:SweepRunFunction"
    aws_request_id = "00000000-0000-0000-0000-00000000sweep"


def track(bench: Bench, run_id: str, document: dict[str, Any]) -> None:
    """A run started outside ``Bench.start``, checked for leaks like the others."""
    bench.config_ids[run_id] = [str(c["id"]) for c in document["configs"]]
    bench.unchecked.append(run_id)
    SUMMARY["runs"] += 1


def trust_row(
    name: str, configs: int, faults: int, fired: int, run_id: str, status: str, wall_s: float
) -> None:
    SUMMARY.setdefault("matrix", {})[name] = {
        "configs": configs,
        "faults": faults,
        "fired": fired,
        "leaks": 0,  # asserted by each test (and by the package's leak check after it)
        "wall_s": wall_s,
        "status": f"{status} {run_id}",
    }
    SUMMARY["faults_configured"] += faults
    SUMMARY["faults_fired"] += fired


def instance_states(run_id: str) -> list[str]:
    ec2 = boto3.client("ec2", region_name=REGION)
    found = ec2.describe_instances(Filters=[{"Name": f"tag:{TAG_RUN}", "Values": [run_id]}])
    return [i["State"]["Name"] for r in found["Reservations"] for i in r["Instances"]]


def config_status(bench: Bench, run_id: str, config_id: str) -> str | None:
    try:
        configs = bench.store(run_id)["configs"]
    except KeyError:
        return None
    return next((str(c["status"]) for c in configs if c["config_id"] == config_id), None)


# ---------------------------------------------------------------- request.json deleted or corrupted


def damage_request(bench: Bench, run_id: str, how: str) -> None:
    """What an operator's mistake or a tampering does to the run's request, in the bucket and its mirror."""
    key = request_key(run_id)
    artifacts = bench.services.artifacts  # MirroredArtifacts: reads fall back to the disk copy
    bucket, disk = artifacts.bucket, Path(artifacts.disk.uri(key))
    if how == "deleted":
        bucket.s3.delete_object(Bucket=bucket.bucket, Key=key)
        disk.unlink(missing_ok=True)
    else:
        torn = b'{"name": "wf-request-corrupt", "configs": [{"id": "doc-'
        bucket.s3.put_object(Bucket=bucket.bucket, Key=key, Body=torn)
        disk.write_bytes(torn)


LATE_SLEEP_S = 20  # doc-late's agent outlasts doc-measured's whole path by this much


@pytest.mark.parametrize(("how", "said"), [("deleted", "missing"), ("corrupt", "corrupt")])
def test_a_request_lost_mid_run_releases_everything_and_keeps_what_was_measured(
    bench: Bench, how: str, said: str
) -> None:
    """doc-late's agent sleeps while doc-measured is measured and collected; then, right before
    doc-late's Collect, the run's request is deleted or torn. Collect names the document, Cleanup
    releases doc-late without it, doc-measured keeps its records, Finalize records the run.

    (Local mode serves one Lambda invocation at a time: the fault acts and returns, never waits.)"""
    measured, late = "doc-measured", f"doc-late-{how}"
    workloads = [
        {"profile": "std-randread-4k", "scale": 0.01, "targets": ["main"]},
        command("late-sleep", f"sleep {LATE_SLEEP_S}", ["slow"]),
    ]
    configs = [bench.local(measured), bench.local(late, target_id="slow")]
    document = request(f"wf-request-{how}", configs, workloads=workloads)
    started: dict[str, Any] = {}

    def damage() -> None:
        started["sibling_then"] = config_status(bench, started["run_id"], measured)
        damage_request(bench, started["run_id"], how)

    bench.set_faults([Fault(C, f"request_{how}", config_id=late, action=damage)])
    begun = time.monotonic()
    try:
        run_id, arn = bench.start(document)
        started["run_id"] = run_id
        execution = bench.session.wait(run_id, arn, timeout_s=RUN_TIMEOUT_S)
        fired = list(bench.session.faults.fired)
    finally:
        bench.set_faults(())
    assert execution.status == "SUCCEEDED", (execution.error, execution.cause)
    assert len(fired) == 1 and started["sibling_then"] in ("COLLECTED", "SUCCEEDED"), started
    output = execution.output or {}
    configs_out = {c["config_id"]: c for c in output["configs"]}
    assert output["status"] == "PARTIAL"
    kept = configs_out[measured]
    assert (kept["status"], kept["errors"], kept["leftovers"]) == ("succeeded", [], [])
    assert kept["records"] > 0 and len(bench.results_of(run_id, measured)) == kept["records"]
    lost = configs_out[late]
    assert (lost["status"], lost["records"], lost["leftovers"]) == ("failed", 0, [])
    (error,) = lost["errors"]
    assert (error["step"], error["error"]) == ("collect", "DocumentError")
    assert error["cause"].startswith(f"{request_key(run_id)}: {said}"), error
    assert per_config_states(execution, late)[-2:] == ["Collect", "Cleanup"]
    assert bench.store(run_id)["run"]["status"] == "PARTIAL"
    assert bench.settled_leaks(run_id) == []
    trust_row(f"request-{how}", 2, 1, len(fired), run_id, "PARTIAL", time.monotonic() - begun)


def per_config_states(execution: Any, config_id: str) -> list[str]:
    per_config, _ = transitions(execution.history)
    return per_config[config_id].states


# ---------------------------------------------------------------- the same idempotency key twice


def test_a_second_start_with_the_same_idempotency_key_starts_nothing(bench: Bench) -> None:
    api = local_api(bench)
    document = request("wf-same-key", [bench.local("same-key")])
    key = f"wf-same-key-{time.time_ns()}"  # DynamoDB Local and moto outlive nothing, but be sure
    before = bench.instance_count()
    begun = time.monotonic()
    with ThreadPoolExecutor(max_workers=2) as pool:  # a client retrying while its first call is in flight
        first, second = pool.map(lambda _: api.create_run(document, False, idempotency_key=key), range(2))
    assert isinstance(first, RunCreated) and isinstance(second, RunCreated)
    assert (first.run_id, first.execution_arn) == (second.run_id, second.execution_arn)
    run_id = first.run_id
    track(bench, run_id, document)
    execution = bench.session.wait(run_id, first.execution_arn, timeout_s=RUN_TIMEOUT_S)
    assert execution.status == "SUCCEEDED" and (execution.output or {}).get("status") == "SUCCEEDED"
    again = api.create_run(document, False, idempotency_key=key)  # after the run ended
    assert isinstance(again, RunCreated) and (again.run_id, again.replayed) == (run_id, True)
    sfn = boto3.client("stepfunctions", region_name=REGION)
    listed = sfn.list_executions(stateMachineArn=bench.session.state_machine_arn, maxResults=1000)
    assert [e["name"] for e in listed["executions"] if e["name"].startswith("wf-same-key")] == [run_id]
    assert bench.instance_count() == before + 1  # one config, one launch
    assert bench.settled_leaks(run_id) == []
    trust_row("same-idempotency-key", 1, 0, 0, run_id, "SUCCEEDED", time.monotonic() - begun)


# ---------------------------------------------------------------- one scheduled occurrence, two starts


def test_two_starts_of_one_scheduled_occurrence_run_once(bench: Bench) -> None:
    """What a scheduler retry after a lost StartExecution answer does: the same Input, twice."""
    arn = f"arn:aws:scheduler:{REGION}:123456789012:schedule/{schedule_group(bench.services.stack)}/wf"
    at = iso(datetime.now(UTC))
    document = {
        **request("wf-occurrence", [bench.local("occurrence")]),
        "scheduled": {"schedule_arn": arn, "scheduled_time": at},
    }
    before = bench.instance_count()
    begun = time.monotonic()
    starts = [bench.start(document), bench.start(document)]  # two executions, as the Scheduler names none
    executions = [
        bench.session.wait(run_id, exec_arn, timeout_s=RUN_TIMEOUT_S) for run_id, exec_arn in starts
    ]
    ran = [e for e in executions if e.status == "SUCCEEDED"]
    refused = [e for e in executions if e.status != "SUCCEEDED"]
    assert len(ran) == len(refused) == 1, [(e.run_id, e.status, e.error) for e in executions]
    assert (ran[0].output or {}).get("status") == "SUCCEEDED"
    (no,) = refused
    assert (no.status, no.error) == ("FAILED", "DuplicateStartError")
    assert ran[0].run_id in str(no.cause) and no.run_id in str(no.cause)
    _, run_level = transitions(no.history)
    assert run_level.states == ["Plan", "Rejected"]
    with pytest.raises(KeyError):
        bench.store(no.run_id)  # refused before it was recorded
    assert bench.instance_count() == before + 1
    for execution in executions:
        assert bench.settled_leaks(execution.run_id) == []
    trust_row(
        "same-occurrence", 1, 0, 0, ran[0].run_id, "SUCCEEDED + DuplicateStartError", time.monotonic() - begun
    )


# ---------------------------------------------------------------- a stop while Provision is under way


@pytest.mark.parametrize("provision_sees_the_stop", [True, False], ids=["provision-releases", "resweep"])
def test_a_stop_during_provision_leaves_no_late_launch(bench: Bench, provision_sees_the_stop: bool) -> None:
    """DELETE /runs/{id} while Provision is held before its launch; the launch is let go during
    SweepRun's wait, after its first sweep found nothing. Provision sees STOPPING and releases its
    own instance; with that check defeated (a read older than the stop), the second sweep does."""
    config = "stop-provision" if provision_sees_the_stop else "stop-provision-b"
    document = request(f"wf-{config}", [ebs(config, "gp3")])
    sweeper = ThreadSweeper()
    api, store = local_api(bench, sweeper), bench.services.store
    held, entered = threading.Event(), threading.Event()
    seen: dict[str, Any] = {}

    def hold() -> None:
        entered.set()
        held.wait(RUN_TIMEOUT_S)

    def settle(seconds: float) -> None:  # SweepRun's wait, between its two sweeps
        seen["window_s"] = seconds
        seen["first_sweep_left"] = list(instance_states(seen["run_id"]))
        held.set()
        try:
            if provision_sees_the_stop:
                wait_for(
                    lambda: (s := instance_states(seen["run_id"])) and all(x == "terminated" for x in s),
                    "Provision to release its late launch",
                )
            else:
                wait_for(lambda: "running" in instance_states(seen["run_id"]), "the late launch")
                time.sleep(1)  # Provision's last calls after its launch
        except AssertionError as exc:
            seen["settle"] = str(exc)
        seen["before_second_sweep"] = list(instance_states(seen["run_id"]))

    bench.set_faults([Fault(P, "hold", config_id=config, action=hold)])
    saved_sleep = bench.services.sleep
    bench.services.sleep = settle
    if not provision_sees_the_stop:
        store.run_status = lambda run_id: "RUNNING"  # type: ignore[method-assign]
    begun = time.monotonic()
    try:
        run_id, arn = bench.start(document)
        seen["run_id"] = run_id
        assert entered.wait(60), "Provision never started"
        stopped = api.stop_run(run_id)
        assert stopped.cleanup == "started" and stopped.status == "STOPPING"
        wait_for(lambda: bench.store(run_id)["run"]["status"] == "FAILED", "SweepRun to end the run", 120)
        fired = list(bench.session.faults.fired)
        for thread in sweeper.threads:
            thread.join(30)
    finally:
        held.set()
        bench.set_faults(())
        bench.services.sleep = saved_sleep
        store.__dict__.pop("run_status", None)
    assert store.run_status(run_id) == "FAILED"
    assert seen["first_sweep_left"] == [] and "settle" not in seen, seen  # the launch came after it
    assert 0 < seen["window_s"] <= IN_FLIGHT_S
    if provision_sees_the_stop:
        assert seen["before_second_sweep"] == ["terminated"]  # released by Provision itself
        assert config_status(bench, run_id, config) == "STOPPED"
    else:
        assert seen["before_second_sweep"] == ["running"]  # left to the second sweep
        assert config_status(bench, run_id, config) == "PROVISIONING"
    assert boto3.client("stepfunctions", region_name=REGION).describe_execution(executionArn=arn)[
        "status"
    ] in ("ABORTED", "FAILED")
    summary = bench.store(run_id)["run"]
    assert [(c["config_id"], c["errors"][0]["error"]) for c in summary["config_results"]] == [
        (config, "StoppedByApi")
    ]
    assert bench.settled_leaks(run_id) == []
    assert instance_states(run_id) == ["terminated"]
    name = "stop-in-provision" if provision_sees_the_stop else "stop-in-provision-b"
    trust_row(name, 1, 1, len(fired), run_id, "FAILED (stopped)", time.monotonic() - begun)


# ------------------------------------------------------------------------------ Spot interruptions
#
# One run: a healthy sibling and six configs interrupted at each stage, the way EC2 does it. A
# notice comes from the instance's own metadata service (ec2-metadata-mock), armed once the agent
# reaches the stage; a reclaimed instance is terminated with Server.SpotInstanceTermination. Every
# config must end with every planned repetition measured (those done before the interruption kept,
# the rest by the relaunch), nothing leaked, and the interruption in its record.

SPOT_REPETITIONS = 3
SPOT_STEP_S = 7  # longer than the agent's 5 s notice poll: a notice armed in a step is seen in it
SPOT_HEARTBEAT_S = 10  # seven agents at once on a shared 2-core machine: 3 s heartbeats can slip
SPOT_HOLD = f'case "$SB_CONFIG_ID" in spot-setup|spot-teardown) sleep {SPOT_STEP_S};; esac'


@dataclass(frozen=True)
class SpotCase:
    config_id: str
    point: str
    kind: str
    stage: str  # the stage the interruption record names
    detected_by: str
    relaunched: bool
    kept_at_least: int = 0  # repetitions the interrupted attempt completed and kept


SPOT_CASES = [
    SpotCase("spot-ready", "instance.ready", "spot_reclaimed", "ready", "instance-state", True),
    SpotCase("spot-setup", "agent.run", "spot_notice_setup", "setup", "notice", True),
    SpotCase(
        "spot-between", "agent.run", "spot_notice_between", "workloads", "notice", True, kept_at_least=1
    ),
    SpotCase("spot-inside", "agent.run", "spot_notice_inside", "workloads", "notice", True),
    SpotCase(
        "spot-teardown", "agent.run", "spot_notice_teardown", "teardown", "notice", False, SPOT_REPETITIONS
    ),
    # No notice seen: EC2 reclaims the instance mid-run, its heartbeats stop, the workflow finds why
    SpotCase("spot-reclaimed", "agent.run", "spot_reclaimed", "agent", "instance-state", True),
]
SPOT_SIBLING = "healthy-spot"


@pytest.fixture(scope="module")
def spot_run(bench: Bench) -> RunResult:
    configs = [bench.local(SPOT_SIBLING), *(bench.local(c.config_id) for c in SPOT_CASES)]
    for config in configs:
        config["setup"] = SPOT_HOLD
        config["teardown"] = SPOT_HOLD
    document = request(
        "wf-faults-spot",
        configs,
        workloads=[command("nap", f"sleep {SPOT_STEP_S}")],
        repetitions=SPOT_REPETITIONS,
        prewarm="dd",  # directory targets: nothing to read, the pre-warm stage passes at once
        max_concurrency=len(configs),
        command_poll_s=SPOT_HEARTBEAT_S,
    )
    document["purchase"] = "spot-then-on-demand"  # the first launch on Spot, a relaunch on-demand
    faults = [Fault(c.point, c.kind, config_id=c.config_id, times=1) for c in SPOT_CASES]
    started = time.monotonic()
    result = bench.run(document, faults)
    record_row("spot", len(configs), len(faults), result, time.monotonic() - started)
    for config_id, config in result.configs.items():  # what the run's record says, printed at the end
        for interruption in config.get("interruptions", []):
            SUMMARY["measured"][f"spot: {config_id}"] = interruption_line(interruption)
    return result


def _repetitions(bench: Bench, run_id: str, config_id: str) -> list[tuple[str, int]]:
    return sorted(
        (str(r["record"]["workload"]), int(r["record"]["repetition"]))
        for r in bench.results_of(run_id, config_id)
    )


def test_spot_run_ends_with_every_repetition_and_no_leak(bench: Bench, spot_run: RunResult) -> None:
    result = spot_run
    assert result.execution.status == "SUCCEEDED", (result.execution.error, result.execution.cause)
    assert result.status == "SUCCEEDED", {k: (c["status"], c["errors"]) for k, c in result.configs.items()}
    assert result.leaks == []
    sibling = result.configs[SPOT_SIBLING]
    assert (sibling["status"], sibling["errors"], sibling["interruptions"]) == ("succeeded", [], [])
    assert result.per_config[SPOT_SIBLING].states.count("Provision") == 1
    planned = _repetitions(bench, result.run_id, SPOT_SIBLING)
    assert [r for _, r in planned] == list(range(1, SPOT_REPETITIONS + 1)), planned
    for case in SPOT_CASES:
        assert result.fired_count(case.point, case.config_id) == 1, case


@pytest.mark.parametrize("case", SPOT_CASES, ids=lambda c: c.config_id)
def test_spot_interruption_keeps_and_relaunches(bench: Bench, spot_run: RunResult, case: SpotCase) -> None:
    result = spot_run
    config = result.configs[case.config_id]
    stored_state = {c["config_id"]: c for c in bench.store(result.run_id)["configs"]}[case.config_id]["state"]
    assert (config["status"], config["errors"], config["leftovers"]) == ("succeeded", [], []), (
        config,
        {k: stored_state.get(k) for k in ("item", "outcome", "collected", "interruptions", "errors")},
        result.per_config[case.config_id].states,
    )
    # Nothing lost: the same repetitions as the uninterrupted sibling, each stored once
    assert _repetitions(bench, result.run_id, case.config_id) == _repetitions(
        bench, result.run_id, SPOT_SIBLING
    )
    assert config["records"] == len(bench.results_of(result.run_id, case.config_id))
    [interruption] = config["interruptions"]
    assert (interruption["attempt"], interruption["market"]) == (1, "spot"), interruption
    assert (interruption["stage"], interruption["detected_by"]) == (case.stage, case.detected_by), (
        interruption
    )
    assert interruption["relaunched"] is case.relaunched, interruption
    assert len(interruption["steps_kept"]) >= case.kept_at_least, interruption
    if case.detected_by == "notice":
        assert interruption["action"] == "terminate" and interruption["action_time"], interruption
    if case.relaunched:  # spot-then-on-demand: the relaunch that measured the rest was on-demand
        assert (stored_state["item"]["attempt"], stored_state["resources"]["market"]) == (2, "on-demand")
        rerun = interruption["steps_rerun"]
        assert rerun is None or (rerun and not set(rerun) & set(interruption["steps_kept"])), interruption
    else:
        assert interruption["steps_rerun"] == [], interruption
    states = result.per_config[case.config_id].states
    assert states.count("Provision") == (2 if case.relaunched else 1), states
    assert states[-1] == "Cleanup", states
    # The run's record says what was interrupted
    stored = {c["config_id"]: c for c in bench.store(result.run_id)["run"]["config_results"]}
    assert stored[case.config_id]["interruptions"] == config["interruptions"]


def test_spot_healthy_path_stays_at_seven_transitions(spot_run: RunResult) -> None:
    """The relaunch is a Catch path: a config never interrupted goes through the same states as before."""
    states = spot_run.per_config[SPOT_SIBLING].states
    assert [s for s in states if s not in ("WaitUntilReady", "CheckReady", "IsReady")] == [
        "Provision",
        "RunAgent",
        "Collect",
        "Cleanup",
    ], states
    polls = states.count("CheckReady")
    assert len(states) == 4 + 3 * polls, states

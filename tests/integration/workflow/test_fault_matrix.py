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
Finalize handler bug (FinalizeFailed: execution FAILED, nothing leaked).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Any

import boto3
import pytest

from storagebench_local.adapters.faults import Fault

from .conftest import (
    MAX_TRANSITIONS_PER_CONFIG,
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


GROUPS = {
    g.name: g
    for g in (
        Group("provision", "gp2", run_faults=(retried(PLAN, "ThrottledError", 2),)),
        Group("ready", "gp3"),
        Group("start", "io1", run_faults=(retried(FIN, "ThrottledError", 1),)),
        Group("agent", "gp3"),
        Group("instance", "gp2"),
        Group("collect", "gp2"),
        Group("record", "gp3"),
        Group("cleanup", "io1", run_faults=(retried(FIN, "NotYetConsistentError", 2),)),
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
    assert result.run_level.states == ["Plan", "Configs", "Finalize"]
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
    assert states[-1] == ("CleanupFailed" if "cleanup" in broken else "Cleanup"), states
    assert ("RecordFailure" in states) == bool(broken & {"provision", "ready"}), states
    assert ("RecordAgentFailure" in states) == ("agent" in broken), states
    assert states.count("Provision") == 1  # retries stay inside their state: one transition each


@pytest.mark.parametrize("case", _case_params(with_bugs=True))
def test_config_errors(matrix: Matrix, case: Case) -> None:
    config = matrix.result(case.group).configs[case.config_id]
    got = [(e["step"], e["error"]) for e in config["errors"]]
    assert [step for step, _ in got] == [step for step, _ in case.errors], got
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
    assert result.run_level.states == ["Plan", "Configs", "Finalize", "FinalizeFailed"]
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
    rows = SUMMARY.get("matrix", {})
    if not set(GROUPS) <= set(rows):
        pytest.skip(f"only {sorted(rows)} of the groups ran (a selection)")
    assert sum(r["faults"] for r in rows.values()) == GROUP_FAULTS + 1  # + the overrunning command
    assert sum(r["leaks"] for r in rows.values()) == 0
    SUMMARY["measured"]["fault matrix: cases / faults injected / runs"] = (
        f"{len(CASES)} cases in {len(GROUPS)} runs + the overrun run: {GROUP_FAULTS + 1} faults; "
        f"+ {OTHER_FAULTS - 1} run-level handler bugs in 2 more runs"
    )

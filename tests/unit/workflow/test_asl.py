"""Static checks of statemachines/benchmark.asl.json against itself, template.yaml, the handlers
and the workflow's models and errors (no interpreter: the graph and the names are checked)."""

from __future__ import annotations

import copy
import inspect
import json
import re
from collections.abc import Iterator
from functools import cache
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from tests.support.modules import script

from storagebench.core import errors as workflow_errors
from storagebench.core.errors import RETRYABLE, WorkflowError
from storagebench.core.state import ConfigState, PlanResult, StepTiming
from storagebench.workflow import events
from storagebench_local.cfn import load_template

ROOT = Path(__file__).resolve().parents[3]
ASL = ROOT / "statemachines" / "benchmark.asl.json"
TEMPLATE = ROOT / "template.yaml"
PLACEHOLDER = re.compile(r"\$\{([A-Za-z0-9_:]+)\}")
LAMBDA_ERRORS = {
    "Lambda.ServiceException",
    "Lambda.AWSLambdaException",
    "Lambda.SdkClientException",
    "Lambda.TooManyRequestsException",
    "Lambda.Unknown",
}
STATES_ERRORS = {
    "States.ALL",
    "States.HeartbeatTimeout",
    "States.Timeout",
    "States.TaskFailed",
    "States.Permissions",
    "States.DataLimitExceeded",
    "States.Runtime",
}
CLEANUP = "Cleanup"
# Paths a caught error may lead through before Cleanup (see the brief of the Map).
RECOVERY = {"RecordFailure", "RecordAgentFailure", "Collect"}


@cache
def text() -> str:
    return ASL.read_text(encoding="utf-8")


def definition() -> dict[str, Any]:
    return copy.deepcopy(json.loads(text()))


@cache
def _template() -> dict[str, Any]:
    return load_template(TEMPLATE)


def template() -> dict[str, Any]:
    pytest.importorskip("yaml", reason="PyYAML is not installed (the local extra: pip install -e '.[local]')")
    return copy.deepcopy(_template())


def substitutions() -> dict[str, Any]:
    machine = template()["Resources"]["BenchmarkStateMachine"]
    assert machine["Type"] == "AWS::Serverless::StateMachine"
    assert machine["Properties"]["DefinitionUri"] == "statemachines/benchmark.asl.json"
    return dict(machine["Properties"]["DefinitionSubstitutions"])


def generated(state: dict[str, Any]) -> bool:
    """The Distributed Map, whose branch is the inline Map's, copied by scripts/asl_branches.py
    (tests/unit/infrastructure/test_asl_branches.py checks the copy): checked once, in the inline Map."""
    return state["Type"] == "Map" and state["ItemProcessor"]["ProcessorConfig"]["Mode"] == "DISTRIBUTED"


def walk(states: dict[str, Any], in_map: bool = False) -> Iterator[tuple[str, dict[str, Any], bool]]:
    """Every state, nested Map processors included (the Distributed Map's generated copy of the
    branch excepted), with whether it runs inside a Map."""
    for name, state in states.items():
        yield name, state, in_map
        if state["Type"] == "Map" and not generated(state):
            processor = state.get("ItemProcessor") or state.get("Iterator")
            yield from walk(processor["States"], True)


def all_states() -> list[tuple[str, dict[str, Any], bool]]:
    return list(walk(definition()["States"]))


def tasks() -> list[tuple[str, dict[str, Any], bool]]:
    return [(n, s, m) for n, s, m in all_states() if s["Type"] == "Task"]


def map_states_of(document: dict[str, Any]) -> dict[str, Any]:
    (configs,) = [s for s in document["States"].values() if s["Type"] == "Map" and not generated(s)]
    return configs["ItemProcessor"]["States"]  # type: ignore[no-any-return]


def map_states() -> dict[str, Any]:
    """The Map's states (a fresh copy each call: tests may edit it)."""
    return map_states_of(definition())


def function_of(state: dict[str, Any]) -> str:
    """The logical id of the function a Task invokes, from its ${<Name>Arn} placeholder."""
    name = state["Parameters"]["FunctionName"]
    match = PLACEHOLDER.fullmatch(name)
    assert match, f"FunctionName {name!r} is not a ${{...Arn}} substitution"
    return match.group(1).removesuffix("Arn")


# =================================================================================== statelint


def linter() -> Any:
    """statelint's API (a dev dependency; an interpreter without it skips the lint checks only), less
    its one known gap, as ``make lint`` runs it (scripts/statelint_asl.py: ReaderConfig.InputType)."""
    pytest.importorskip("statelint.linter", reason="statelint (a dev extra) is not installed")
    return SimpleNamespace(validate=script("statelint_asl").problems)


def test_statelint_passes() -> None:
    assert linter().validate(text()) == []


def test_statelint_passes_on_the_substituted_definition() -> None:
    arn = "arn:aws:lambda:us-east-1:123456789012:function:sb-{}"
    substituted = PLACEHOLDER.sub(
        lambda m: "aws" if m.group(1) == "Partition" else arn.format(m.group(1)), text()
    )
    assert "${" not in substituted
    assert linter().validate(substituted) == []


def test_statelint_is_live() -> None:
    """A broken definition is reported: the check above is not vacuous."""
    broken = definition()
    del map_states_of(broken)["Collect"]["Next"]
    assert linter().validate(json.dumps(broken))


# =================================================================================== retry and catch


def test_every_task_retries_named_errors_only() -> None:
    for name, state, _ in tasks():
        retries = state.get("Retry")
        assert retries, f"{name}: no Retry (Lambda's transient errors must be retried)"
        for retry in retries:
            names = set(retry["ErrorEquals"])
            assert not names & {"States.ALL", "States.TaskFailed"}, f"{name}: retries a wildcard"
            assert names <= set(RETRYABLE) | LAMBDA_ERRORS, f"{name}: retries {names - set(RETRYABLE)}"
            assert retry["MaxAttempts"] >= 1 and retry.get("BackoffRate", 2.0) >= 1.0


def test_transient_errors_are_retried_by_every_task() -> None:
    for name, state, _ in tasks():
        retried = {e for retry in state["Retry"] for e in retry["ErrorEquals"]}
        transient = {"ThrottledError", "NotYetConsistentError", "Lambda.ServiceException"}
        transient |= {"Lambda.TooManyRequestsException"}
        assert transient <= retried, f"{name} does not retry {transient - retried}"


def retried_by(state_name: str) -> set[str]:
    (state,) = [s for n, s, _ in all_states() if n == state_name]
    return {e for retry in state["Retry"] for e in retry["ErrorEquals"]}


def test_capacity_is_retried_by_provision_and_busy_resources_by_cleanup() -> None:
    assert "CapacityError" in retried_by("Provision")
    assert "ResourceBusyError" in retried_by("Cleanup")
    every = {e for _, s, _ in tasks() for retry in s["Retry"] for e in retry["ErrorEquals"]}
    assert set(RETRYABLE) <= every  # each retryable error is retried somewhere


def test_cleanup_retries_long_enough_for_efs_mount_targets() -> None:
    (busy,) = [r for r in map_states()[CLEANUP]["Retry"] if "ResourceBusyError" in r["ErrorEquals"]]
    total, interval = 0.0, float(busy["IntervalSeconds"])
    for _ in range(busy["MaxAttempts"]):
        total += min(interval, busy.get("MaxDelaySeconds", interval))
        interval *= busy.get("BackoffRate", 2.0)
    assert total >= 600  # EFS mount targets take minutes to go


def test_every_task_in_the_map_catches_everything() -> None:
    for name, state, in_map in tasks():
        if not in_map:
            continue
        catches = state.get("Catch", [])
        assert any("States.ALL" in c["ErrorEquals"] for c in catches), f"{name}: an error would end the Map"
        for catch in catches:
            # one ResultPath per catch site, so a later catch never overwrites an unrecorded error
            assert catch.get("ResultPath") in (
                "$.caught",
                "$.record_error",
                "$.caught_collect",
                "$.caught_cleanup",
                "$.interrupted",  # Cleanup's ConfigInterruptedError, back to Provision (a Spot relaunch)
            ), f"{name}: {catch}"
            field = catch["ResultPath"].removeprefix("$.")
            assert field in ConfigState.model_fields


def test_a_pending_caught_error_is_never_overwritten() -> None:
    states = map_states()
    entered_with_pending = {
        catch["Next"]
        for state in states.values()
        for catch in state.get("Catch", [])
        if catch.get("ResultPath") == "$.record_error"
    }
    assert entered_with_pending == {"Collect", CLEANUP}
    overwriting = sorted(
        name
        for name in entered_with_pending
        if any(c.get("ResultPath") in ("$.caught", "$.record_error") for c in states[name].get("Catch", []))
    )
    assert overwriting == []


def test_plan_rejects_invalid_requests_guardrails_and_duplicate_scheduled_starts() -> None:
    (plan,) = [s for n, s, _ in all_states() if n == "Plan"]
    (catch,) = plan["Catch"]
    assert set(catch["ErrorEquals"]) == {"InvalidRequestError", "GuardrailError", "DuplicateStartError"}
    assert definition()["States"][catch["Next"]]["Type"] == "Fail"
    assert "ResultPath" not in catch  # the Fail state reports the refusal's Error and Cause


def test_sweep_run_is_told_when_the_map_stopped() -> None:
    """Iterations' Provision and CheckReady invocations outlive a failed Map: SweepRun sweeps again
    once they must have ended, counting from when it was entered."""
    sweep = definition()["States"]["SweepRun"]
    assert sweep["Parameters"]["Payload"]["stopped_at.$"] == "$$.State.EnteredTime"


def test_error_names_exist() -> None:
    classes = {
        name
        for name, value in inspect.getmembers(workflow_errors, inspect.isclass)
        if issubclass(value, WorkflowError) and value is not WorkflowError
    }
    assert set(RETRYABLE) <= classes
    for name, state, _ in all_states():
        for block in (*state.get("Retry", []), *state.get("Catch", [])):
            for error in block["ErrorEquals"]:
                known = error in classes or error in STATES_ERRORS or error in LAMBDA_ERRORS
                assert known, (
                    f"{name} names {error!r}: not a class in workflow/errors.py, States.* or Lambda.*"
                )


# =================================================================================== the Map's paths


def successors(state: dict[str, Any]) -> list[str]:
    following = [state["Next"]] if "Next" in state else []
    if state["Type"] == "Choice":
        following += [choice["Next"] for choice in state["Choices"]]
        following += [state["Default"]] if "Default" in state else []
    following += [catch["Next"] for catch in state.get("Catch", [])]
    return following


def ends_here(state: dict[str, Any]) -> bool:
    """Whether the iteration can end at this state (normally, or by an error nothing catches)."""
    if state.get("End") or state["Type"] in ("Succeed", "Fail"):
        return True
    if state["Type"] == "Choice" and "Default" not in state:
        return True  # States.NoChoiceMatched
    if state["Type"] in ("Task", "Map", "Parallel"):
        return not any("States.ALL" in c["ErrorEquals"] for c in state.get("Catch", []))
    return False


def escapes(states: dict[str, Any], start: str) -> list[list[str]]:
    """Paths from ``start`` that end the iteration without passing through Cleanup."""
    found: list[list[str]] = []
    stack: list[list[str]] = [[start]]
    seen: set[str] = set()
    while stack:
        path = stack.pop()
        name = path[-1]
        if name == CLEANUP or name in seen:
            continue
        seen.add(name)
        if ends_here(states[name]):
            found.append(path)
        stack.extend([*path, following] for following in successors(states[name]))
    return found


def after_cleanup(states: dict[str, Any]) -> set[str]:
    """States reachable only once Cleanup ran (its own failure handler)."""
    reached: set[str] = set()
    stack = successors(states[CLEANUP])
    while stack:
        name = stack.pop()
        if name not in reached and name != CLEANUP:
            reached.add(name)
            stack.extend(successors(states[name]))
    return reached


def test_every_path_in_the_map_reaches_cleanup() -> None:
    states = map_states()
    assert CLEANUP in states
    for name in set(states) - {CLEANUP} - after_cleanup(states):
        assert escapes(states, name) == [], f"from {name} an iteration can end without Cleanup"


def test_every_catch_in_the_map_leads_to_cleanup_through_recovery_states_only() -> None:
    states = map_states()
    for name, state in states.items():
        if name == CLEANUP:
            continue
        for catch in state.get("Catch", []):
            target = catch["Next"]
            assert target == CLEANUP or target in RECOVERY, f"{name} catches into {target}"


def test_the_path_check_finds_a_missing_cleanup() -> None:
    states = map_states()
    states["Collect"] = {**states["Collect"], "Next": "CleanupFailed"}  # skips Cleanup
    assert escapes(states, "Provision")
    states = map_states()
    states["CheckReady"] = {**states["CheckReady"], "Catch": []}  # an error ends the iteration
    assert escapes(states, "Provision")


def test_cleanup_failure_reaches_finalize_as_state_and_caught() -> None:
    states = map_states()
    (catch,) = [c for c in states[CLEANUP]["Catch"] if c["Next"] != "Provision"]  # not a Spot relaunch
    assert catch["ErrorEquals"] == ["States.ALL"] and catch["ResultPath"] == "$.caught_cleanup"
    handler = states[catch["Next"]]
    assert handler["Type"] == "Pass" and handler.get("End") is True
    assert "OutputPath" not in handler and "ResultPath" not in handler and "Parameters" not in handler


def test_is_ready_loops_through_the_wait_until_ready() -> None:
    states = map_states()
    choice = states["IsReady"]
    (ready,) = choice["Choices"]
    assert (ready["Variable"], ready["StringEquals"], ready["Next"]) == ("$.ready.state", "ready", "RunAgent")
    assert states[choice["Default"]]["Type"] == "Wait"
    assert states[states[choice["Default"]]["Next"]] is states["CheckReady"]


# =================================================================================== timing


def test_run_agent_waits_for_its_task_token_with_heartbeat_and_timeout() -> None:
    run_agent = map_states()["RunAgent"]
    assert run_agent["Resource"].endswith(":states:::lambda:invoke.waitForTaskToken")
    assert run_agent["HeartbeatSecondsPath"] == "$.item.timing.heartbeat_s"
    # the state's own limit has slack over the SSM command's, so the command reports first
    assert run_agent["TimeoutSecondsPath"] == "$.item.timing.task_timeout_s"
    assert "HeartbeatSeconds" not in run_agent and "TimeoutSeconds" not in run_agent
    payload = run_agent["Parameters"]["Payload"]
    assert payload == {"state.$": "$", "task_token.$": "$$.Task.Token"}
    assert run_agent["ResultPath"] == "$.outcome" and "OutputPath" not in run_agent
    for path in (run_agent["HeartbeatSecondsPath"], run_agent["TimeoutSecondsPath"]):
        assert path.removeprefix("$.item.timing.") in StepTiming.model_fields


def test_only_run_agent_waits_for_a_token() -> None:
    waiting = [n for n, s, _ in tasks() if s["Resource"].endswith(".waitForTaskToken")]
    assert waiting == ["RunAgent"]


def test_wait_states_use_the_request_timing() -> None:
    waits = [(n, s) for n, s, _ in all_states() if s["Type"] == "Wait"]
    assert waits
    for name, state in waits:
        assert "Seconds" not in state and "Timestamp" not in state, f"{name} waits a fixed time"
        path = state["SecondsPath"]
        assert path.startswith("$.item.timing."), f"{name}: {path}"
        assert path.removeprefix("$.item.timing.") in StepTiming.model_fields


# =================================================================================== documents


def test_the_map_iterates_the_plans_work_items() -> None:
    (configs,) = [s for s in definition()["States"].values() if s["Type"] == "Map" and not generated(s)]
    assert configs["ItemsPath"] == "$.items" and configs["MaxConcurrencyPath"] == "$.max_concurrency"
    assert {"items", "max_concurrency"} <= set(PlanResult.model_fields)
    assert configs["ItemSelector"] == {"item.$": "$$.Map.Item.Value"}
    assert configs["ResultPath"] == "$.configs"
    finalize = definition()["States"][configs["Next"]]
    payload = finalize["Parameters"]["Payload"]
    for key, path in payload.items():
        field = path.removeprefix("$.")
        assert field == "configs" or field in PlanResult.model_fields, key


def test_lambda_tasks_return_their_payload() -> None:
    for name, state, _ in tasks():
        if name == "RunAgent":
            continue
        assert state["Resource"].endswith(":states:::lambda:invoke"), name
        assert state.get("OutputPath") == "$.Payload", f"{name} would pass the invoke envelope on"


def handler_keys(function_dir: Path) -> set[str]:
    """The event fields a handler reads: its event model's (``parse_event(Model, event)``), or the
    keys it indexes itself."""
    source = (function_dir / "app.py").read_text(encoding="utf-8")
    models = re.findall(r"parse_event\((\w+), event\)", source)
    fields = {name for model in models for name in getattr(events, model).model_fields}
    return fields | set(re.findall(r'event\["(\w+)"\]', source))


def test_payloads_carry_what_each_handler_reads() -> None:
    functions = template()["Resources"]
    for name, state, _ in tasks():
        properties = functions[function_of(state)]["Properties"]
        keys = handler_keys(ROOT / properties["CodeUri"])
        parameters = state["Parameters"]
        if "Payload.$" in parameters:
            assert parameters["Payload.$"] == "$"
            assert keys == set(), f"{name} sends the state but its handler reads {keys}"
        else:
            sent = {key.removesuffix(".$") for key in parameters["Payload"]}
            assert sent == keys, f"{name} sends {sorted(sent)}, its handler reads {sorted(keys)}"


# =================================================================================== template


def test_placeholders_are_exactly_the_definition_substitutions() -> None:
    used = set(PLACEHOLDER.findall(text()))
    assert used == set(substitutions())


def test_every_substituted_function_is_a_serverless_function_with_an_app() -> None:
    resources = template()["Resources"]
    for key, value in substitutions().items():
        if key == "Partition":
            assert value == {"Ref": "AWS::Partition"}
            continue
        if key == "ArtifactsBucket":  # where the Distributed Map's ItemReader finds the work items
            assert value == {"Ref": "ArtifactsBucket"}
            continue
        assert key.endswith("FunctionArn")
        assert value == {"Fn::GetAtt": [key.removesuffix("Arn"), "Arn"]}, key
        function = resources[key.removesuffix("Arn")]
        assert function["Type"] == "AWS::Serverless::Function"
        code_uri = function["Properties"]["CodeUri"]
        assert re.fullmatch(r"functions/[a-z_]+/", code_uri), code_uri
        app = ROOT / code_uri / "app.py"
        assert app.is_file(), app
        assert function["Properties"]["Handler"] == "app.handler"
        assert re.search(r"^def handler\(event", app.read_text(encoding="utf-8"), re.MULTILINE)


def test_the_state_machine_may_invoke_every_function_it_names() -> None:
    machine = template()["Resources"]["BenchmarkStateMachine"]["Properties"]
    invokable = {
        policy["LambdaInvokePolicy"]["FunctionName"]["Ref"]
        for policy in machine["Policies"]
        if isinstance(policy, dict) and "LambdaInvokePolicy" in policy
    }
    named = {key.removesuffix("Arn") for key in substitutions() if key.endswith("FunctionArn")}
    assert named == invokable


def test_every_function_directory_is_in_the_template() -> None:
    resources = template()["Resources"]
    code_uris = {
        r["Properties"]["CodeUri"] for r in resources.values() if r["Type"] == "AWS::Serverless::Function"
    }
    directories = {f"functions/{p.parent.name}/" for p in (ROOT / "functions").glob("*/app.py")}
    assert directories == code_uris


@pytest.mark.parametrize("name", ["Plan", "Provision", "CheckReady", "Collect", "Cleanup", "Finalize"])
def test_each_step_calls_its_own_function(name: str) -> None:
    (state,) = [s for n, s, _ in all_states() if n == name]
    assert function_of(state) == f"{name}Function"

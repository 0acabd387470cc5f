"""The Lambda handlers: thin Powertools wrappers that parse the event into its model, call their
step with the wired services and return the model's JSON dump."""

from __future__ import annotations

import importlib
import json
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from pydantic import ValidationError
from tests.support import workflow_fakes as wf

from storagebench.core.errors import InvalidRequestError, ResourceBusyError
from storagebench.core.state import AgentOutcome, ConfigResult, ConfigState, ErrorInfo, PlanResult, RunSummary
from storagebench.wiring import services as wiring
from storagebench.workflow import artifact_keys
from storagebench.workflow.steps import start_agent
from storagebench.workflow.steps.shared import with_pending_errors

pytestmark = pytest.mark.filterwarnings("ignore:No application metrics to publish:UserWarning")

Load = Callable[[str], ModuleType]
STATE_HANDLERS = ["provision", "check_ready", "collect", "cleanup"]
ALL = [
    "activator",  # invoked by CheckReady inside the VPC (File Gateway activation key)
    "plan",
    "provision",
    "check_ready",
    "start_agent",
    "record_failure",
    "collect",
    "cleanup",
    "finalize",
    "sweep_run",
    "janitor",  # on its own schedule, not in the state machine
    "api",  # behind the HTTP API (its routes: tests/unit/api)
]


def plan_event(**overrides: Any) -> dict[str, Any]:
    """What the Plan state sends: the execution input, its name and start time."""
    return {
        "request": wf.request_doc(),
        "run_id": "run-1",
        "started_at": "2026-11-21T17:00:00.000Z",
        **overrides,
    }


def first_item(load: Load, context: Any) -> dict[str, Any]:
    planned = load("plan").handler(plan_event(), context)
    return {"item": planned["items"][0]}  # the Map's ItemSelector


def json_round_trip(document: Any) -> Any:
    """What Step Functions keeps of a handler's answer."""
    return json.loads(json.dumps(document))


def test_every_function_is_loaded_with_a_handler(load_app: Load) -> None:
    directories = sorted(
        p.parent.name for p in Path(__file__).resolve().parents[3].glob("functions/*/app.py")
    )
    assert directories == sorted(ALL)
    modules = {name: load_app(name) for name in ALL}
    assert len({id(m) for m in modules.values()}) == len(ALL)  # unique module names, no `app` clash
    assert all(callable(m.handler) for m in modules.values())


def test_wiring_is_restored_after_each_test(fakes: Any) -> None:
    assert wiring.services() is fakes.services  # configured by the fixture, reset after it


# =================================================================================== plan


def test_plan_handler_plans_the_run(load_app: Load, fakes: Any, context: Any) -> None:
    answer = load_app("plan").handler(plan_event(), context)
    planned = PlanResult.model_validate(answer)
    assert answer == json_round_trip(planned.model_dump(mode="json"))
    assert [i.config_id for i in planned.items] == ["alpha", "beta", "gamma"]
    assert planned.max_concurrency == 2 and planned.started_at == "2026-11-21T17:00:00Z"
    assert fakes.store.runs["run-1"]["status"] == "RUNNING"
    assert artifact_keys.request_key("run-1") in fakes.artifacts.documents


def test_plan_handler_raises_the_error_the_state_machine_catches(
    load_app: Load, fakes: Any, context: Any
) -> None:
    event = plan_event(request={**wf.request_doc(), "repetitions": 0})
    with pytest.raises(InvalidRequestError, match="repetitions"):
        load_app("plan").handler(event, context)
    assert fakes.store.runs == {}


def test_plan_handler_needs_the_execution_name(load_app: Load, fakes: Any, context: Any) -> None:
    event = plan_event()
    del event["run_id"]
    with pytest.raises(KeyError, match="run_id"):
        load_app("plan").handler(event, context)


# =================================================================================== state handlers


def spy_on(monkeypatch: pytest.MonkeyPatch, step: str, fakes: Any) -> list[ConfigState]:
    """Replace a step by one that checks what the handler passes and answers a known model."""
    received: list[ConfigState] = []

    def fake_step(state: ConfigState, services: Any) -> Any:
        assert isinstance(state, ConfigState)
        assert services is fakes.services
        received.append(state)
        if step == "cleanup":
            return ConfigResult(
                run_id=state.item.run_id,
                config_id=state.item.config_id,
                status="partial",
                records=1,
                leftovers=["vol-1"],
            )
        return state.model_copy(update={"errors": [ErrorInfo(step=step, error="marker", cause="x")]})

    # each handler calls its step through its module (storagebench.workflow.steps.<name>)
    monkeypatch.setattr(importlib.import_module(f"storagebench.workflow.steps.{step}"), step, fake_step)
    return received


@pytest.mark.parametrize("name", STATE_HANDLERS)
def test_state_handlers_parse_the_state_call_their_step_and_dump_the_answer(
    name: str, load_app: Load, fakes: Any, context: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    event = first_item(load_app, context)
    received = spy_on(monkeypatch, name, fakes)
    answer = load_app(name).handler(event, context)
    (state,) = received
    assert state == ConfigState.model_validate(event)
    model = ConfigResult if name == "cleanup" else ConfigState
    assert answer == json_round_trip(model.model_validate(answer).model_dump(mode="json"))
    if name != "cleanup":
        assert answer["errors"] == [{"step": name, "error": "marker", "cause": "x"}]


@pytest.mark.parametrize("name", STATE_HANDLERS)
@pytest.mark.parametrize(
    "edit",
    [
        lambda e: {},  # no item
        lambda e: {**e, "unexpected": 1},  # a field no model has
        lambda e: {**e, "ready": {"state": "maybe", "reason": ""}},  # not a readiness state
        lambda e: {"item": {**e["item"], "timing": {}}},  # timing lost
    ],
)
def test_state_handlers_refuse_an_invalid_state(
    name: str, edit: Callable[[dict[str, Any]], dict[str, Any]], load_app: Load, fakes: Any, context: Any
) -> None:
    event = edit(first_item(load_app, context))
    with pytest.raises(ValidationError):
        load_app(name).handler(event, context)
    assert fakes.compute.launches == [] and fakes.agents.stops == []


def test_handlers_run_one_config_through_the_whole_workflow(load_app: Load, fakes: Any, context: Any) -> None:
    """Plan -> Provision -> CheckReady -> RunAgent -> Collect -> Cleanup -> Finalize, as the ASL
    passes documents between them (JSON in between, ResultPath $.outcome for the callback)."""
    event = first_item(load_app, context)
    state = load_app("provision").handler(event, context)
    assert state["resources"]["instance_id"] == "i-0001"
    state = load_app("check_ready").handler(json_round_trip(state), context)
    assert state["ready"]["state"] == "ready"

    answer = load_app("start_agent").handler({"state": state, "task_token": "tok-123"}, context)
    assert ConfigState.model_validate(answer).agent is not None
    (call,) = fakes.agents.starts
    assert call.task_token == "tok-123" and call.state == ConfigState.model_validate(state)
    state = {**state, "outcome": {"status": "completed", "exit_code": 0}}  # the callback, not the answer

    wf.write_agent_output(
        wf.agent_output_dir(fakes, ConfigState.model_validate(state)), "alpha", ["data", "shared", "scratch"]
    )
    state = load_app("collect").handler(json_round_trip(state), context)
    assert state["collected"]["status"] == "ok" and state["collected"]["records"] == 3

    result = load_app("cleanup").handler(json_round_trip(state), context)
    assert ConfigResult.model_validate(result).status == "succeeded"

    summary = load_app("finalize").handler(
        {"run_id": "run-1", "suite": "suite-a", "started_at": "2026-11-21T17:00:00Z", "configs": [result]},
        context,
    )
    assert RunSummary.model_validate(summary).status == "SUCCEEDED"
    assert summary == json_round_trip(RunSummary.model_validate(summary).model_dump(mode="json"))
    assert fakes.store.runs["run-1"]["status"] == "SUCCEEDED"


def test_cleanup_handler_reports_leftovers(load_app: Load, fakes: Any, context: Any) -> None:
    state = load_app("provision").handler(first_item(load_app, context), context)
    fakes.compute.leftover_ids = ["i-0001"]
    result = load_app("cleanup").handler(state, context)
    assert result["leftovers"] == ["i-0001"] and result["status"] == "failed"


def test_cleanup_handler_lets_busy_resources_through_for_the_retry(
    load_app: Load, fakes: Any, context: Any
) -> None:
    state = load_app("provision").handler(first_item(load_app, context), context)
    fakes.filesystems.busy = {"fs-0001"}
    with pytest.raises(ResourceBusyError):
        load_app("cleanup").handler(state, context)


# =================================================================================== start agent


def test_start_agent_handler_reads_state_and_task_token(
    load_app: Load, fakes: Any, context: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[tuple[ConfigState, str, Any]] = []

    def fake_start(state: ConfigState, task_token: str, services: Any) -> ConfigState:
        calls.append((state, task_token, services))
        return state

    monkeypatch.setattr(start_agent, "start_agent", fake_start)
    event = first_item(load_app, context)
    answer = load_app("start_agent").handler({"state": event, "task_token": "AQB-token"}, context)
    ((state, token, services),) = calls
    assert state == ConfigState.model_validate(event) and token == "AQB-token"
    assert services is fakes.services
    assert answer == ConfigState.model_validate(event).model_dump(mode="json")


@pytest.mark.parametrize(
    ("edit", "error"),
    [
        (lambda e: {"state": e["state"]}, KeyError),  # no task token
        (lambda e: {"task_token": "t"}, KeyError),  # no state
        (lambda e: e["state"], KeyError),  # the state alone, as the other handlers get it
        (lambda e: {**e, "state": {**e["state"], "bogus": True}}, ValidationError),
    ],
)
def test_start_agent_handler_refuses_an_invalid_event(
    edit: Callable[[dict[str, Any]], dict[str, Any]],
    error: type[Exception],
    load_app: Load,
    fakes: Any,
    context: Any,
) -> None:
    event = {"state": first_item(load_app, context), "task_token": "t"}
    with pytest.raises(error):
        load_app("start_agent").handler(edit(event), context)
    assert fakes.agents.starts == []


# =================================================================================== record failure


def test_record_failure_handler_strips_caught_from_the_state(
    load_app: Load, fakes: Any, context: Any
) -> None:
    caught = {
        "Error": "NotReadyError",
        "Cause": json.dumps({"errorMessage": "instance i-0001 is terminated", "errorType": "NotReadyError"}),
    }
    state = load_app("provision").handler(first_item(load_app, context), context)
    event = {"state": {**state, "caught": caught}, "caught": caught}  # what RecordFailure's Payload sends
    answer = load_app("record_failure").handler(event, context)
    recorded = ConfigState.model_validate(answer)
    assert recorded.caught is None
    assert recorded.errors == [
        ErrorInfo(step="ready", error="NotReadyError", cause="instance i-0001 is terminated")
    ]
    assert answer == json_round_trip(recorded.model_dump(mode="json"))
    assert fakes.store.statuses("alpha")[-1] == "FAILING"
    # Collect and Cleanup fold pending errors: the one recorded here is not counted twice.
    assert with_pending_errors(recorded).errors == recorded.errors


def test_record_failure_handler_marks_a_lost_agent(load_app: Load, fakes: Any, context: Any) -> None:
    state = load_app("provision").handler(first_item(load_app, context), context)
    state = load_app("check_ready").handler(state, context)
    caught = {"Error": "States.HeartbeatTimeout", "Cause": ""}
    answer = load_app("record_failure").handler(
        {"state": {**state, "caught": caught}, "caught": caught}, context
    )
    assert ConfigState.model_validate(answer).outcome == AgentOutcome(status="lost", detail="")


def test_record_failure_handler_keeps_a_pending_record_error(
    load_app: Load, fakes: Any, context: Any
) -> None:
    """RecordAgentFailure failed before (record_error set); the next RecordFailure keeps it pending."""
    state = first_item(load_app, context)
    pending = {"Error": "Lambda.ServiceException", "Cause": "x"}
    caught = {"Error": "CapacityError", "Cause": "y"}
    event = {"state": {**state, "caught": caught, "record_error": pending}, "caught": caught}
    answer = load_app("record_failure").handler(event, context)
    assert answer["record_error"] == pending and answer["caught"] is None


@pytest.mark.parametrize(
    ("edit", "error"),
    [
        (lambda e: {"state": e["state"]}, KeyError),  # no caught
        (lambda e: {"caught": e["caught"]}, KeyError),  # no state
        (lambda e: {**e, "state": {**e["state"], "item": None}}, ValidationError),
        (lambda e: {**e, "state": {**e["state"], "errors": [{"step": "x"}]}}, ValidationError),
    ],
)
def test_record_failure_handler_refuses_an_invalid_event(
    edit: Callable[[dict[str, Any]], dict[str, Any]],
    error: type[Exception],
    load_app: Load,
    fakes: Any,
    context: Any,
) -> None:
    caught = {"Error": "E", "Cause": "c"}
    event = {"state": {**first_item(load_app, context), "caught": caught}, "caught": caught}
    with pytest.raises(error):
        load_app("record_failure").handler(edit(event), context)
    assert fakes.store.configs == []


# =================================================================================== finalize


def finalize_event(configs: list[dict[str, Any]]) -> dict[str, Any]:
    return {"run_id": "run-1", "suite": "suite-a", "started_at": "2026-11-21T17:00:00Z", "configs": configs}


def test_finalize_handler_accepts_results_and_failed_cleanups(
    load_app: Load, fakes: Any, context: Any
) -> None:
    state = load_app("provision").handler(first_item(load_app, context), context)
    failed_cleanup = {**state, "caught_cleanup": {"Error": "States.Timeout", "Cause": "cleanup timed out"}}
    done = ConfigResult(run_id="run-1", config_id="beta", status="succeeded", records=12)
    fakes.clock.advance(90)
    answer = load_app("finalize").handler(
        finalize_event([done.model_dump(mode="json"), failed_cleanup]), context
    )
    summary = RunSummary.model_validate(answer)
    assert answer == json_round_trip(summary.model_dump(mode="json"))
    assert [(c.config_id, c.status) for c in summary.configs] == [("beta", "succeeded"), ("alpha", "failed")]
    assert summary.configs[1].errors == [
        ErrorInfo(step="cleanup", error="States.Timeout", cause="cleanup timed out")
    ]
    assert summary.status == "PARTIAL" and summary.records == 12
    assert summary.ended_at == "2026-11-21T17:01:30Z"
    assert fakes.store.finished == [summary]
    assert fakes.compute.terminated[-1][1:] == ("run-1", "alpha")  # released once more


@pytest.mark.parametrize(
    ("edit", "error"),
    [
        (lambda e: {**e, "configs": [{"run_id": "run-1", "config_id": "a"}]}, ValidationError),
        (lambda e: {**e, "configs": [{**e["configs"][0], "status": "done"}]}, ValidationError),
        (lambda e: {**e, "configs": [{**e["configs"][0], "extra": 1}]}, ValidationError),
        (lambda e: {k: v for k, v in e.items() if k != "suite"}, KeyError),
    ],
)
def test_finalize_handler_refuses_an_invalid_event(
    edit: Callable[[dict[str, Any]], dict[str, Any]],
    error: type[Exception],
    load_app: Load,
    fakes: Any,
    context: Any,
) -> None:
    result = ConfigResult(run_id="run-1", config_id="a", status="succeeded", records=1).model_dump(
        mode="json"
    )
    with pytest.raises(error):
        load_app("finalize").handler(edit(finalize_event([result])), context)
    assert fakes.store.finished == []


def test_finalize_handler_with_no_configs_is_failed(load_app: Load, fakes: Any, context: Any) -> None:
    answer = load_app("finalize").handler(finalize_event([]), context)
    assert answer["status"] == "FAILED" and answer["configs"] == []

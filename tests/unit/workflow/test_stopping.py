"""Issue 11, a stop cannot leave a late launch behind; and a step that needs the request says which
document is gone or corrupt (a WorkflowError the state machine routes to cleanup).

A stop records the run STOPPING, then stops the execution; Step Functions lets a Provision invoked
before it run to its end. That Provision sees STOPPING once its launch completes and releases what
it made; SweepRun sweeps at once and again once such an invocation must have ended."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

import pytest
from tests.support import workflow_fakes as wf

from storagebench.core.clock import iso
from storagebench.core.errors import DocumentError, RunStoppedError, WorkflowError
from storagebench.core.state import ConfigState, LaunchSpec, Resources
from storagebench.core.tags import TAG_CONFIG, TAG_RUN
from storagebench.request import parse_request
from storagebench.workflow import artifact_keys
from storagebench.workflow.bindings import launch_spec
from storagebench.workflow.ports import IN_FLIGHT_S
from storagebench.workflow.steps.check_ready import check_ready
from storagebench.workflow.steps.cleanup import cleanup
from storagebench.workflow.steps.collect import collect
from storagebench.workflow.steps.provision import provision
from storagebench.workflow.steps.shared import tags
from storagebench.workflow.steps.start_agent import start_agent
from storagebench.workflow.steps.sweep_run import abort_run

StateOf = Callable[..., ConfigState]


@dataclass
class TaggedCompute(wf.FakeCompute):
    """Terminates by tag, as EC2 does: what a lost or late launch made is found without its id."""

    alive: dict[str, tuple[str, str]] = field(default_factory=dict)  # instance -> (run, config)
    terminated_at: list[tuple[str, str, Any]] = field(default_factory=list)
    clock: Any = None

    def launch(self, spec: LaunchSpec) -> Resources:
        launched = super().launch(spec)
        self.alive[str(launched.instance_id)] = (spec.tags[TAG_RUN], spec.tags[TAG_CONFIG])
        return launched

    def terminate(self, resources: Resources, run_id: str, config_id: str) -> list[str]:
        super().terminate(resources, run_id, config_id)
        self.terminated_at.append((run_id, config_id, self.clock.now() if self.clock else None))
        gone = [i for i, owner in self.alive.items() if owner == (run_id, config_id)]
        for instance_id in gone:
            del self.alive[instance_id]
        return gone

    def leftovers(self, run_id: str, config_id: str) -> list[str]:
        return [i for i, owner in self.alive.items() if owner == (run_id, config_id)]


@pytest.fixture
def tagged(fakes: Any) -> TaggedCompute:
    compute = TaggedCompute(clock=fakes.clock)
    fakes.services.compute = fakes.compute = compute
    return compute


# =================================================================================== provision


@pytest.mark.parametrize("status", ["STOPPING", "FAILED"])
def test_a_launch_completing_after_the_stop_is_released_by_provision(
    state_of: StateOf, fakes: Any, tagged: TaggedCompute, status: str
) -> None:
    state = state_of("alpha")  # Plan recorded the run RUNNING
    fakes.store.runs["run-1"]["status"] = status  # the stop (or its sweep) got there while launching
    with pytest.raises(RunStoppedError, match=f"run run-1 is {status}") as stopped:
        provision(state, fakes.services)
    assert isinstance(stopped.value, WorkflowError)  # routed by name (RecordFailure, Cleanup), not a crash
    assert tagged.alive == {}  # the instance it launched is gone
    assert fakes.filesystems.live == {} and len(fakes.filesystems.deleted) == 2  # its EFS and FSx too
    assert "i-0001" in str(stopped.value)
    assert fakes.store.statuses("alpha") == ["PROVISIONING", "STOPPED"]  # launched, then released
    (stored, _) = fakes.store.configs[-1]
    assert stored.cleanup is not None and "i-0001" in stored.cleanup.deleted
    assert [e.error for e in stored.errors] == ["RunStoppedError"]


def test_a_running_run_is_provisioned_as_before(state_of: StateOf, fakes: Any, tagged: TaggedCompute) -> None:
    state = provision(state_of("alpha"), fakes.services)
    assert state.resources.instance_id == "i-0001" and set(tagged.alive) == {"i-0001"}
    assert fakes.filesystems.deleted == []


def test_the_stop_marks_only_a_running_run(fakes: Any, plan: Any) -> None:
    plan()
    assert fakes.store.mark_stopping("run-1", "2026-11-21T17:05:00Z")["status"] == "STOPPING"
    assert fakes.store.mark_stopping("run-1", "2026-11-21T17:06:00Z") is None
    assert fakes.store.mark_stopping("never-planned", "2026-11-21T17:06:00Z") is None


# =================================================================================== SweepRun


def _late_launch(fakes: Any, tagged: TaggedCompute, state_of: StateOf) -> Callable[[float], None]:
    """A sleep during which the Provision invoked before the stop completes its launch."""
    state = state_of("beta")
    spec_of = launch_spec(
        parse_request(wf.request_doc()).config("beta"), "run-1", tags(fakes.services, state.item)
    )

    def sleep(seconds: float) -> None:
        fakes.clock.advance(seconds)
        tagged.launch(spec_of)

    return sleep


def test_sweep_run_sweeps_again_once_what_was_under_way_has_ended(
    state_of: StateOf, fakes: Any, tagged: TaggedCompute
) -> None:
    fakes.services.sleep = _late_launch(fakes, tagged, state_of)
    stopped_at = fakes.clock.now()
    summary = abort_run(
        "run-1",
        "suite-a",
        "2026-11-21T17:00:00Z",
        ["alpha", "beta"],
        {"Error": "StoppedByApi", "Cause": "stopped by DELETE /runs/run-1"},
        fakes.services,
        iso(stopped_at),
    )
    assert tagged.alive == {}  # the late instance went with the second sweep
    second = [at for run, config, at in tagged.terminated_at if config == "beta"]
    assert second == [stopped_at, stopped_at + timedelta(seconds=IN_FLIGHT_S)]
    assert [c.leftovers for c in summary.configs] == [[], []]
    assert summary.status == "FAILED" and fakes.store.finished[-1] == summary


def test_a_retried_sweep_past_the_window_does_not_wait(plan: Any, fakes: Any) -> None:
    plan()
    slept: list[float] = []
    fakes.services.sleep = slept.append
    stopped_at = iso(fakes.clock.now() - timedelta(seconds=IN_FLIGHT_S + 1))
    abort_run("run-1", "suite-a", "2026-11-21T17:00:00Z", ["alpha"], {}, fakes.services, stopped_at)
    assert slept == []
    assert [config for _, _, config in fakes.compute.terminated] == ["alpha", "alpha"]


def test_a_sweep_told_no_stop_time_sweeps_once(plan: Any, fakes: Any) -> None:
    plan()
    fakes.services.sleep = lambda s: pytest.fail("no stop time: nothing to wait for")
    abort_run("run-1", "suite-a", "2026-11-21T17:00:00Z", ["alpha"], {}, fakes.services)
    assert [config for _, _, config in fakes.compute.terminated] == ["alpha"]


def test_the_window_outlasts_the_launching_steps_lambda_timeout() -> None:
    """template.yaml gives Provision and CheckReady the Globals Timeout of 120 s (a template test
    keeps them there): 30 s more for EC2 to list what they launched last."""
    assert IN_FLIGHT_S >= 120 + 30


# =================================================================================== request.json


def _damage(fakes: Any, how: str) -> str:
    key = artifact_keys.request_key("run-1")
    if how == "deleted":
        del fakes.artifacts.documents[key]
    elif how == "not json":
        fakes.artifacts.get_json = _raises(json.JSONDecodeError("Expecting value", "{", 1))
    else:  # valid JSON, no longer a request
        fakes.artifacts.documents[key] = {"name": 5}
    return key


def _raises(error: Exception) -> Callable[[str], Any]:
    def get_json(key: str) -> Any:
        raise error

    return get_json


@pytest.mark.parametrize(
    ("how", "said"), [("deleted", "missing"), ("not json", "corrupt"), ("invalid", "corrupt")]
)
@pytest.mark.parametrize("step", ["provision", "start_agent", "collect"])
def test_a_step_that_needs_the_request_names_the_document(
    state_of: StateOf, fakes: Any, how: str, said: str, step: str
) -> None:
    state = state_of("beta")
    if step != "provision":
        state = check_ready(provision(state, fakes.services), fakes.services)
    key = _damage(fakes, how)
    call: dict[str, Callable[[], Any]] = {
        "provision": lambda: provision(state, fakes.services),
        "start_agent": lambda: start_agent(state, "token-1", fakes.services),
        "collect": lambda: collect(state, fakes.services),
    }
    with pytest.raises(DocumentError) as caught:
        call[step]()
    assert str(caught.value).startswith(f"{key}: {said}")
    assert caught.value.key == key and isinstance(caught.value, WorkflowError)


def test_cleanup_releases_without_the_request(state_of: StateOf, fakes: Any, tagged: TaggedCompute) -> None:
    state = provision(state_of("alpha"), fakes.services)
    _damage(fakes, "deleted")
    result = cleanup(state, fakes.services)
    assert tagged.alive == {} and fakes.filesystems.live == {} and result.leftovers == []

"""Issue 11, exactly once: a scheduled occurrence starts one run, however many executions its
schedule's retries start (Plan claims the occurrence; a second claim is refused before anything)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from tests.support import workflow_fakes as wf

from storagebench.core.errors import DuplicateStartError, InvalidRequestError
from storagebench.core.state import ConfigState, PlanResult
from storagebench.workflow import artifact_keys
from storagebench.workflow.run_ids import occurrence_key, schedule_group
from storagebench.workflow.steps.provision import provision

Plan = Callable[..., PlanResult]
ARN = f"arn:aws:scheduler:us-east-1:123456789012:schedule/{schedule_group(wf.STACK)}/nightly"
AT = "2026-11-21T02:00:00Z"


def scheduled(arn: str = ARN, at: str = AT) -> dict[str, Any]:
    return wf.request_doc(scheduled={"schedule_arn": arn, "scheduled_time": at})


def test_plan_claims_the_occurrence_for_its_run(plan: Plan, fakes: Any) -> None:
    planned = plan(scheduled(), run_id="exec-a")
    assert [i.config_id for i in planned.items] == ["alpha", "beta", "gamma"]
    assert fakes.store.claims[occurrence_key(ARN, AT)]["run_id"] == "exec-a"
    assert fakes.store.runs["exec-a"]["request"]["scheduled"] == {"schedule_arn": ARN, "scheduled_time": AT}


def test_a_second_execution_of_the_occurrence_is_refused_and_writes_nothing(plan: Plan, fakes: Any) -> None:
    plan(scheduled(), run_id="exec-a")
    with pytest.raises(DuplicateStartError) as refused:
        plan(scheduled(at="2026-11-21T02:00:00.000Z"), run_id="exec-b")  # the same time, spelled otherwise
    assert "exec-a" in str(refused.value) and "exec-b" in str(refused.value)
    assert set(fakes.store.runs) == {"exec-a"}  # not recorded, so nothing of it can be swept or billed
    assert artifact_keys.request_key("exec-b") not in fakes.artifacts.documents
    assert fakes.compute.launches == [] and fakes.filesystems.specs == []
    assert fakes.store.claims[occurrence_key(ARN, AT)]["refused"] == ["exec-b"]
    assert fakes.store.runs["exec-a"]["status"] == "RUNNING"  # the first run is untouched


def test_a_retried_plan_of_the_claiming_execution_goes_on(plan: Plan, fakes: Any) -> None:
    plan(scheduled(), run_id="exec-a")
    assert plan(scheduled(), run_id="exec-a").run_id == "exec-a"  # Lambda.ServiceException, retried
    assert fakes.store.claims[occurrence_key(ARN, AT)]["refused"] == []


def test_each_occurrence_and_each_schedule_is_its_own_claim(plan: Plan, fakes: Any) -> None:
    plan(scheduled(), run_id="night-1")
    plan(scheduled(at="2026-11-22T02:00:00Z"), run_id="night-2")
    plan(scheduled(arn=ARN.replace("/nightly", "/weekly")), run_id="weekly-1")
    assert {c["run_id"] for c in fakes.store.claims.values()} == {"night-1", "night-2", "weekly-1"}


def test_a_request_without_an_occurrence_claims_nothing(plan: Plan, fakes: Any) -> None:
    plan(wf.request_doc(), run_id="api-1")
    plan(wf.request_doc(), run_id="api-2")
    assert fakes.store.claims == {}


def test_only_schedules_of_the_stacks_group_claim(plan: Plan, fakes: Any) -> None:
    """A start naming another group's schedule (a forged claim) is refused, so it blocks no schedule."""
    other = ARN.replace(schedule_group(wf.STACK), "someone-elses")
    with pytest.raises(InvalidRequestError, match=r"scheduled\.schedule_arn: .*someone-elses"):
        plan(scheduled(arn=other), run_id="forged")
    assert fakes.store.claims == {} and fakes.store.runs == {}


@pytest.mark.parametrize(
    ("field", "value"),
    [("schedule_arn", "<aws.scheduler.schedule-arn>"), ("scheduled_time", "<aws.scheduler.scheduled-time>")],
)
def test_a_placeholder_the_scheduler_did_not_fill_is_refused(
    plan: Plan, fakes: Any, field: str, value: str
) -> None:
    """The template's Input started by hand (not by the Scheduler) would claim one fixed key forever."""
    document = scheduled()
    document["scheduled"][field] = value
    with pytest.raises(InvalidRequestError, match=f"scheduled.{field}"):
        plan(document, run_id="by-hand")
    assert fakes.store.claims == {}


def test_the_stored_request_of_a_scheduled_run_is_the_request_alone(plan: Plan, fakes: Any) -> None:
    """The steps re-read request.json; the occurrence stays on the run item, not in the document."""
    plan(scheduled(), run_id="exec-a")
    assert "scheduled" not in fakes.artifacts.documents[artifact_keys.request_key("exec-a")]
    item = plan(scheduled(), "exec-a").items[1]
    state = provision(ConfigState.model_validate({"item": item.model_dump()}), fakes.services)
    assert state.resources.instance_id is not None

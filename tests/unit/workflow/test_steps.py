"""The workflow's steps over in-memory ports: plan, provision, readiness, agent, failures,
collect, cleanup and finalize, as the state machine calls them."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from pydantic import ValidationError
from tests.support import workflow_fakes as wf

from storagebench.core.errors import (
    GuardrailError,
    InvalidRequestError,
    NotReadyError,
    NotYetConsistentError,
    ResourceBusyError,
)
from storagebench.core.guardrails import Guardrails
from storagebench.core.launch import client_token
from storagebench.core.state import (
    AgentOutcome,
    CleanupReport,
    CollectSummary,
    ComputeStatus,
    ConfigResult,
    ConfigState,
    ErrorInfo,
    FileSystemRef,
    PlanResult,
    ReadyStatus,
    Resources,
)
from storagebench.core.tags import TAG_CONFIG, TAG_EXPIRES, TAG_RUN, TAG_STACK, TAG_TARGET
from storagebench.request import parse_request
from storagebench.workflow import artifact_keys
from storagebench.workflow.bindings import storage_option
from storagebench.workflow.steps.check_ready import check_ready
from storagebench.workflow.steps.cleanup import cleanup, config_status, release
from storagebench.workflow.steps.collect import collect
from storagebench.workflow.steps.finalize import finalize
from storagebench.workflow.steps.provision import creation_token, provision
from storagebench.workflow.steps.record_failure import record_failure
from storagebench.workflow.steps.shared import failed_step, with_pending_errors
from storagebench.workflow.steps.start_agent import start_agent
from storagebench.workflow.steps.sweep_run import abort_run, cleanup_run

StateOf = Callable[..., ConfigState]
Plan = Callable[..., PlanResult]


def lambda_cause(message: str, error_type: str = "CapacityError") -> str:
    """The Cause Step Functions puts on a caught Lambda error: the function's error JSON."""
    return json.dumps({"errorMessage": message, "errorType": error_type, "stackTrace": ["  File x"]})


def provisioned(state_of: StateOf, fakes: Any, config_id: str = "alpha") -> ConfigState:
    return provision(state_of(config_id), fakes.services)


def ready(state_of: StateOf, fakes: Any, config_id: str = "alpha") -> ConfigState:
    state = check_ready(provisioned(state_of, fakes, config_id), fakes.services)
    assert state.ready is not None and state.ready.state == "ready"
    return state


def ran(state_of: StateOf, fakes: Any, config_id: str = "alpha") -> ConfigState:
    state = start_agent(ready(state_of, fakes, config_id), "token-1", fakes.services)
    return state.model_copy(update={"outcome": AgentOutcome(status="completed", exit_code=0)})


def collected(state_of: StateOf, fakes: Any, config_id: str = "alpha") -> ConfigState:
    state = ran(state_of, fakes, config_id)
    config = parse_request(wf.request_doc()).config(config_id)
    wf.write_agent_output(wf.agent_output_dir(fakes, state), config_id, [str(t.id) for t in config.targets])
    return collect(state, fakes.services)


# =================================================================================== plan


def test_plan_expands_one_work_item_per_config_with_the_request_timing(plan: Plan) -> None:
    planned = plan()
    assert planned.run_id == "run-1" and planned.suite == "suite-a"
    assert planned.started_at == "2026-11-21T17:00:00Z"
    assert [i.config_id for i in planned.items] == ["alpha", "beta", "gamma"]
    for item in planned.items:
        assert (item.run_id, item.suite, item.region) == ("run-1", "suite-a", "us-east-1")
        assert item.started_at == "2026-11-21T17:00:00Z"
        assert item.expires_at == "2026-11-21T23:00:00Z"  # started + max_run_hours (6)
        assert item.artifacts_prefix == f"runs/run-1/{item.config_id}/"
        timing = item.timing
        assert timing.ready_poll_s == 5
        assert timing.ready_timeout_s == Guardrails().ready_timeout_s
        assert timing.heartbeat_s == 60  # min(command_poll_s 60, heartbeat max 300)
        assert timing.command_timeout_s == 2 * 3600


def test_plan_caps_the_heartbeat_at_the_stacks_maximum(plan: Plan, fakes: Any) -> None:
    fakes.services.guardrails = Guardrails(heartbeat_max_s=120, ready_timeout_s=300)
    document = wf.request_doc(timing={"command_poll_s": 600, "command_timeout_h": 0.5, "max_run_hours": 1.5})
    (item, *_) = plan(document).items
    assert item.timing.heartbeat_s == 120
    assert item.timing.ready_timeout_s == 300
    assert item.timing.ready_poll_s == 15  # the request's default
    assert item.timing.command_timeout_s == 1800
    assert item.expires_at == "2026-11-21T18:30:00Z"


def test_plan_stores_the_request_and_starts_the_run_before_returning(plan: Plan, fakes: Any) -> None:
    document = wf.request_doc()
    planned = plan(document)
    stored = fakes.artifacts.get_json(artifact_keys.request_key("run-1"))
    assert stored == parse_request(document).model_dump(mode="json")
    assert parse_request(stored) == parse_request(document)  # the steps read it back
    run = fakes.store.runs["run-1"]
    assert run["status"] == "RUNNING" and run["suite"] == "suite-a"
    assert run["request"] == document
    assert run["configs"] == ["alpha", "beta", "gamma"]
    assert (run["started_at"], run["expires_at"]) == (planned.started_at, planned.items[0].expires_at)


def test_plan_does_not_return_when_the_run_cannot_be_recorded(plan: Plan, fakes: Any) -> None:
    def refuse(*args: Any, **kwargs: Any) -> None:
        raise RuntimeError("table unavailable")

    fakes.store.start_run = refuse
    with pytest.raises(RuntimeError, match="table unavailable"):
        plan()


@pytest.mark.parametrize(
    ("requested", "stack", "configs", "expected"),
    [
        (2, 4, 3, 2),  # the request asks for fewer
        (None, 4, 3, 3),  # not asked: the stack's, but never more than the configs
        (None, 2, 3, 2),  # not asked: the stack's
        (10, 4, 3, 3),  # asked for more than the stack allows and than there are configs
        (10, 40, 12, 10),
        (3, 2, 3, 2),  # the stack's limit wins over the request
        (1, 4, 3, 1),
    ],
)
def test_plan_max_concurrency_is_the_smallest_of_request_stack_and_configs(
    plan: Plan, fakes: Any, requested: int | None, stack: int, configs: int, expected: int
) -> None:
    fakes.services.guardrails = Guardrails(max_concurrency=stack, max_configs_per_run=40)
    many = [
        {"id": f"c{n}", "instance_type": "c5.large", "targets": [{"kind": "local", "path": "/mnt"}]}
        for n in range(configs)
    ]
    document = wf.request_doc(configs=many, max_concurrency=requested)
    if requested is None:
        del document["max_concurrency"]
    assert plan(document).max_concurrency == expected


@pytest.mark.parametrize(
    ("edit", "field"),
    [
        (lambda d: d["configs"][0]["targets"][0].update(size_gib=0), "configs[0].targets[0].size_gib"),
        (lambda d: d["configs"][1].update(instance_type="not a type"), "configs[1].instance_type"),
        (lambda d: d.update(name="Bad Name"), "name"),
        (lambda d: d["timing"].update(command_poll_s=601), "timing.command_poll_s"),
        (lambda d: d.pop("workloads"), "workloads"),
    ],
)
def test_plan_refuses_an_invalid_request_naming_the_field_and_stores_nothing(
    plan: Plan, fakes: Any, edit: Callable[[dict[str, Any]], Any], field: str
) -> None:
    document = wf.request_doc()
    edit(document)
    with pytest.raises(InvalidRequestError) as caught:
        plan(document)
    assert field in str(caught.value)
    assert fakes.artifacts.documents == {} and fakes.store.runs == {}


@pytest.mark.parametrize("document", [None, [], "configs: []"])
def test_plan_refuses_a_request_that_is_not_an_object(plan: Plan, fakes: Any, document: Any) -> None:
    with pytest.raises(InvalidRequestError, match="must be a JSON object"):
        plan(document)
    assert fakes.store.runs == {}


def test_plan_refuses_more_configs_than_the_stack_allows(plan: Plan, fakes: Any) -> None:
    fakes.services.guardrails = Guardrails(max_configs_per_run=2)
    with pytest.raises(GuardrailError) as caught:
        plan()
    message = str(caught.value)
    assert "configs: 3 configs" in message and "at most 2" in message and "MaxConfigsPerRun" in message
    assert fakes.artifacts.documents == {} and fakes.store.runs == {}


def test_plan_refuses_instance_types_the_stack_does_not_allow(plan: Plan, fakes: Any) -> None:
    fakes.services.guardrails = Guardrails(allowed_instance_types=("c5.4xlarge", "i3en.large"))
    with pytest.raises(GuardrailError) as caught:
        plan()
    message = str(caught.value)
    assert "configs[1].instance_type: m7g.large" in message
    assert "AllowedInstanceTypes: c5.4xlarge, i3en.large" in message
    assert "configs[0]" not in message and "configs[2]" not in message
    assert fakes.artifacts.documents == {} and fakes.store.runs == {}


def test_plan_reports_every_guardrail_at_once(plan: Plan, fakes: Any) -> None:
    fakes.services.guardrails = Guardrails(max_configs_per_run=1, allowed_instance_types=("c5.4xlarge",))
    with pytest.raises(GuardrailError) as caught:
        plan()
    message = str(caught.value)
    assert "MaxConfigsPerRun" in message
    assert "configs[1].instance_type: m7g.large" in message
    assert "configs[2].instance_type: i3en.large" in message


def test_plan_refuses_a_command_timeout_under_one_second_as_an_invalid_request(plan: Plan) -> None:
    document = wf.request_doc(timing={"command_timeout_h": 0.0001})
    with pytest.raises(InvalidRequestError, match="command_timeout"):
        plan(document)


# =================================================================================== provision


def test_provision_creates_file_systems_for_efs_and_fsx_targets(state_of: StateOf, fakes: Any) -> None:
    state = provisioned(state_of, fakes)
    specs = fakes.filesystems.specs
    assert [(s.target_id, s.kind) for s in specs] == [("shared", "efs"), ("scratch", "fsx_lustre")]
    for spec in specs:
        assert spec.creation_token == creation_token("run-1", "alpha", spec.target_id)
        assert len(spec.creation_token) <= 63 and spec.creation_token.startswith("sb-")
        assert spec.tags[TAG_TARGET] == spec.target_id
        assert spec.tags[TAG_RUN] == "run-1" and spec.tags[TAG_CONFIG] == "alpha"
        assert spec.tags[TAG_STACK] == wf.STACK
    assert specs[0].settings["throughput_mode"] == "elastic"
    assert specs[1].settings["storage_capacity_gib"] == 1200
    assert [(f.target_id, f.file_system_id) for f in state.resources.file_systems] == [
        ("shared", "fs-0001"),
        ("scratch", "fs-0002"),
    ]


def test_provision_launches_with_root_and_one_data_volume_per_stripe_member(
    state_of: StateOf, fakes: Any
) -> None:
    state = provisioned(state_of, fakes)
    (spec,) = fakes.compute.launches
    assert spec.instance_type == "c5.4xlarge" and spec.architecture == "x86_64"
    assert spec.root.device_name == "/dev/xvda" and spec.root.target_id == "root"
    assert (spec.root.volume_type, spec.root.size_gib) == ("gp3", 8)
    assert [(v.target_id, v.member, v.device_name) for v in spec.volumes] == [
        ("data", 0, "/dev/sdf"),
        ("data", 1, "/dev/sdg"),
    ]
    assert all((v.volume_type, v.size_gib, v.iops) == ("gp3", 100, 4000) for v in spec.volumes)
    assert spec.tags[TAG_RUN] == "run-1" and spec.tags[TAG_CONFIG] == "alpha"
    assert spec.tags[TAG_EXPIRES] == "2026-11-21T23:00:00Z" and spec.tags[TAG_STACK] == wf.STACK
    assert spec.client_token == client_token("run-1", "alpha")
    assert state.resources.instance_id == "i-0001"
    assert [v.volume_id for v in state.resources.volumes] == ["vol-0100", "vol-0101"]
    assert state.resources.launched_at == wf.START_ISO
    assert fakes.store.statuses("alpha") == ["PROVISIONING"]
    (stored, _) = fakes.store.configs[0]
    assert stored == state


def test_provision_without_network_targets_creates_no_file_system(state_of: StateOf, fakes: Any) -> None:
    state = provisioned(state_of, fakes, "beta")
    assert fakes.filesystems.specs == [] and state.resources.file_systems == []
    (spec,) = fakes.compute.launches
    assert [(v.target_id, v.device_name) for v in spec.volumes] == [("ebs0", "/dev/sdf")]
    assert spec.architecture == "arm64"


def test_client_token_is_stable_for_a_run_and_config_and_differs_otherwise(
    state_of: StateOf, fakes: Any
) -> None:
    provisioned(state_of, fakes, "alpha")
    provisioned(state_of, fakes, "alpha")
    provisioned(state_of, fakes, "beta")
    provision(state_of("alpha", run_id="run-2"), fakes.services)
    tokens = [spec.client_token for spec in fakes.compute.launches]
    assert tokens[0] == tokens[1]
    assert len({tokens[0], tokens[2], tokens[3]}) == 3
    assert all(len(t) <= 64 for t in tokens)
    assert len(fakes.compute.instances) == 3  # the repeated launch got the first instance back


def test_a_retried_provision_does_not_create_a_file_system_twice(state_of: StateOf, fakes: Any) -> None:
    start = state_of("alpha")
    first = provision(start, fakes.services)
    # Step Functions retries with the same input (the first answer was lost)...
    again = provision(start, fakes.services)
    # ... or a step is re-run on a state that already records them.
    specs_before = len(fakes.filesystems.specs)
    third = provision(first, fakes.services)
    assert len(fakes.filesystems.specs) == specs_before  # nothing asked for: already recorded
    assert len(fakes.filesystems.by_token) == 2  # two file systems exist, not four
    assert first.resources == again.resources == third.resources


def test_distinct_targets_get_distinct_creation_tokens_whatever_the_id_lengths(
    state_of: StateOf, fakes: Any
) -> None:
    config = {
        "id": "efs-elastic-versus-bursting-throughput-modes",  # 44 characters, a valid slug
        "instance_type": "c5.large",
        "targets": [{"kind": "efs"}, {"kind": "efs", "throughput_mode": "bursting"}],
    }
    run_id = "3f1c2a9e-7b41-4d0a-9c55-2f8e6d1b0a77"  # the default execution name: a UUID
    state = provision(state_of(config["id"], wf.request_doc(configs=[config]), run_id=run_id), fakes.services)
    tokens = [spec.creation_token for spec in fakes.filesystems.specs]
    assert len(set(tokens)) == 2, tokens
    assert len({f.file_system_id for f in state.resources.file_systems}) == 2


# =================================================================================== readiness


def test_check_ready_is_ready_when_every_check_passes(state_of: StateOf, fakes: Any) -> None:
    state = check_ready(provisioned(state_of, fakes), fakes.services)
    assert state.ready is not None
    assert state.ready.state == "ready" and state.ready.polls == 1
    assert state.ready.first_poll_at == wf.START_ISO
    assert state.ready.checks == {
        "instance_running": True,
        "status_checks_ok": True,
        "volumes_in_use": True,
        "volumes_initialized": True,
        "file_systems_available": True,
        "agent_online": True,
    }
    assert fakes.agents.online_calls == 1


def test_check_ready_waits_then_becomes_ready_keeping_the_first_poll(state_of: StateOf, fakes: Any) -> None:
    fakes.compute.status_value = ComputeStatus(
        instance_state="pending", status_checks_ok=False, volumes_in_use=False
    )
    first = check_ready(provisioned(state_of, fakes), fakes.services)
    assert first.ready is not None and first.ready.state == "waiting"
    assert first.ready.polls == 1 and first.ready.first_poll_at == wf.START_ISO
    assert "instance_running" in first.ready.reason and "status_checks_ok" in first.ready.reason
    assert fakes.agents.online_calls == 0  # not asked while the rest is not ready

    fakes.clock.advance(45)
    fakes.compute.status_value = ComputeStatus(
        instance_state="running", status_checks_ok=True, volumes_in_use=True
    )
    second = check_ready(first, fakes.services)
    assert second.ready is not None and second.ready.state == "ready"
    assert second.ready.polls == 2 and second.ready.first_poll_at == wf.START_ISO
    assert "45 s" in second.ready.reason
    assert fakes.agents.online_calls == 1


def test_check_ready_asks_for_the_agent_only_once_the_rest_is_ready(state_of: StateOf, fakes: Any) -> None:
    state = provisioned(state_of, fakes)
    fakes.filesystems.states["fs-0002"] = "creating"
    waiting = check_ready(state, fakes.services)
    assert waiting.ready is not None and waiting.ready.state == "waiting"
    assert waiting.ready.checks["file_systems_available"] is False
    assert fakes.agents.online_calls == 0

    fakes.filesystems.states["fs-0002"] = "available"
    fakes.agents.online_value = False
    offline = check_ready(waiting, fakes.services)
    assert offline.ready is not None and offline.ready.state == "waiting"
    assert offline.ready.reason == "waiting for agent_online"
    assert fakes.agents.online_calls == 1


def test_check_ready_waits_for_volume_initialisation(state_of: StateOf, fakes: Any) -> None:
    fakes.compute.status_value = ComputeStatus(
        instance_state="running", status_checks_ok=True, volumes_in_use=True, volumes_initialized=False
    )
    state = check_ready(provisioned(state_of, fakes), fakes.services)
    assert state.ready is not None and state.ready.state == "waiting"
    assert "volumes_initialized" in state.ready.reason


def test_check_ready_takes_the_volumes_the_provider_reports(state_of: StateOf, fakes: Any) -> None:
    state = provisioned(state_of, fakes)
    attached = [v.model_copy(update={"state": "attached"}) for v in state.resources.volumes]
    fakes.compute.status_value = ComputeStatus(
        instance_state="running", status_checks_ok=True, volumes_in_use=True, volumes=attached
    )
    checked = check_ready(state, fakes.services)
    assert [v.state for v in checked.resources.volumes] == ["attached", "attached"]
    fakes.compute.status_value = ComputeStatus(
        instance_state="running", status_checks_ok=True, volumes_in_use=True
    )
    assert check_ready(checked, fakes.services).resources.volumes == attached  # kept when silent


@pytest.mark.parametrize("instance_state", ["terminated", "shutting-down", "stopping", "stopped"])
def test_check_ready_fails_when_the_instance_is_gone(
    state_of: StateOf, fakes: Any, instance_state: str
) -> None:
    state = provisioned(state_of, fakes)
    fakes.compute.status_value = ComputeStatus(
        instance_state=instance_state,
        status_checks_ok=False,
        volumes_in_use=False,
        reason="Server.InsufficientInstanceCapacity",
    )
    with pytest.raises(NotReadyError) as caught:
        check_ready(state, fakes.services)
    assert f"i-0001 is {instance_state}" in str(caught.value)
    assert "Server.InsufficientInstanceCapacity" in str(caught.value)


def test_check_ready_fails_when_a_file_system_failed(state_of: StateOf, fakes: Any) -> None:
    state = provisioned(state_of, fakes)
    fakes.filesystems.states["fs-0002"] = "failed"
    with pytest.raises(NotReadyError, match="fs-0002"):
        check_ready(state, fakes.services)


def test_check_ready_fails_at_the_deadline_naming_the_failing_checks(state_of: StateOf, fakes: Any) -> None:
    fakes.compute.status_value = ComputeStatus(
        instance_state="running", status_checks_ok=False, volumes_in_use=True
    )
    state = check_ready(provisioned(state_of, fakes), fakes.services)
    timeout = state.item.timing.ready_timeout_s
    fakes.clock.advance(timeout)  # exactly at the deadline: still waiting
    state = check_ready(state, fakes.services)
    assert state.ready is not None and state.ready.state == "waiting" and state.ready.polls == 2
    fakes.clock.advance(1)
    with pytest.raises(NotReadyError) as caught:
        check_ready(state, fakes.services)
    message = str(caught.value)
    assert f"not ready after {timeout + 1} s (3 polls)" in message
    assert "status_checks_ok" in message
    assert "volumes_in_use" not in message and "instance_running" not in message


# =================================================================================== agent


def test_start_agent_stores_the_plan_with_bound_targets(state_of: StateOf, fakes: Any) -> None:
    state = start_agent(ready(state_of, fakes), "token-1", fakes.services)
    plan = fakes.artifacts.get_json("runs/run-1/alpha/plan.json")
    assert (plan["run_id"], plan["config_id"]) == ("run-1", "alpha")
    targets = {t["id"]: t for t in plan["targets"]}
    assert targets["data"]["kind"] == "ebs"
    assert targets["data"]["volume_ids"] == ["vol-0100", "vol-0101"]
    assert targets["data"]["device_names"] == ["/dev/sdf", "/dev/sdg"]
    assert targets["data"]["volume"] == {
        "type": "gp3",
        "size_gib": 100,
        "iops": 4000,
        "throughput_mibps": None,
    }
    assert (targets["data"]["count"], targets["data"]["layout"]) == (2, "raid0")
    assert targets["shared"]["source"] == "fs-0001.efs.us-east-1.amazonaws.com:/"
    assert targets["shared"]["fstype"] == "nfs4"
    assert targets["scratch"]["source"] == "fs-0002.fsx.us-east-1.amazonaws.com@tcp:/abcdefgh"
    assert targets["scratch"]["fstype"] == "lustre" and targets["scratch"]["lustre_stripe_count"] == 4
    assert plan["prewarm"]["targets"] == ["data"]
    assert plan["steps"] and {s["target"] for s in plan["steps"]} == {"data", "shared", "scratch"}

    (call,) = fakes.agents.starts
    assert call.plan == plan
    assert call.output_prefix == "runs/run-1/alpha/instances/AROAFAKEROLE:i-0001/agent/"
    assert call.task_token == "token-1"
    assert (call.heartbeat_s, call.timeout_s) == (60, 7200)
    assert state.agent is not None and state.agent.command_id == "cmd-1"
    assert fakes.store.statuses("alpha")[-1] == "RUNNING"


def test_start_agent_binds_stripe_members_in_member_order(state_of: StateOf, fakes: Any) -> None:
    state = ready(state_of, fakes)
    shuffled = state.resources.model_copy(update={"volumes": list(reversed(state.resources.volumes))})
    start_agent(state.model_copy(update={"resources": shuffled}), "t", fakes.services)
    data = next(t for t in fakes.agents.starts[0].plan["targets"] if t["id"] == "data")
    assert data["volume_ids"] == ["vol-0100", "vol-0101"]
    assert data["device_names"] == ["/dev/sdf", "/dev/sdg"]


def test_start_agent_binds_nfs_and_local_directories(state_of: StateOf, fakes: Any) -> None:
    start_agent(ready(state_of, fakes, "beta"), "t", fakes.services)
    targets = {t["id"]: t for t in fakes.artifacts.get_json("runs/run-1/beta/plan.json")["targets"]}
    assert targets["share"] == {
        "id": "share",
        "kind": "nfs",
        "source": "10.0.0.5:/export",
        "fstype": "nfs",
        "mount_options": "nolock,hard,nfsvers=4.1",
    }
    assert targets["dir"] == {"id": "dir", "kind": "directory", "path": "/mnt/bench"}
    assert targets["ebs0"]["volume"]["type"] == "gp2"


def test_start_agent_binds_the_instance_store(state_of: StateOf, fakes: Any) -> None:
    start_agent(ready(state_of, fakes, "gamma"), "t", fakes.services)
    (target,) = fakes.artifacts.get_json("runs/run-1/gamma/plan.json")["targets"]
    assert target == {"id": "nvme", "kind": "instance_store", "count": 0, "filesystem": "xfs"}


def test_start_agent_waits_for_volume_ids(state_of: StateOf, fakes: Any) -> None:
    fakes.compute.hide_volume_ids = True
    state = ready(state_of, fakes)
    with pytest.raises(NotYetConsistentError, match="data"):
        start_agent(state, "t", fakes.services)
    assert "runs/run-1/alpha/plan.json" not in fakes.artifacts.documents
    assert fakes.agents.starts == []


def test_start_agent_waits_for_a_missing_stripe_member(state_of: StateOf, fakes: Any) -> None:
    state = ready(state_of, fakes)
    one = state.resources.model_copy(update={"volumes": state.resources.volumes[:1]})
    with pytest.raises(NotYetConsistentError):
        start_agent(state.model_copy(update={"resources": one}), "t", fakes.services)


def test_start_agent_waits_for_an_unrecorded_file_system(state_of: StateOf, fakes: Any) -> None:
    state = ready(state_of, fakes)
    partial = state.resources.model_copy(update={"file_systems": state.resources.file_systems[:1]})
    with pytest.raises(NotYetConsistentError, match="scratch"):
        start_agent(state.model_copy(update={"resources": partial}), "t", fakes.services)


# =================================================================================== failures


def test_failed_step_follows_the_stages(state_of: StateOf, fakes: Any) -> None:
    start = state_of("alpha")
    assert failed_step(start) == "provision"
    launched = provision(start, fakes.services)
    assert failed_step(launched) == "ready"
    waiting = launched.model_copy(update={"ready": ReadyStatus(state="waiting", reason="x")})
    assert failed_step(waiting) == "ready"
    ready_state = launched.model_copy(update={"ready": ReadyStatus(state="ready", reason="x")})
    assert failed_step(ready_state) == "agent"
    finished = ready_state.model_copy(update={"outcome": AgentOutcome(status="completed", exit_code=0)})
    assert failed_step(finished) == "collect"
    done = finished.model_copy(update={"collected": CollectSummary(status="ok", records=1)})
    assert failed_step(done) == "cleanup"


def test_record_failure_keeps_the_lambda_error_message(state_of: StateOf, fakes: Any) -> None:
    state = state_of("alpha")
    caught = {"Error": "CapacityError", "Cause": lambda_cause("no c5.4xlarge capacity in us-east-1a")}
    recorded = record_failure(state, caught, fakes.services)
    assert recorded.errors == [
        ErrorInfo(step="provision", error="CapacityError", cause="no c5.4xlarge capacity in us-east-1a")
    ]
    assert recorded.outcome is None
    (stored, status) = fakes.store.configs[-1]
    assert status == "FAILING" and stored.errors == recorded.errors


@pytest.mark.parametrize(
    ("cause", "kept"),
    [
        ("plain text from the service", "plain text from the service"),
        ('{"no": "message"}', '{"no": "message"}'),
        ("[1, 2]", "[1, 2]"),
        ("", ""),
    ],
)
def test_record_failure_keeps_a_cause_that_is_not_a_lambda_error_as_is(
    state_of: StateOf, fakes: Any, cause: str, kept: str
) -> None:
    recorded = record_failure(
        state_of("alpha"), {"Error": "States.TaskFailed", "Cause": cause}, fakes.services
    )
    assert recorded.errors[-1].cause == kept


def test_record_failure_without_error_or_cause(state_of: StateOf, fakes: Any) -> None:
    recorded = record_failure(state_of("alpha"), {}, fakes.services)
    assert recorded.errors[-1] == ErrorInfo(step="provision", error="States.Unknown", cause="")


@pytest.mark.parametrize("error", ["States.HeartbeatTimeout", "States.Timeout"])
def test_record_failure_marks_a_silent_agent_lost(state_of: StateOf, fakes: Any, error: str) -> None:
    state = ready(state_of, fakes)
    recorded = record_failure(state, {"Error": error, "Cause": "no heartbeat"}, fakes.services)
    assert recorded.errors[-1].step == "agent"
    assert recorded.outcome == AgentOutcome(status="lost", detail="no heartbeat")
    assert fakes.store.statuses("alpha")[-1] == "FAILING"


def test_record_failure_marks_a_failed_agent_failed(state_of: StateOf, fakes: Any) -> None:
    state = ready(state_of, fakes)
    caught = {"Error": "AgentError", "Cause": "setup failed at line 12"}
    recorded = record_failure(state, caught, fakes.services)
    assert recorded.outcome == AgentOutcome(status="failed", detail="setup failed at line 12")


def test_record_failure_after_the_agent_keeps_its_outcome(state_of: StateOf, fakes: Any) -> None:
    state = ran(state_of, fakes)
    recorded = record_failure(state, {"Error": "ThrottledError", "Cause": "x"}, fakes.services)
    assert recorded.errors[-1].step == "collect"
    assert recorded.outcome == AgentOutcome(status="completed", exit_code=0)


def test_record_failure_appends_to_earlier_errors(state_of: StateOf, fakes: Any) -> None:
    earlier = ErrorInfo(step="ready", error="X", cause="y")
    state = state_of("alpha").model_copy(update={"errors": [earlier]})
    recorded = record_failure(state, {"Error": "CapacityError", "Cause": "z"}, fakes.services)
    assert recorded.errors[0] == earlier and len(recorded.errors) == 2


def test_with_pending_errors_folds_caught_and_record_error(state_of: StateOf, fakes: Any) -> None:
    state = ready(state_of, fakes).model_copy(
        update={
            "caught": {"Error": "States.HeartbeatTimeout", "Cause": "silent"},
            "record_error": {"Error": "Lambda.ServiceException", "Cause": lambda_cause("boom", "X")},
        }
    )
    folded = with_pending_errors(state)
    assert folded.caught is None and folded.record_error is None
    assert folded.errors == [
        ErrorInfo(step="agent", error="States.HeartbeatTimeout", cause="silent"),
        ErrorInfo(step="record_failure", error="Lambda.ServiceException", cause="boom"),
    ]
    assert with_pending_errors(folded) is folded  # nothing pending: unchanged


def test_with_pending_errors_folds_either_alone(state_of: StateOf) -> None:
    state = state_of("alpha")
    only_record = with_pending_errors(state.model_copy(update={"record_error": {"Error": "E"}}))
    assert only_record.errors == [ErrorInfo(step="record_failure", error="E", cause="")]
    only_caught = with_pending_errors(state.model_copy(update={"caught": {"Cause": "c"}}))
    assert only_caught.errors == [ErrorInfo(step="provision", error="States.Unknown", cause="c")]


# =================================================================================== collect


def test_collect_stores_records_per_target_with_its_storage_option(state_of: StateOf, fakes: Any) -> None:
    state = collected(state_of, fakes)
    config = parse_request(wf.request_doc()).config("alpha")
    stored = {put.records[0].target_id: put for put in fakes.store.results}
    assert set(stored) == {"data", "shared", "scratch"}
    for target_id, put in stored.items():
        assert (put.run_id, put.config_id, put.started_at) == ("run-1", "alpha", "2026-11-21T17:00:00Z")
        assert put.labels == {"storage_option": storage_option(config, target_id), "suite": "suite-a"}
        assert all(r.target_id == target_id for r in put.records)
    assert stored["data"].labels["storage_option"] == "c5.4xlarge/ebs:gp3:100GiB:4000iops:x2raid0:xfs"
    assert state.collected == CollectSummary(status="ok", records=3, problems=[], agent_status="ok")
    assert fakes.artifacts.fetches == ["runs/run-1/alpha/instances/AROAFAKEROLE:i-0001/agent/"]
    assert fakes.artifacts.open_fetches == 0
    (stored_state, status) = fakes.store.configs[-1]
    assert status == "COLLECTED" and stored_state.collected == state.collected


def test_collect_keeps_the_series_for_the_report(state_of: StateOf, fakes: Any) -> None:
    state = collected(state_of, fakes)
    series = fakes.artifacts.get_json(artifact_keys.series_key(state.item))
    assert series["version"] == 1 and series["series"] == []  # timed commands write no fio logs
    assert fakes.store.statuses("alpha")[-1] == "COLLECTED"


def test_collect_labels_an_unknown_target_with_its_id(state_of: StateOf, fakes: Any) -> None:
    state = ran(state_of, fakes)
    wf.write_agent_output(wf.agent_output_dir(fakes, state), "alpha", ["data", "ghost"])
    collect(state, fakes.services)
    labels = {p.records[0].target_id: p.labels["storage_option"] for p in fakes.store.results}
    assert labels["ghost"] == "ghost"


@pytest.mark.parametrize("where", ["another instance", "the config prefix"])
def test_collect_reads_only_the_prefix_of_the_instance_that_ran_the_config(
    state_of: StateOf, fakes: Any, where: str
) -> None:
    """Another instance (or anything else) writing results for this config is never collected."""
    state = ran(state_of, fakes)
    forged = (
        wf.agent_output_dir(fakes, state, instance_id="i-0999")
        if where == "another instance"
        else fakes.artifacts.root / f"{state.item.artifacts_prefix}agent/"
    )
    wf.write_agent_output(forged, "alpha", ["data"])
    result = collect(state, fakes.services)
    assert result.collected is not None and result.collected.records == 0
    assert fakes.store.results == []


def test_collect_without_output_records_a_failure_instead_of_raising(state_of: StateOf, fakes: Any) -> None:
    state = collect(ran(state_of, fakes), fakes.services)
    assert state.collected is not None
    assert state.collected.status == "failed" and state.collected.records == 0
    assert "manifest.json" in state.collected.problems[0]
    assert state.errors[-1].step == "collect" and state.errors[-1].error == "CollectError"
    assert fakes.store.results == []
    assert fakes.store.statuses("alpha")[-1] == "COLLECTED"


def test_collect_with_unreadable_manifest_records_a_failure(state_of: StateOf, fakes: Any) -> None:
    state = ran(state_of, fakes)
    directory = wf.agent_output_dir(fakes, state)
    directory.mkdir(parents=True)
    (directory / "manifest.json").write_text("{not json")
    result = collect(state, fakes.services)
    assert result.collected is not None and result.collected.status == "failed"
    assert "not valid JSON" in result.errors[-1].cause


def test_collect_partial_output_is_partial(state_of: StateOf, fakes: Any) -> None:
    state = ran(state_of, fakes)
    wf.write_agent_output(
        wf.agent_output_dir(fakes, state), "alpha", ["data"], status="partial", failed_target="shared"
    )
    result = collect(state, fakes.services)
    assert result.collected is not None
    assert result.collected.status == "partial" and result.collected.records == 1
    assert result.collected.agent_status == "partial"
    assert any("failed" in p for p in result.collected.problems)
    assert result.errors == []  # a partial collection is not an error


def test_collect_with_an_incomplete_manifest_status_is_partial(state_of: StateOf, fakes: Any) -> None:
    state = ran(state_of, fakes)
    wf.write_agent_output(wf.agent_output_dir(fakes, state), "alpha", ["data"], status="running")
    result = collect(state, fakes.services)
    assert result.collected is not None and result.collected.status == "partial"


def test_collect_with_no_measurement_is_failed(state_of: StateOf, fakes: Any) -> None:
    state = ran(state_of, fakes)
    wf.write_agent_output(wf.agent_output_dir(fakes, state), "alpha", [])
    result = collect(state, fakes.services)
    assert result.collected is not None
    assert (result.collected.status, result.collected.records) == ("failed", 0)


def test_collect_folds_errors_caught_before_it(state_of: StateOf, fakes: Any) -> None:
    state = ran(state_of, fakes).model_copy(
        update={"caught": {"Error": "AgentError", "Cause": "x"}, "record_error": {"Error": "E", "Cause": ""}}
    )
    wf.write_agent_output(wf.agent_output_dir(fakes, state), "alpha", ["data"])
    result = collect(state, fakes.services)
    assert result.caught is None and result.record_error is None
    assert [e.step for e in result.errors] == ["collect", "record_failure"]


# =================================================================================== cleanup


def test_cleanup_releases_everything_and_succeeds(state_of: StateOf, fakes: Any) -> None:
    state = collected(state_of, fakes)
    result = cleanup(state, fakes.services)
    assert result == ConfigResult(
        run_id="run-1", config_id="alpha", status="succeeded", records=3, errors=[], leftovers=[]
    )
    ((run_id, config_id, resources),) = fakes.agents.stops
    assert (run_id, config_id) == ("run-1", "alpha") and resources == state.resources
    ((terminated, *ids),) = fakes.compute.terminated
    assert terminated == state.resources and ids == ["run-1", "alpha"]
    assert sorted(fakes.filesystems.deleted) == ["fs-0001", "fs-0002"]
    (stored, status) = fakes.store.configs[-1]
    assert status == "SUCCEEDED"
    assert stored.cleanup is not None
    assert stored.cleanup.deleted == ["i-0001", "vol-0100", "vol-0101", "fs-0001", "fs-0002", "sg-0001"]


def test_release_deletes_file_systems_from_the_state_and_by_tag_once_each(
    state_of: StateOf, fakes: Any
) -> None:
    state = provisioned(state_of, fakes)
    lost = FileSystemRef(target_id="shared", kind="efs", file_system_id="fs-lost")
    fakes.filesystems.adopt(lost, "run-1", "alpha")
    fakes.filesystems.adopt(
        FileSystemRef(target_id="x", kind="efs", file_system_id="fs-other"), "run-1", "beta"
    )
    report = release("run-1", "alpha", state.resources, fakes.services)
    assert sorted(fakes.filesystems.deleted) == ["fs-0001", "fs-0002", "fs-lost"]
    assert "fs-other" not in report.deleted
    assert report.leftovers == []


def test_release_reports_leftovers_from_machine_compute_and_file_systems(
    state_of: StateOf, fakes: Any
) -> None:
    state = provisioned(state_of, fakes)
    fakes.agents.held = ["/mnt/data still mounted"]
    fakes.compute.leftover_ids = ["vol-0101"]
    fakes.filesystems.stuck = {"fs-0002"}
    report = release("run-1", "alpha", state.resources, fakes.services)
    assert report.leftovers == ["/mnt/data still mounted", "vol-0101", "fs-0002"]
    assert fakes.compute.leftover_calls == [("run-1", "alpha")]


def test_cleanup_propagates_busy_resources_for_the_retry(state_of: StateOf, fakes: Any) -> None:
    state = collected(state_of, fakes)
    fakes.filesystems.busy = {"fs-0001"}
    with pytest.raises(ResourceBusyError):
        cleanup(state, fakes.services)
    assert fakes.store.statuses("alpha")[-1] == "COLLECTED"  # no final status yet
    fakes.filesystems.busy = set()
    assert cleanup(state, fakes.services).status == "succeeded"  # the retry finishes it


def test_cleanup_with_leftovers_is_partial(state_of: StateOf, fakes: Any) -> None:
    state = collected(state_of, fakes)
    fakes.compute.leftover_ids = ["i-0001"]
    result = cleanup(state, fakes.services)
    assert result.status == "partial" and result.leftovers == ["i-0001"]
    assert fakes.store.statuses("alpha")[-1] == "PARTIAL"


def test_cleanup_of_a_config_that_never_launched_is_failed(state_of: StateOf, fakes: Any) -> None:
    state = state_of("alpha").model_copy(update={"caught": {"Error": "CapacityError", "Cause": "none"}})
    result = cleanup(state, fakes.services)
    assert result.status == "failed" and result.records == 0
    assert result.errors == [ErrorInfo(step="provision", error="CapacityError", cause="none")]
    ((resources, *ids),) = fakes.compute.terminated
    assert resources == Resources() and ids == ["run-1", "alpha"]  # found by tag
    assert fakes.store.statuses("alpha") == ["FAILED"]


@pytest.mark.parametrize(
    ("summary", "errors", "leftovers", "expected"),
    [
        (None, 0, [], "failed"),
        (CollectSummary(status="ok", records=0), 0, [], "failed"),
        (CollectSummary(status="failed", records=0), 1, ["x"], "failed"),
        (CollectSummary(status="ok", records=5), 0, [], "succeeded"),
        (CollectSummary(status="ok", records=5), 1, [], "partial"),
        (CollectSummary(status="ok", records=5), 0, ["vol-1"], "partial"),
        (CollectSummary(status="partial", records=5), 0, [], "partial"),
    ],
)
def test_config_status_rules(
    state_of: StateOf,
    summary: CollectSummary | None,
    errors: int,
    leftovers: list[str],
    expected: str,
) -> None:
    state = state_of("alpha").model_copy(
        update={
            "collected": summary,
            "errors": [ErrorInfo(step="agent", error="E", cause="c")] * errors,
        }
    )
    assert config_status(state, CleanupReport(leftovers=leftovers)) == expected


def test_cleanup_run_releases_every_config_by_tag(state_of: StateOf, fakes: Any) -> None:
    for config_id in ("alpha", "beta"):
        fakes.filesystems.adopt(
            FileSystemRef(target_id="t", kind="efs", file_system_id=f"fs-{config_id}"), "run-1", config_id
        )
    reports = cleanup_run("run-1", ["alpha", "beta"], fakes.services)
    assert set(reports) == {"alpha", "beta"}
    assert [(r, run, cfg) for r, run, cfg in fakes.compute.terminated] == [
        (Resources(), "run-1", "alpha"),
        (Resources(), "run-1", "beta"),
    ]
    assert [(run, cfg) for run, cfg, _ in fakes.agents.stops] == [("run-1", "alpha"), ("run-1", "beta")]
    assert reports["alpha"].deleted == ["fs-alpha"] and reports["beta"].deleted == ["fs-beta"]
    assert all(r.leftovers == [] for r in reports.values())


# =================================================================================== finalize


def result(config_id: str, status: str, records: int) -> dict[str, Any]:
    return ConfigResult(run_id="run-1", config_id=config_id, status=status, records=records).model_dump(
        mode="json"
    )


@pytest.mark.parametrize(
    ("statuses", "expected"),
    [
        (["succeeded", "succeeded"], "SUCCEEDED"),
        (["succeeded", "failed"], "PARTIAL"),
        (["succeeded", "partial"], "PARTIAL"),
        (["partial", "partial"], "PARTIAL"),
        (["partial", "failed"], "PARTIAL"),
        (["failed", "failed"], "FAILED"),
        (["failed"], "FAILED"),
    ],
)
def test_finalize_status(fakes: Any, statuses: list[str], expected: str) -> None:
    entries = [result(f"c{n}", status, 0 if status == "failed" else 10) for n, status in enumerate(statuses)]
    fakes.clock.advance(3600)
    summary = finalize("run-1", "suite-a", wf.START_ISO, entries, fakes.services)
    assert summary.status == expected
    assert summary.records == sum(e["records"] for e in entries)
    assert [c.config_id for c in summary.configs] == [e["config_id"] for e in entries]
    assert (summary.started_at, summary.ended_at) == (wf.START_ISO, "2026-11-21T18:00:00Z")
    assert fakes.store.finished == [summary]
    assert fakes.store.runs["run-1"]["status"] == expected


def failed_cleanup_entry(state: ConfigState, **extra: Any) -> dict[str, Any]:
    """What CleanupFailed hands to Finalize: the state Cleanup got, plus its caught error."""
    caught = {"Error": "ResourceBusyError", "Cause": lambda_cause("mount targets of fs-0001 remain", "X")}
    return {**state.model_dump(mode="json"), **extra, "caught": caught}


def test_finalize_releases_a_failed_cleanup_again(state_of: StateOf, fakes: Any) -> None:
    state = collected(state_of, fakes)
    entries = [result("beta", "succeeded", 4), failed_cleanup_entry(state)]
    summary = finalize("run-1", "suite-a", wf.START_ISO, entries, fakes.services)
    beta, alpha = summary.configs
    assert beta.status == "succeeded"
    assert alpha.status == "partial" and alpha.records == 3 and alpha.leftovers == []
    assert alpha.errors == [
        ErrorInfo(step="cleanup", error="ResourceBusyError", cause="mount targets of fs-0001 remain")
    ]
    assert sorted(fakes.filesystems.deleted) == ["fs-0001", "fs-0002"]
    assert fakes.compute.terminated[-1][1:] == ("run-1", "alpha")
    assert summary.status == "PARTIAL" and summary.records == 7
    assert fakes.store.runs["run-1"]["status"] == "PARTIAL"


def test_finalize_reports_a_config_it_cannot_release_for_the_janitor(state_of: StateOf, fakes: Any) -> None:
    state = collected(state_of, fakes)
    fakes.filesystems.busy = {"fs-0002"}
    summary = finalize("run-1", "suite-a", wf.START_ISO, [failed_cleanup_entry(state)], fakes.services)
    (alpha,) = summary.configs
    assert [e.step for e in alpha.errors] == ["cleanup", "finalize"]
    assert alpha.errors[-1].error == "ResourceBusyError" and "fs-0002" in alpha.errors[-1].cause
    assert len(alpha.leftovers) == 1 and "janitor" in alpha.leftovers[0]
    assert summary.status == "PARTIAL"
    assert fakes.store.finished == [summary]


def test_finalize_failed_cleanup_without_records_is_failed(state_of: StateOf, fakes: Any) -> None:
    state = provisioned(state_of, fakes)
    summary = finalize("run-1", "suite-a", wf.START_ISO, [failed_cleanup_entry(state)], fakes.services)
    assert summary.configs[0].status == "failed" and summary.status == "FAILED"


def test_finalize_keeps_an_error_recordfailure_could_not_record(state_of: StateOf, fakes: Any) -> None:
    state = provisioned(state_of, fakes)
    record_error = {"Error": "Lambda.ServiceException", "Cause": lambda_cause("store down", "X")}
    entry = failed_cleanup_entry(state, record_error=record_error)
    summary = finalize("run-1", "suite-a", wf.START_ISO, [entry], fakes.services)
    assert ("record_failure", "Lambda.ServiceException") in [
        (e.step, e.error) for e in summary.configs[0].errors
    ]


def test_finalize_refuses_an_entry_it_does_not_understand(fakes: Any) -> None:
    with pytest.raises(ValidationError):
        finalize("run-1", "s", wf.START_ISO, [{"config_id": "a"}], fakes.services)
    assert fakes.store.finished == []


def test_abort_run_releases_everything_keeps_measurements_and_records_failed(
    state_of: StateOf, fakes: Any
) -> None:
    """The configs map failed as a whole: every config is released by tag and the run is FAILED."""
    collected(state_of, fakes)  # alpha measured something before the map failed
    caught = {"Error": "States.Runtime", "Cause": "an error no iteration caught"}
    summary = abort_run("run-1", "suite-a", "2026-11-21T17:00:00Z", ["alpha", "beta"], caught, fakes.services)
    assert summary.status == "FAILED"
    assert [(c.config_id, c.status) for c in summary.configs] == [("alpha", "partial"), ("beta", "failed")]
    assert summary.configs[0].records > 0 and summary.configs[1].records == 0
    assert all(c.errors[0].step == "run" and c.errors[0].error == "States.Runtime" for c in summary.configs)
    assert [(run, cfg) for _, run, cfg in fakes.compute.terminated][-2:] == [
        ("run-1", "alpha"),
        ("run-1", "beta"),
    ]
    assert fakes.store.finished[-1] == summary

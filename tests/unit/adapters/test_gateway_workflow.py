"""The File Gateway through the workflow's own steps (Provision, CheckReady polls, StartAgent,
RecordFailure, Cleanup, and SweepRun's abort): EC2 and S3 on moto, Storage Gateway through the
Stubber of ``test_gateway_lifecycle``, the activation redirect on 127.0.0.1. Every path ends with 0
leaked resources, and the gateway side is always gone before the client is terminated."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import boto3
import pytest

# The lifecycle test's world (its fixtures come with it; tests/ is not a package: pytest's
# prepend import mode puts this directory on sys.path).
from test_gateway_lifecycle import (  # type: ignore[import-not-found]
    CONFIG,
    GATEWAY_ARN,
    REGION,
    ROLE,
    RUN,
    SHARE_ARN,
    SHARE_BUCKET,
    STUDY_CONFIG,
    World,
    disk,
    endpoint,
    expect_activation,
    expect_cache,
    expect_release,
    expect_share,
    share_writes,
    world,
)
from tests.support.runs import work_item

from storagebench.adapters.aws.ec2 import Ec2Compute
from storagebench.adapters.aws.filesystems import AwsFileSystems
from storagebench.adapters.aws.s3 import S3Artifacts
from storagebench.adapters.aws.settings import AwsSettings
from storagebench.agent import targets as agent_targets
from storagebench.agent.emulate import EmulatedFleet
from storagebench.agent.log import Progress
from storagebench.agent.proc import CommandError
from storagebench.core.errors import ProvisioningError
from storagebench.core.guardrails import Guardrails
from storagebench.core.state import (
    AgentRun,
    ConfigResult,
    ConfigState,
    Resources,
    RunSummary,
    StepTiming,
)
from storagebench.request import parse_request
from storagebench.workflow.artifact_keys import request_key
from storagebench.workflow.ports import GatewayServices, Services
from storagebench.workflow.steps.check_ready import check_ready
from storagebench.workflow.steps.cleanup import cleanup
from storagebench.workflow.steps.provision import provision
from storagebench.workflow.steps.record_failure import record_failure
from storagebench.workflow.steps.start_agent import start_agent
from storagebench.workflow.steps.sweep_run import abort_run

__all__ = ["endpoint", "world"]  # fixtures, used by name

DOCUMENT = {
    "name": "gw",
    "region": REGION,
    "configs": [STUDY_CONFIG],
    "workloads": [{"profile": "dd-seq-write-1m-dsync"}],
}


@dataclass
class OnlineAgents:
    """The client's SSM agent as online (moto registers no managed instances); records stops."""

    stops: list[str] = field(default_factory=list)

    def online(self, resources: Resources) -> bool:
        return resources.instance_id is not None

    def principal(self, instance_id: str) -> str:
        return f"AROAEXAMPLEROLE12345:{instance_id}"

    def start(self, state: ConfigState, plan: Any, output_prefix: str, task_token: str, *_: Any) -> AgentRun:
        return AgentRun(command_id="cmd-1", plan_key="plan.json", output_prefix=output_prefix, started_at="")

    def stop(self, run_id: str, config_id: str, resources: Resources) -> list[str]:
        self.stops.append(config_id)
        return []


@dataclass
class Store:
    statuses: list[str] = field(default_factory=list)
    last: ConfigState | None = None
    finished: list[RunSummary] = field(default_factory=list)

    def put_config(self, state: ConfigState, status: str) -> None:
        self.statuses.append(status)
        self.last = state

    def run_status(self, run_id: str) -> str | None:
        return "RUNNING"

    def get_run(self, run_id: str) -> dict[str, Any]:
        return {"results": []}

    def finish_run(self, summary: RunSummary) -> None:
        self.finished.append(summary)


class ClientAfterGateway(Ec2Compute):
    """The client's compute; terminating it while a gateway or share is alive fails the test."""

    world: World

    def terminate(self, resources: Resources, run_id: str, config_id: str) -> list[str]:
        assert self.world.ledger.gateways == set() and self.world.ledger.shares == set()
        return super().terminate(resources, run_id, config_id)


@dataclass
class Flow:
    world: World
    services: Services
    agents: OnlineAgents
    store: Store

    def provisioned(self) -> ConfigState:
        item = work_item(
            RUN,
            CONFIG,
            "gw",
            REGION,
            "2026-11-21T00:00:00Z",
            "2026-11-22T00:00:00Z",
            timing=StepTiming(ready_poll_s=30, ready_timeout_s=3600, heartbeat_s=300, command_timeout_s=3600),
        )
        state = provision(ConfigState(item=item), self.services)
        # The share admits the client's address alone: the one CheckReady reads from EC2.
        self.world.client_ip = str(
            self.world.ec2.describe_instances(InstanceIds=[str(state.resources.instance_id)])["Reservations"][
                0
            ]["Instances"][0]["PrivateIpAddress"]
        )
        return state

    def poll(self, state: ConfigState, polls: int = 5) -> ConfigState:
        for _ in range(polls):
            state = check_ready(state, self.services)
            if state.ready is not None and state.ready.state == "ready":
                break
        return state

    def fail_and_clean(self, state: ConfigState, error: Exception) -> ConfigResult:
        """RecordFailure with what the Catch put in $.caught, then Cleanup (the ASL's error path)."""
        caught = {"Error": type(error).__name__, "Cause": json.dumps({"errorMessage": str(error)})}
        return cleanup(record_failure(state, caught, self.services), self.services)


@pytest.fixture
def flow(world: World, settings: AwsSettings, bucket: str, tmp_path: Path) -> Flow:
    ec2, ssm, s3 = (boto3.client(s, region_name=REGION) for s in ("ec2", "ssm", "s3"))
    compute = ClientAfterGateway(ec2, ssm, settings)
    compute.world = world
    artifacts = S3Artifacts(s3, bucket)
    artifacts.put_json(request_key(RUN), parse_request(DOCUMENT).model_dump(mode="json"))
    agents, store = OnlineAgents(), Store()
    services = Services(
        compute=compute,
        filesystems=AwsFileSystems(
            boto3.client("efs", region_name=REGION), boto3.client("fsx", region_name=REGION), settings, ec2
        ),
        agents=agents,
        artifacts=artifacts,
        store=store,  # type: ignore[arg-type]  # the three calls these paths make
        guardrails=Guardrails(),
        stack="storagebench",
        region=REGION,
        gateways=GatewayServices(ports=world.ports, share_bucket=SHARE_BUCKET, role_arn=ROLE),
    )
    return Flow(world, services, agents, store)


def _found_by_name(world: World) -> None:
    """The gateway as ListGateways shows it to a release that has no recorded ARN."""
    listed = {
        "GatewayARN": GATEWAY_ARN,
        "GatewayName": world.plan.gateway_name,
        "GatewayOperationalState": "ACTIVE",
    }
    world.stub.add_response("list_gateways", {"Gateways": [listed]}, {})


def test_success_provision_polls_until_the_share_is_available_mounts_it_and_cleans_up(flow: Flow) -> None:
    world = flow.world
    state = flow.provisioned()
    assert [g.stage for g in state.resources.gateways] == ["launching"]
    assert state.resources.gateways[0].appliance_id is not None
    expect_activation(world)
    expect_cache(world)
    expect_share(world)
    waiting = check_ready(state, flow.services)
    assert waiting.ready is not None and waiting.ready.state == "waiting"
    assert waiting.ready.checks["gateways_available"] is False and "to connect" in waiting.ready.reason
    state = flow.poll(waiting)
    assert state.ready is not None and state.ready.state == "ready", state.ready
    assert state.ready.checks["gateways_available"] and state.ready.checks["agent_online"]
    ref = state.resources.gateways[0]
    assert (ref.gateway_arn, ref.file_share_arn, ref.stage) == (GATEWAY_ARN, SHARE_ARN, "available")
    assert state.resources.private_ip == world.client_ip
    # The agent's plan mounts the share on the client with the request's options.
    started = start_agent(state, "token", flow.services)
    plan = flow.services.artifacts.get_json(f"runs/{RUN}/{CONFIG}/plan.json")
    assert plan["targets"] == [
        {
            "id": "share",
            "kind": "nfs",
            "source": f"{ref.appliance_ip}:/{world.plan.share_name}",
            "fstype": "nfs",
            "mount_options": "nolock,hard",
        }
    ]
    share_writes(world)
    expect_release(world, gateway=True, share=True)
    result = cleanup(started, flow.services)
    assert flow.store.statuses == ["PROVISIONING", "RUNNING", "FAILED"]  # no Collect here: 0 records
    assert flow.store.last is not None and flow.store.last.cleanup is not None
    deleted = flow.store.last.cleanup.deleted
    # The gateway side first (share, gateway, appliance, objects), then the client.
    assert (
        deleted.index(SHARE_ARN)
        < deleted.index(GATEWAY_ARN)
        < deleted.index(str(started.resources.instance_id))
    )
    assert flow.agents.stops == [CONFIG]
    world.assert_nothing_left(result.leftovers)


@pytest.mark.parametrize("refusal", ["http-403", "redirect-without-key"])
def test_activation_refused_fails_the_config_through_record_failure_and_cleanup(
    flow: Flow, refusal: str
) -> None:
    world = flow.world
    state = flow.provisioned()
    world.stub.add_response("list_gateways", {"Gateways": []}, {})
    if refusal == "http-403":
        world.endpoint.status = 403
    else:
        world.endpoint.location = (
            "https://console.aws.amazon.com/storagegateway/activate?errorMessage=refused"
        )
    with pytest.raises(ProvisioningError, match="activation refused") as raised:
        check_ready(state, flow.services)
    expect_release(world, gateway=False, share=False)
    result = flow.fail_and_clean(state, raised.value)
    assert result.status == "failed" and [e.step for e in result.errors] == ["ready"]
    assert "activation refused" in result.errors[0].cause
    world.assert_nothing_left(result.leftovers)


def test_a_missing_cache_disk_fails_the_config_and_the_gateway_is_found_by_name(flow: Flow) -> None:
    world = flow.world
    state = flow.provisioned()
    expect_activation(world)
    world.stub.add_response(
        "list_local_disks",
        {"GatewayARN": GATEWAY_ARN, "Disks": [disk("nvme2n1", 150)]},
        {"GatewayARN": GATEWAY_ARN},
    )
    with pytest.raises(ProvisioningError, match="no free 512 GiB disk") as raised:
        check_ready(state, flow.services)
    assert state.resources.gateways[0].gateway_arn is None  # activated in the poll that failed
    _found_by_name(world)
    expect_release(world, gateway=True, share=False)
    result = flow.fail_and_clean(state, raised.value)
    assert result.status == "failed"
    world.assert_nothing_left(result.leftovers)


def test_share_creation_failing_fails_the_config_and_releases_the_recorded_gateway(flow: Flow) -> None:
    world = flow.world
    expect_activation(world)
    expect_cache(world)
    world.stub.add_client_error(
        "create_nfs_file_share",
        service_error_code="InvalidGatewayRequestException",
        service_message="The role cannot be assumed",
        http_status_code=400,
        modeled_fields={"error": {"errorCode": "InvalidParameters"}},
    )
    state = flow.poll(flow.provisioned(), polls=1)  # activated; the gateway does not answer yet
    assert state.resources.gateways[0].gateway_arn == GATEWAY_ARN
    with pytest.raises(ProvisioningError, match="InvalidParameters: The role cannot be assumed") as raised:
        check_ready(state, flow.services)
    expect_release(world, gateway=True, share=False)
    result = flow.fail_and_clean(state, raised.value)
    assert result.status == "failed"
    world.assert_nothing_left(result.leftovers)


def test_a_client_mount_failing_fails_the_agent_and_cleanup_leaves_nothing(
    flow: Flow, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    world = flow.world
    expect_activation(world)
    expect_cache(world)
    expect_share(world)
    state = flow.poll(flow.provisioned())
    state = start_agent(state, "token", flow.services)
    spec = flow.services.artifacts.get_json(f"runs/{RUN}/{CONFIG}/plan.json")["targets"][0]

    def refuse(argv: Any, **_: Any) -> Any:
        raise CommandError(f"{' '.join(argv)} failed with status 32: mount.nfs: access denied by server")

    monkeypatch.setattr(agent_targets, "run", refuse)
    machine = agent_targets.Targets(
        "run", str(tmp_path / "mnt"), EmulatedFleet(str(tmp_path), "sb"), Progress(None, quiet=True)
    )
    with pytest.raises(agent_targets.TargetError, match="access denied by server") as raised:
        machine.prepare(spec)
    expect_release(world, gateway=True, share=True)
    result = flow.fail_and_clean(state, raised.value)
    assert result.status == "failed" and result.errors[0].step == "agent"
    assert "mount -t nfs -o nolock,hard" in result.errors[0].cause
    world.assert_nothing_left(result.leftovers)


def test_an_aborted_run_releases_the_gateway_by_name_before_the_client(flow: Flow) -> None:
    world = flow.world
    expect_activation(world)
    expect_cache(world)
    expect_share(world)
    assert flow.poll(flow.provisioned()).ready.state == "ready"  # type: ignore[union-attr]
    share_writes(world)
    # SweepRun's abort knows only the run and config ids: everything is found by name and tags.
    _found_by_name(world)
    expect_release(world, gateway=True, share=True)
    summary = abort_run(
        RUN, "gw", "2026-11-21T00:00:00Z", [CONFIG], {"Error": "States.Runtime"}, flow.services
    )
    assert summary.status == "FAILED" and summary.configs[0].leftovers == []
    world.assert_nothing_left(summary.configs[0].leftovers)


@pytest.mark.parametrize("damage", ["deleted", "not-json", "invalid"])
def test_release_does_not_depend_on_the_request(flow: Flow, bucket: str, damage: str) -> None:
    """request.json deleted or corrupted mid-run: Cleanup still releases the recorded gateway
    and the client, and says that an unrecorded gateway could not be looked up by name."""
    world = flow.world
    expect_activation(world)
    expect_cache(world)
    expect_share(world)
    state = flow.poll(flow.provisioned())
    assert state.ready is not None and state.ready.state == "ready"
    s3 = boto3.client("s3", region_name=REGION)
    key = request_key(RUN)
    if damage == "deleted":
        s3.delete_object(Bucket=bucket, Key=key)
    else:
        body = b"{not json" if damage == "not-json" else json.dumps({"name": "gw", "configs": []}).encode()
        s3.put_object(Bucket=bucket, Key=key, Body=body)
    share_writes(world)
    expect_release(world, gateway=True, share=True)
    result = cleanup(state, flow.services)
    assert flow.store.last is not None and flow.store.last.cleanup is not None
    deleted = flow.store.last.cleanup.deleted
    assert SHARE_ARN in deleted and GATEWAY_ARN in deleted and str(state.resources.instance_id) in deleted
    (note,) = result.leftovers
    assert note.startswith("the run's request could not be read (") and "janitor" in note
    assert world.live_instances() == [] and world.objects() == 0
    assert world.ledger.gateways == set() and world.ledger.shares == set()
    world.stub.assert_no_pending_responses()

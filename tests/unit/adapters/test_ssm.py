"""SsmAgents: the command sent (moto), checked against the document in template.yaml; SSM calls
moto does not implement (DescribeInstanceInformation, CancelCommand) with botocore's Stubber."""

from __future__ import annotations

import hashlib
import json
import re
from datetime import UTC, datetime
from typing import Any
from urllib.parse import parse_qs, urlsplit

import boto3
import pytest
from botocore.stub import Stubber
from tests.support.runs import work_item
from tests.support.stack_env import aws_settings

from storagebench.adapters.agent_bundle import current_bundle
from storagebench.adapters.aws import ssm as ssm_adapter
from storagebench.adapters.aws.settings import AwsSettings
from storagebench.adapters.aws.ssm import DELIVERY_TIMEOUT_S, SsmAgents, heartbeat_interval
from storagebench.core.errors import AgentError, NotYetConsistentError, ThrottledError
from storagebench.core.state import AgentRun, ConfigState, Resources
from storagebench.protocol.plan import Plan

REGION = "us-east-1"
INSTANCE = "i-0123456789abcdef0"
TOKEN = "AQCEAAAAKgAAAAMAAAAAAAAAAc" + "x" * 200
PLAN: Plan = {"plan_version": 1, "run_id": "r1", "config_id": "gp3", "targets": [], "steps": []}


class FixedClock:
    def now(self) -> datetime:
        return datetime(2030, 1, 2, 4, 0, 0, tzinfo=UTC)


def state(instance_id: str | None = INSTANCE, command_id: str | None = None) -> ConfigState:
    item = work_item("r1", "gp3", "weekly", REGION, "2030-01-02T03:04:05Z", "2030-01-03T03:04:05Z")
    agent = None
    if command_id is not None:
        agent = AgentRun(
            command_id=command_id,
            plan_key="runs/r1/gp3/plan.json",
            output_prefix="runs/r1/gp3/agent/",
            started_at="2030-01-02T04:00:00Z",
        )
    return ConfigState(item=item, resources=Resources(instance_id=instance_id), agent=agent)


@pytest.fixture
def agents(settings: AwsSettings, bucket: str) -> SsmAgents:
    return SsmAgents(
        boto3.client("ssm", region_name=REGION),
        boto3.client("s3", region_name=REGION),
        settings,
        clock=FixedClock(),
    )


def stub_settings() -> AwsSettings:
    return aws_settings(REGION, artifacts_bucket="bucket", instance_profile_arn="arn:p")


class _Artifacts:
    def __init__(self) -> None:
        self.texts: dict[str, str] = {}

    def put_json(self, key: str, document: Any) -> str:
        return f"s3://bucket/{key}"

    def put_text(self, key: str, text: str, content_type: str) -> str:
        self.texts[key] = text
        return f"s3://bucket/{key}"

    def uri(self, key: str) -> str:
        return f"s3://bucket/{key}"


class _Presigner:
    def generate_presigned_url(self, _: str, Params: dict[str, str], ExpiresIn: int) -> str:  # noqa: N803
        return f"https://{Params['Bucket']}.s3.amazonaws.com/{Params['Key']}?X-Amz-Signature=x"


def _agents_on_stubbed_ssm(ssm: Any) -> SsmAgents:
    """SsmAgents whose S3 side answers in memory (the agent already uploaded): for Stubber tests of SSM."""
    agents = SsmAgents(ssm, _Presigner(), stub_settings(), artifacts=_Artifacts(), bundle=current_bundle())  # type: ignore[arg-type]
    agents._uploaded.add(current_bundle().key)
    return agents


def _commands(agents: SsmAgents) -> list[dict[str, Any]]:
    return list(agents.ssm.list_commands(InstanceId=INSTANCE)["Commands"])


# ------------------------------------------------------------------------ start (moto)


def test_start_uploads_plan_and_agent_and_sends_the_document(
    agents: SsmAgents, bucket: str, settings: AwsSettings
) -> None:
    prefix = f"runs/r1/gp3/instances/{settings.instance_role_id}:{INSTANCE}/"
    run = agents.start(state(), PLAN, f"{prefix}agent/", TOKEN, heartbeat_s=300, timeout_s=7200)

    bundle = current_bundle()
    s3 = agents.s3
    assert agents.artifacts.get_json("runs/r1/gp3/plan.json") == PLAN
    stored = s3.get_object(Bucket=bucket, Key=f"agent/{bundle.version}/{bundle.sha256}.pyz")["Body"].read()
    assert stored == bundle.data

    [command] = _commands(agents)
    assert run == AgentRun(
        command_id=command["CommandId"],
        plan_key="runs/r1/gp3/plan.json",
        output_prefix=f"{prefix}agent/",
        started_at="2030-01-02T04:00:00Z",
    )
    assert command["DocumentName"] == settings.agent_document
    assert command["InstanceIds"] == [INSTANCE]
    parameters = dict(command["Parameters"])
    agent_url, plan_url = parameters.pop("AgentUrl")[0], parameters.pop("PlanUrl")[0]
    # presigned GETs: the instance reads exactly these two objects, and no others, without S3 rights
    assert urlsplit(agent_url).path.endswith(f"/agent/{bundle.version}/{bundle.sha256}.pyz")
    assert urlsplit(plan_url).path.endswith("/runs/r1/gp3/plan.json")
    for url in (agent_url, plan_url):
        assert "Signature" in parse_qs(urlsplit(url).query) or "X-Amz-Signature" in url
    plan_bytes = s3.get_object(Bucket=bucket, Key="runs/r1/gp3/plan.json")["Body"].read()
    assert parameters == {
        "AgentSha256": [bundle.sha256],
        "PlanSha256": [hashlib.sha256(plan_bytes).hexdigest()],
        "OutputUri": [f"s3://{bucket}/{prefix}agent/"],
        # the token itself is not a parameter (SSM's command history shows parameters): it waits
        # in the instance's own prefix, and the command names it by address and digest
        "TaskTokenUri": [f"s3://{bucket}/{prefix}task-token"],
        "TaskTokenSha256": [hashlib.sha256(TOKEN.encode()).hexdigest()],
        "HeartbeatSeconds": ["150"],  # half the task's heartbeat timeout
        "Region": [REGION],
        "executionTimeout": ["7200"],
    }
    assert command["OutputS3BucketName"] == bucket
    assert command["OutputS3KeyPrefix"] == f"{prefix}ssm"  # the instance's prefix: its role may write there
    assert s3.get_object(Bucket=bucket, Key=f"{prefix}task-token")["Body"].read() == TOKEN.encode()
    assert TOKEN not in json.dumps(command, default=str)
    assert command["TimeoutSeconds"] == DELIVERY_TIMEOUT_S


def test_parameters_match_the_agent_document_in_the_template(
    agents: SsmAgents, document_parameters: dict[str, Any]
) -> None:
    request = agents.command_request(
        state(),
        "runs/r1/gp3/plan.json",
        "a" * 64,
        "runs/r1/gp3/agent",
        TOKEN,
        heartbeat_s=600,
        timeout_s=172_800,
    )
    sent = request["Parameters"]
    assert set(sent) <= set(document_parameters)
    required = {name for name, spec in document_parameters.items() if "default" not in spec}
    assert required <= set(sent)
    for name, values in sent.items():
        pattern = document_parameters[name].get("allowedPattern")
        assert len(values) == 1
        if pattern:
            assert re.match(pattern, values[0]), (name, values[0], pattern)


def test_a_retried_start_does_not_run_the_agent_twice(
    agents: SsmAgents, settings: AwsSettings, call_log: Any
) -> None:
    ssm_log = call_log(agents.ssm)
    first = agents.start(state(), PLAN, "runs/r1/gp3/agent/", TOKEN, heartbeat_s=300, timeout_s=7200)
    again = SsmAgents(agents.ssm, agents.s3, settings).start(
        state(), PLAN, "runs/r1/gp3/agent/", TOKEN, heartbeat_s=300, timeout_s=7200
    )
    assert again.command_id == first.command_id
    assert ssm_log.count("SendCommand") == 1

    # A RunAgent retry gets a new token: the earlier attempt's command, which nobody waits for any
    # more, is cancelled before the new one is sent (moto has no cancel_command: record the call).
    cancelled: list[str] = []

    def cancel(**arguments: str) -> None:
        cancelled.append(arguments["CommandId"])

    agents.ssm.cancel_command = cancel  # type: ignore[method-assign]
    other = agents.start(state(), PLAN, "runs/r1/gp3/agent/", TOKEN + "-new", heartbeat_s=300, timeout_s=7200)
    assert other.command_id != first.command_id
    assert cancelled == [first.command_id]
    assert len(_commands(agents)) == 2


def test_the_agent_is_uploaded_once(agents: SsmAgents, settings: AwsSettings, call_log: Any) -> None:
    s3_log = call_log(agents.s3)
    agents.ensure_agent()
    agents.ensure_agent()  # remembered by this adapter
    SsmAgents(agents.ssm, agents.s3, settings).ensure_agent()  # a new container finds it in the bucket
    assert s3_log.count("PutObject") == 1
    assert s3_log.count("HeadObject") == 2


@pytest.mark.parametrize(("timeout", "interval"), [(600, 300), (300, 150), (61, 30), (1, 1)])
def test_heartbeat_is_half_the_timeout(timeout: int, interval: int) -> None:
    assert heartbeat_interval(timeout) == interval


def test_a_run_longer_than_ssm_allows_is_refused(agents: SsmAgents) -> None:
    with pytest.raises(AgentError, match="172800"):
        agents.command_request(state(), "p", "a" * 64, "out/", TOKEN, heartbeat_s=300, timeout_s=172_801)
    with pytest.raises(AgentError, match="no instance"):
        agents.command_request(state(None), "p", "a" * 64, "out/", TOKEN, heartbeat_s=300, timeout_s=60)


def test_send_to_an_unregistered_instance_is_retried(stack_env: dict[str, str]) -> None:
    ssm = boto3.client("ssm", region_name=REGION)

    agents = _agents_on_stubbed_ssm(ssm)
    with Stubber(ssm) as stub:
        stub.add_response("list_commands", {"Commands": []}, {"InstanceId": INSTANCE})
        stub.add_client_error("send_command", "InvalidInstanceId", "Instances not in a valid state")
        with pytest.raises(NotYetConsistentError, match="InvalidInstanceId"):
            agents.start(state(), PLAN, "runs/r1/gp3/agent/", TOKEN, heartbeat_s=300, timeout_s=7200)
        stub.add_response("list_commands", {"Commands": []}, {"InstanceId": INSTANCE})
        stub.add_client_error("send_command", "InvalidDocument", "Document doc does not exist")
        with pytest.raises(AgentError, match="InvalidDocument"):
            agents.start(state(), PLAN, "runs/r1/gp3/agent/", TOKEN, heartbeat_s=300, timeout_s=7200)


# ------------------------------------------------------------------------ online and stop (Stubber)


@pytest.mark.parametrize(("ping", "expected"), [("Online", True), ("ConnectionLost", False), (None, False)])
def test_online_asks_for_this_instance_only(
    stack_env: dict[str, str], ping: str | None, expected: bool
) -> None:
    ssm = boto3.client("ssm", region_name=REGION)
    agents = SsmAgents(ssm, object(), stub_settings(), artifacts=object())  # type: ignore[arg-type]
    found = [] if ping is None else [{"InstanceId": INSTANCE, "PingStatus": ping}]
    with Stubber(ssm) as stub:
        stub.add_response(
            "describe_instance_information",
            {"InstanceInformationList": found},
            {"Filters": [{"Key": "InstanceIds", "Values": [INSTANCE]}]},
        )
        assert agents.online(Resources(instance_id=INSTANCE)) is expected
    assert agents.online(Resources()) is False


def test_online_errors(stack_env: dict[str, str]) -> None:
    ssm = boto3.client("ssm", region_name=REGION)
    agents = SsmAgents(ssm, object(), stub_settings(), artifacts=object())  # type: ignore[arg-type]
    with Stubber(ssm) as stub:
        stub.add_client_error("describe_instance_information", "InvalidInstanceId", "not registered")
        assert agents.online(Resources(instance_id=INSTANCE)) is False
        stub.add_client_error("describe_instance_information", "ThrottlingException", "Rate exceeded")
        with pytest.raises(ThrottledError):
            agents.online(Resources(instance_id=INSTANCE))


def test_stop_cancels_the_instances_agent_commands_and_tolerates_finished_ones(
    stack_env: dict[str, str],
) -> None:
    ssm = boto3.client("ssm", region_name=REGION)
    settings = stub_settings()
    agents = SsmAgents(ssm, object(), settings, artifacts=object())  # type: ignore[arg-type]
    ours = "0b7e0b5a-1c2d-4e5f-8a9b-0c1d2e3f4a5b"
    other = "9f9e0b5a-1c2d-4e5f-8a9b-0c1d2e3f4a5b"
    listing = {
        "Commands": [
            {"CommandId": ours, "DocumentName": settings.agent_document},
            {"CommandId": other, "DocumentName": "AWS-RunShellScript"},
        ]
    }
    query = {"InstanceId": INSTANCE, "Filters": [{"key": "Status", "value": "InProgress"}]}
    resources = Resources(instance_id=INSTANCE)
    with Stubber(ssm) as stub:
        stub.add_response("list_commands", listing, query)
        stub.add_response("cancel_command", {}, {"CommandId": ours})  # only our document's command
        assert agents.stop("r", "c", resources) == []
        stub.add_response("list_commands", listing, query)
        stub.add_client_error("cancel_command", "InvalidCommandId", "")  # finished meanwhile
        assert agents.stop("r", "c", resources) == []
        stub.add_client_error("list_commands", "InvalidInstanceId", "terminated")
        assert agents.stop("r", "c", resources) == []
        stub.add_response("list_commands", listing, query)
        stub.add_client_error("cancel_command", "ThrottlingException", "slow down")
        with pytest.raises(ThrottledError):
            agents.stop("r", "c", resources)
        stub.assert_no_pending_responses()
    assert agents.stop("r", "c", Resources()) == []  # never launched: nothing to cancel


def test_without_list_commands_permission_the_command_is_still_sent(
    stack_env: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # Record the warning on the module's logger itself: Powertools' Logger reconfigures the
    # "storagebench" logger (level, propagation) once any handler module is imported, so what
    # caplog sees depends on test order.
    warnings: list[str] = []

    class Recorder:
        def warning(self, msg: str, *args: object) -> None:
            warnings.append(msg % args)

    monkeypatch.setattr(ssm_adapter, "LOG", Recorder())
    _start_without_list_permission()
    assert any("cannot check for a command already sent" in w for w in warnings), warnings


def _start_without_list_permission() -> None:
    ssm = boto3.client("ssm", region_name=REGION)

    agents = _agents_on_stubbed_ssm(ssm)
    with Stubber(ssm) as stub:
        stub.add_client_error(
            "list_commands", "AccessDeniedException", "not authorized to perform ssm:ListCommands"
        )
        stub.add_response("send_command", {"Command": {"CommandId": "0b7e0b5a-1c2d-4e5f-8a9b-0c1d2e3f4a5b"}})
        run = agents.start(state(), PLAN, "runs/r1/gp3/agent/", TOKEN, heartbeat_s=300, timeout_s=7200)
    assert run.command_id == "0b7e0b5a-1c2d-4e5f-8a9b-0c1d2e3f4a5b"

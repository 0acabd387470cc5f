"""The janitor on moto: EC2 instances and volumes, EFS (with a mount target) and FSx for Lustre of
this stack, another stack and nobody, expired or not; a stuck RUNNING run in the table template.yaml
defines; notifications through an SNS topic read back from an SQS subscription; the Lambda handler.

What moto does not model and so is not tested here: FSx lifecycles (moto deletes at once and reports
no Lifecycle), EFS mount targets that take time to delete (moto removes them at once; the busy path
is covered by test_filesystems.py with a Stubber), and IAM conditions (moto does not enforce the
function's aws:ResourceTag policy).
"""

from __future__ import annotations

import json
import os
import sys
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import boto3
import pytest
from tests.support.modules import load_module

from storagebench import observability
from storagebench.adapters.aws.dynamodb import DynamoResultsStore
from storagebench.adapters.aws.ec2 import Ec2Compute
from storagebench.adapters.aws.filesystems import AwsFileSystems
from storagebench.adapters.aws.settings import AwsSettings
from storagebench.adapters.aws.sns import SnsNotifier
from storagebench.adapters.aws.sweep import AwsTaggedResources, build_janitor
from storagebench.core.tags import TAG_CONFIG, TAG_EXPIRES, TAG_RUN, TAG_STACK
from storagebench.janitor import Janitor, SweepIncompleteError
from storagebench.wiring import janitor as janitor_wiring

REGION = "us-east-1"
ACCOUNT = "123456789012"  # moto's default account
STACK = "storagebench-test"  # the adapters conftest's STACK_NAME
NOW = datetime(2030, 1, 2, 12, 0, 0, tzinfo=UTC)
PAST = "2030-01-02T09:00:00Z"  # three hours before NOW
FUTURE = "2030-01-02T18:00:00Z"
FUNCTIONS = Path(__file__).resolve().parents[3] / "functions"


@dataclass
class FixedClock:
    moment: datetime = NOW

    def now(self) -> datetime:
        return self.moment


def tags(run: str, expires: str, stack: str | None = STACK, config: str = "gp3") -> list[dict[str, str]]:
    values = {TAG_RUN: run, TAG_CONFIG: config, TAG_EXPIRES: expires}
    if stack is not None:
        values[TAG_STACK] = stack
    return [{"Key": k, "Value": v} for k, v in values.items()]


@dataclass
class World:
    """Everything the test created, by what the janitor must do with it."""

    sweep: dict[str, str]  # resource id -> kind: expired resources of this stack
    keep: dict[str, str]  # resource id -> why it must survive


@pytest.fixture
def topic(aws: None) -> tuple[str, str]:
    """An SNS topic and the SQS queue subscribed to it (raw delivery off: the SNS envelope)."""
    sns, sqs = boto3.client("sns", region_name=REGION), boto3.client("sqs", region_name=REGION)
    topic_arn = sns.create_topic(Name="storagebench-notifications")["TopicArn"]
    queue_url = sqs.create_queue(QueueName="notifications")["QueueUrl"]
    queue_arn = sqs.get_queue_attributes(QueueUrl=queue_url, AttributeNames=["QueueArn"])["Attributes"][
        "QueueArn"
    ]
    sns.subscribe(TopicArn=topic_arn, Protocol="sqs", Endpoint=queue_arn)
    return topic_arn, queue_url


def received(queue_url: str) -> list[dict[str, Any]]:
    sqs = boto3.client("sqs", region_name=REGION)
    messages: list[dict[str, Any]] = []
    while True:
        batch = sqs.receive_message(QueueUrl=queue_url, MaxNumberOfMessages=10).get("Messages", [])
        if not batch:
            return messages
        for message in batch:
            messages.append(json.loads(message["Body"]))
            sqs.delete_message(QueueUrl=queue_url, ReceiptHandle=message["ReceiptHandle"])


@pytest.fixture
def world(settings: AwsSettings, ami: dict[str, str], network: dict[str, str]) -> World:
    ec2 = boto3.client("ec2", region_name=REGION)
    efs = boto3.client("efs", region_name=REGION)
    fsx = boto3.client("fsx", region_name=REGION)
    sweep: dict[str, str] = {}
    keep: dict[str, str] = {}

    def instance(tag_list: list[dict[str, str]]) -> tuple[str, str]:
        launched = ec2.run_instances(
            ImageId=ami["x86_64"],
            InstanceType="m6i.large",
            MinCount=1,
            MaxCount=1,
            SubnetId=network["subnet"],
            BlockDeviceMappings=[
                {
                    "DeviceName": "/dev/sdf",
                    "Ebs": {"VolumeSize": 10, "VolumeType": "gp3", "DeleteOnTermination": True},
                }
            ],
            TagSpecifications=[  # as Ec2Compute launches: the instance and its volumes tagged
                {"ResourceType": "instance", "Tags": tag_list},
                {"ResourceType": "volume", "Tags": tag_list},
            ],
        )["Instances"][0]
        described = ec2.describe_instances(InstanceIds=[launched["InstanceId"]])["Reservations"][0][
            "Instances"
        ][0]
        data = next(
            m["Ebs"]["VolumeId"] for m in described["BlockDeviceMappings"] if m["DeviceName"] == "/dev/sdf"
        )
        return str(launched["InstanceId"]), str(data)

    def volume(tag_list: list[dict[str, str]]) -> str:
        return str(
            ec2.create_volume(
                AvailabilityZone=f"{REGION}a",
                Size=10,
                VolumeType="gp3",
                TagSpecifications=[{"ResourceType": "volume", "Tags": tag_list}],
            )["VolumeId"]
        )

    def efs_with_mount_target(tag_list: list[dict[str, str]], token: str) -> str:
        fs = efs.create_file_system(CreationToken=token, Tags=tag_list)["FileSystemId"]
        efs.create_mount_target(
            FileSystemId=fs, SubnetId=network["subnet"], SecurityGroups=[network["fs_group"]]
        )
        return str(fs)

    def lustre(tag_list: list[dict[str, str]]) -> str:
        return str(
            fsx.create_file_system(
                FileSystemType="LUSTRE",
                StorageCapacity=1200,
                SubnetIds=[network["subnet"]],
                LustreConfiguration={"DeploymentType": "SCRATCH_2"},
                Tags=tag_list,
            )["FileSystem"]["FileSystemId"]
        )

    expired = tags("run-old", PAST)
    instance_id, attached = instance(expired)
    sweep[instance_id] = "ec2-instance"
    sweep[attached] = "ebs-volume"  # goes with its instance (DeleteOnTermination)
    sweep[volume(expired)] = "ebs-volume"  # available: a volume whose instance is long gone
    sweep[efs_with_mount_target(expired, "efs-old")] = "efs-file-system"
    sweep[lustre(expired)] = "fsx-file-system"

    live = tags("run-live", FUTURE)  # a run going on right now
    live_instance, live_volume = instance(live)
    keep[live_instance] = keep[live_volume] = "not expired"
    keep[volume(live)] = "not expired"
    keep[efs_with_mount_target(live, "efs-live")] = "not expired"
    keep[lustre(live)] = "not expired"

    other = tags("run-old", PAST, stack="someone-elses-stack")  # same run id, another stack
    other_instance, other_volume = instance(other)
    keep[other_instance] = keep[other_volume] = "another stack"
    keep[volume(other)] = "another stack"
    keep[efs_with_mount_target(other, "efs-other")] = "another stack"
    keep[lustre(other)] = "another stack"

    untagged_instance, untagged_volume = instance([{"Key": "Name", "Value": "not ours"}])
    keep[untagged_instance] = keep[untagged_volume] = "untagged"
    keep[volume(tags("run-old", PAST, stack=None))] = "no stack tag"
    keep[volume(tags("run-bad", "next tuesday"))] = "unreadable expires-at"
    return World(sweep=sweep, keep=keep)


def alive(resource_id: str) -> bool:
    """Does the resource still exist and not on its way out?"""
    if resource_id.startswith("i-"):
        ec2 = boto3.client("ec2", region_name=REGION)
        state = ec2.describe_instances(InstanceIds=[resource_id])["Reservations"][0]["Instances"][0]["State"]
        return state["Name"] not in ("shutting-down", "terminated")
    if resource_id.startswith("vol-"):
        ec2 = boto3.client("ec2", region_name=REGION)
        found = ec2.describe_volumes(Filters=[{"Name": "volume-id", "Values": [resource_id]}])["Volumes"]
        return bool(found) and found[0]["State"] not in ("deleting", "deleted")
    efs = boto3.client("efs", region_name=REGION)
    if any(fs["FileSystemId"] == resource_id for fs in efs.describe_file_systems()["FileSystems"]):
        return True
    fsx = boto3.client("fsx", region_name=REGION)
    return any(fs["FileSystemId"] == resource_id for fs in fsx.describe_file_systems()["FileSystems"])


def stuck_runs(table: str) -> DynamoResultsStore:
    store = DynamoResultsStore(boto3.client("dynamodb", region_name=REGION), table)
    store.start_run("run-old", "nightly", {"name": "nightly"}, "2030-01-01T09:00:00Z", PAST, ["gp3"])
    store.start_run("run-live", "nightly", {"name": "nightly"}, "2030-01-02T11:00:00Z", FUTURE, ["gp3"])
    return store


def make_janitor(settings: AwsSettings, table: str, topic_arn: str) -> Janitor:
    return Janitor(
        resources=AwsTaggedResources(
            Ec2Compute.from_settings(settings), AwsFileSystems.from_settings(settings)
        ),
        runs=DynamoResultsStore(boto3.client("dynamodb", region_name=REGION), table),
        notifier=SnsNotifier(boto3.client("sns", region_name=REGION), topic_arn),
        stack=STACK,
        clock=FixedClock(),
    )


def test_the_janitor_sweeps_exactly_the_stacks_expired_resources_and_stuck_runs(
    world: World, settings: AwsSettings, table: str, topic: tuple[str, str]
) -> None:
    topic_arn, queue_url = topic
    store = stuck_runs(table)
    report = make_janitor(settings, table, topic_arn).sweep()

    assert {leak.resource_id: leak.kind for leak in report.leaks} == world.sweep
    assert all(leak.outcome == "deleted" for leak in report.leaks), report.leaks
    assert all(leak.run_id == "run-old" and leak.overdue_s == 3 * 3600 for leak in report.leaks)
    assert [rid for rid in world.sweep if alive(rid)] == []
    assert [f"{rid} ({why})" for rid, why in world.keep.items() if not alive(rid)] == []  # 0 false deletions
    assert report.swept_by_kind() == {
        "ec2-instance": 1,
        "ebs-volume": 2,
        "efs-file-system": 1,
        "fsx-file-system": 1,
    }
    assert report.counts()["LeaksSwept"] == 5
    assert [s.reason for s in report.skipped] == [
        "storagebench:expires-at is 'next tuesday', not an ISO 8601 time with a zone; left alone"
    ]
    assert report.not_expired == 5 and report.errors == []

    assert [run.run_id for run in report.stuck_runs] == ["run-old"]
    old, live = store.get_run("run-old")["run"], store.get_run("run-live")["run"]
    assert old["status"] == "FAILED" and "after its deadline 2030-01-02T09:00:00Z" in old["failure_reason"]
    assert old["ended_at"] == "2030-01-02T12:00:00Z"
    assert live["status"] == "RUNNING"
    assert [r["run_id"] for r in store.runs_in_progress_page()[0]] == ["run-live"]

    messages = received(queue_url)
    kinds = sorted(m["MessageAttributes"]["kind"]["Value"] for m in messages)
    assert kinds == ["leak"] * 5 + ["stuck-run"]
    instance_id = next(rid for rid, kind in world.sweep.items() if kind == "ec2-instance")
    leak = next(m for m in messages if instance_id in m["Subject"])
    assert leak["Message"].startswith(
        f"leak swept: ec2-instance {instance_id} of run run-old config gp3, 3.0 h past"
    )
    assert report.notified == ["leak"] * 5 + ["stuck-run"] and report.notification_failures == []


def test_a_second_sweep_finds_nothing_and_a_concurrent_finalize_wins(
    world: World, settings: AwsSettings, table: str, topic: tuple[str, str]
) -> None:
    topic_arn, queue_url = topic
    store = stuck_runs(table)
    janitor = make_janitor(settings, table, topic_arn)
    janitor.sweep()
    received(queue_url)
    again = janitor.sweep()
    assert again.leaks == [] and again.stuck_runs == [] and again.errors == []
    assert received(queue_url) == []
    # a run that Finalize ended between the janitor's query and its update is not overwritten
    assert store.fail_stuck_run("run-old", "late", "2030-01-02T13:00:00Z") is False
    assert store.get_run("run-old")["run"]["failure_reason"] != "late"


def test_a_refused_notification_is_recorded_and_the_sweep_still_deletes(
    world: World, settings: AwsSettings, table: str
) -> None:
    missing_topic = f"arn:aws:sns:{REGION}:123456789012:no-such-topic"
    report = make_janitor(settings, table, missing_topic).sweep()
    assert len(report.leaks) == 5 and [rid for rid in world.sweep if alive(rid)] == []
    assert len(report.notification_failures) == 5
    assert all(
        f.startswith("leak: SNS refused leak for " + missing_topic) for f in report.notification_failures
    )
    assert report.counts()["NotificationFailures"] == 5
    report.raise_if_incomplete()  # a notification problem does not make the sweep incomplete


def _load_handler(name: str) -> Any:
    module_name = f"_sbtest_{name}_app"
    if module_name not in sys.modules:
        load_module(module_name, FUNCTIONS / name / "app.py")
    return sys.modules[module_name]


class Context:
    function_name = "storagebench-test-Janitor"
    function_version = "$LATEST"
    invoked_function_arn = f"arn:aws:lambda:{REGION}:123456789012:function:storagebench-test-Janitor"
    memory_limit_in_mb = 512
    aws_request_id = "5b7e4f5e-0000-4000-8000-000000000002"

    def get_remaining_time_in_millis(self) -> int:
        return 300_000


@pytest.fixture
def state_machine(world: World) -> str:
    """A state machine with one execution per run of ``stuck_runs`` (moto leaves them RUNNING)."""
    sfn = boto3.client("stepfunctions", region_name=REGION)
    arn = sfn.create_state_machine(
        name="storagebench-benchmark",
        definition=json.dumps({"StartAt": "Done", "States": {"Done": {"Type": "Succeed"}}}),
        roleArn=f"arn:aws:iam::{ACCOUNT}:role/states",
    )["stateMachineArn"]
    for run_id in ("run-old", "run-live"):
        sfn.start_execution(stateMachineArn=arn, name=run_id, input="{}")
    return str(arn)


def execution_status(state_machine: str, run_id: str) -> str:
    sfn = boto3.client("stepfunctions", region_name=REGION)
    arn = state_machine.replace(":stateMachine:", ":execution:", 1) + f":{run_id}"
    return str(sfn.describe_execution(executionArn=arn)["status"])


@pytest.fixture
def handler_env(monkeypatch: pytest.MonkeyPatch, topic: tuple[str, str], state_machine: str) -> None:
    monkeypatch.setenv("POWERTOOLS_TRACE_DISABLED", "true")
    monkeypatch.setenv("NOTIFICATION_TOPIC_ARN", topic[0])
    monkeypatch.setenv("STATE_MACHINE_ARN", state_machine)


def test_the_handler_sweeps_from_the_environment_and_emits_its_metrics(
    world: World, table: str, handler_env: None, capsys: pytest.CaptureFixture[str]
) -> None:
    stuck_runs(table)
    janitor = build_janitor()  # what the function builds: AwsSettings, SNS topic from the environment
    janitor.clock = FixedClock()
    janitor_wiring.configure(janitor)
    try:
        answer = _load_handler("janitor").handler({"source": "storagebench janitor schedule"}, Context())
    finally:
        janitor_wiring.configure(None)
    assert sorted(leak["resource_id"] for leak in answer["leaks"]) == sorted(world.sweep)
    assert [(run["run_id"], run["execution"]) for run in answer["stuck_runs"]] == [("run-old", "stopped")]
    state_machine = os.environ["STATE_MACHINE_ARN"]
    assert (execution_status(state_machine, "run-old"), execution_status(state_machine, "run-live")) == (
        "ABORTED",
        "RUNNING",
    )
    blobs = [json.loads(line) for line in capsys.readouterr().out.splitlines() if '"_aws"' in line]
    per_type = {
        blob["ResourceType"]: blob["LeaksSwept"]
        for blob in blobs
        if "ResourceType" in blob and "LeaksSwept" in blob
    }  # Powertools writes each value as a list of the values added
    assert per_type == {
        "ec2-instance": [1.0],
        "ebs-volume": [2.0],
        "efs-file-system": [1.0],
        "fsx-file-system": [1.0],
    }
    totals = next(blob for blob in blobs if "StuckRunsFailed" in blob)
    # the service dimension is whatever the shared Metrics object was built with (first import wins)
    assert totals["service"] == observability.metrics.service and "ResourceType" not in totals
    assert (totals["LeaksSwept"], totals["StuckRunsFailed"], totals["JanitorErrors"]) == ([5.0], [1.0], [0.0])


def test_the_handler_raises_after_reporting_what_it_could_not_delete(
    world: World,
    table: str,
    handler_env: None,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    janitor = build_janitor()
    janitor.clock = FixedClock()

    def refuse(volume_id: str) -> bool:
        from storagebench.core.errors import ProvisioningError

        raise ProvisioningError(f"delete volume {volume_id}: UnauthorizedOperation")

    assert isinstance(janitor.resources, AwsTaggedResources)
    monkeypatch.setattr(janitor.resources.compute, "delete_volume", refuse)
    janitor_wiring.configure(janitor)
    try:
        with pytest.raises(SweepIncompleteError, match="UnauthorizedOperation"):
            _load_handler("janitor").handler({}, Context())
    finally:
        janitor_wiring.configure(None)
    blobs = [json.loads(line) for line in capsys.readouterr().out.splitlines() if '"_aws"' in line]
    totals = next(blob for blob in blobs if "JanitorErrors" in blob)
    assert totals["JanitorErrors"] == [1.0] and totals["LeaksSwept"] == [4.0]  # the others still went
    instance_id = next(rid for rid, kind in world.sweep.items() if kind == "ec2-instance")
    assert not alive(instance_id)

"""The janitor and File Gateways: Storage Gateway through a botocore Stubber (no emulator covers
it) with responses shaped as ListGateways, ListFileShares and ListTagsForResource document them;
EC2 (the appliance instance), the table and the topic on moto.

An expired gateway of this stack loses its file share first, then itself, then its appliance; a live
gateway of this stack, another stack's expired one and an untagged one are kept; a gateway that went
between the listing and its tags is not an error.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from datetime import UTC, datetime

import boto3
import pytest
from botocore.stub import Stubber

from storagebench.adapters.aws.dynamodb import DynamoResultsStore
from storagebench.adapters.aws.ec2 import Ec2Compute
from storagebench.adapters.aws.filesystems import AwsFileSystems
from storagebench.adapters.aws.settings import AwsSettings
from storagebench.adapters.aws.sns import SnsNotifier
from storagebench.adapters.aws.storagegateway import StorageGateways
from storagebench.adapters.aws.sweep import AwsTaggedResources, build_janitor
from storagebench.core.errors import NotYetConsistentError
from storagebench.core.guardrails import GATEWAY_VARIABLES
from storagebench.core.tags import TAG_CONFIG, TAG_EXPIRES, TAG_RUN, TAG_STACK
from storagebench.janitor import Janitor

REGION = "us-east-1"
ACCOUNT = "123456789012"
STACK = "storagebench-test"  # the adapters conftest's STACK_NAME
NOW = datetime(2030, 1, 2, 12, 0, 0, tzinfo=UTC)
PAST = "2030-01-02T09:00:00Z"
FUTURE = "2030-01-02T18:00:00Z"


def gateway_arn(name: str) -> str:
    return f"arn:aws:storagegateway:{REGION}:{ACCOUNT}:gateway/sgw-{name}"


def share_arn(name: str) -> str:
    return f"arn:aws:storagegateway:{REGION}:{ACCOUNT}:share/share-{name}"


EXPIRED, LIVE, OTHER, UNTAGGED, VANISHED = (
    gateway_arn(n) for n in ("EXPIRED1", "LIVE0001", "OTHER001", "NOTAG001", "GONE0001")
)


def labels(expires: str, stack: str = STACK) -> list[dict[str, str]]:
    values = {TAG_STACK: stack, TAG_RUN: "run-old", TAG_CONFIG: "io1", TAG_EXPIRES: expires}
    return [{"Key": k, "Value": v} for k, v in values.items()]


class FixedClock:
    def now(self) -> datetime:
        return NOW


@pytest.fixture
def gateways() -> Iterator[tuple[StorageGateways, Stubber]]:
    client = boto3.client("storagegateway", region_name=REGION)
    with Stubber(client) as stub:
        yield StorageGateways(client), stub
        stub.assert_no_pending_responses()


def gateway_error(
    stub: Stubber, operation: str, code: str, message: str, resource: str | None = None
) -> None:
    """Storage Gateway's error for ``operation``: InvalidGatewayRequestException, HTTP 400, its own
    ``error.errorCode``; with ``resource``, only for the call on that ARN."""
    expected = {"ResourceARN": resource} if resource is not None else None
    stub.add_client_error(
        operation,
        service_error_code="InvalidGatewayRequestException",
        service_message=message,
        http_status_code=400,
        modeled_fields={"error": {"errorCode": code}},
        expected_params=expected,
    )


def expect_discovery(stub: Stubber) -> None:
    shares = [
        (share_arn("EXPIRED1"), EXPIRED, labels(PAST)),
        (share_arn("LIVE0001"), LIVE, labels(FUTURE)),
        (share_arn("OTHER001"), OTHER, labels(PAST, stack="someone-else")),
    ]
    stub.add_response(
        "list_file_shares",
        {
            "FileShareInfoList": [
                {
                    "FileShareType": "NFS",
                    "FileShareARN": arn,
                    "FileShareId": arn.rsplit("/", 1)[1],
                    "FileShareStatus": "AVAILABLE",
                    "GatewayARN": gateway,
                }
                for arn, gateway, _ in shares
            ]
        },
        {},
    )
    for arn, _, tags in shares:
        stub.add_response("list_tags_for_resource", {"ResourceARN": arn, "Tags": tags}, {"ResourceARN": arn})
    gateways = [EXPIRED, LIVE, OTHER, UNTAGGED, VANISHED]
    stub.add_response(
        "list_gateways",
        {
            "Gateways": [
                {
                    "GatewayARN": arn,
                    "GatewayId": arn.rsplit("/", 1)[1],
                    "GatewayType": "FILE_S3",
                    "GatewayOperationalState": "ACTIVE",
                    "GatewayName": f"storagebench-{arn[-8:]}",
                }
                for arn in gateways
            ]
        },
        {},
    )
    tags = {EXPIRED: labels(PAST), LIVE: labels(FUTURE), OTHER: labels(PAST, "someone-else"), UNTAGGED: []}
    for arn in gateways[:-1]:
        stub.add_response(
            "list_tags_for_resource", {"ResourceARN": arn, "Tags": tags[arn]}, {"ResourceARN": arn}
        )
    gateway_error(
        stub, "list_tags_for_resource", "GatewayNotFound", "The specified gateway was not found.", VANISHED
    )


def test_the_janitor_deletes_an_expired_gateways_share_then_the_gateway_then_its_appliance(
    settings: AwsSettings, table: str, gateways: tuple[StorageGateways, Stubber]
) -> None:
    client, stub = gateways
    ec2 = boto3.client("ec2", region_name=REGION)
    image = ec2.describe_images(Owners=["amazon"])["Images"][0]["ImageId"]
    appliance = ec2.run_instances(
        ImageId=image,
        MinCount=1,
        MaxCount=1,
        InstanceType="m5.xlarge",
        TagSpecifications=[{"ResourceType": "instance", "Tags": labels(PAST)}],
    )["Instances"][0]["InstanceId"]
    expect_discovery(stub)
    expired_share = share_arn("EXPIRED1")
    stub.add_response(
        "delete_file_share",
        {"FileShareARN": expired_share},
        {"FileShareARN": expired_share, "ForceDelete": True},
    )
    stub.add_response("delete_gateway", {"GatewayARN": EXPIRED}, {"GatewayARN": EXPIRED})
    topic = boto3.client("sns", region_name=REGION).create_topic(Name="notifications")["TopicArn"]
    janitor = Janitor(
        resources=AwsTaggedResources(
            Ec2Compute.from_settings(settings), AwsFileSystems.from_settings(settings), client
        ),
        runs=DynamoResultsStore(boto3.client("dynamodb", region_name=REGION), table),
        notifier=SnsNotifier(boto3.client("sns", region_name=REGION), topic),
        stack=STACK,
        clock=FixedClock(),
    )

    report = janitor.sweep()

    # the Stubber's order is the deletes' order: the share, then the gateway; moto's EC2 then the appliance
    assert [(x.kind, x.resource_id, x.outcome) for x in report.leaks] == [
        ("gateway-file-share", expired_share, "deleted"),
        ("storage-gateway", EXPIRED, "deleted"),
        ("ec2-instance", appliance, "deleted"),
    ]
    assert report.errors == [] and report.skipped == []
    assert report.not_expired == 2  # the live gateway and its share; the other stack's are not counted
    assert report.swept_by_kind() == {"gateway-file-share": 1, "storage-gateway": 1, "ec2-instance": 1}
    state = ec2.describe_instances(InstanceIds=[appliance])["Reservations"][0]["Instances"][0]["State"]
    assert state["Name"] in ("shutting-down", "terminated")


def test_a_share_that_cannot_be_deleted_is_reported_and_the_sweep_goes_on(
    settings: AwsSettings, gateways: tuple[StorageGateways, Stubber]
) -> None:
    client, stub = gateways
    expect_discovery(stub)
    gateway_error(stub, "delete_file_share", "GatewayNotConnected", "The gateway is not connected.")
    stub.add_response("delete_gateway", {"GatewayARN": EXPIRED}, {"GatewayARN": EXPIRED})
    resources = AwsTaggedResources(
        Ec2Compute.from_settings(settings), AwsFileSystems.from_settings(settings), client
    )
    found = resources.tagged("gateway-file-share", STACK) + resources.tagged("storage-gateway", STACK)
    assert [(r.kind, r.resource_id, r.state) for r in found] == [
        ("gateway-file-share", share_arn("EXPIRED1"), "available"),
        ("gateway-file-share", share_arn("LIVE0001"), "available"),
        ("storage-gateway", EXPIRED, "active"),
        ("storage-gateway", LIVE, "active"),
    ]
    with pytest.raises(NotYetConsistentError, match="GatewayNotConnected"):
        resources.delete(found[0])
    assert resources.delete(found[2]).startswith("deleted")


def test_without_gateway_settings_the_janitor_asks_no_storage_gateway(settings: AwsSettings) -> None:
    env = {**os.environ, "STATE_MACHINE_ARN": f"arn:aws:states:{REGION}:{ACCOUNT}:stateMachine:benchmark"}
    bare = build_janitor(env).resources
    assert isinstance(bare, AwsTaggedResources) and bare.gateways is None
    assert bare.tagged("storage-gateway", STACK) == [] and bare.tagged("gateway-file-share", STACK) == []
    full = build_janitor({**env, **dict.fromkeys(GATEWAY_VARIABLES, "set")}).resources
    assert isinstance(full, AwsTaggedResources) and full.gateways is not None

"""The EC2 world a recorded-call test launches into (moto): a VPC, subnet and security group, an
image, the instance profile, and the stack's settings; created aside, so none of it is recorded.
And what the rendered template decides for the calls recorded there (``decide``)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import boto3
import pytest
from moto import mock_aws

from storagebench.adapters.aws.settings import AwsSettings
from storagebench_local.aws_calls import AwsCall, AwsCallRecorder

from .call_checks import Stack, checks_of
from .evaluator import Decision, Request, evaluate
from .template_policies import StackValues, render

ACCOUNT = "123456789012"


@dataclass(frozen=True)
class Ec2World:
    ec2: Any
    values: StackValues
    settings: AwsSettings
    image: str


class Recorded:
    """What a recorded-call test's fixture recorded, in the stack it recorded it for."""

    def __init__(self, values: StackValues) -> None:
        self.values = values
        self.calls: list[AwsCall] = []


@contextmanager
def recording_on_moto(region: str) -> Iterator[AwsCallRecorder]:
    """moto with test credentials in ``region`` and no endpoint override, every call recorded."""
    recorder = AwsCallRecorder(region)
    env = {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing", "AWS_DEFAULT_REGION": region}
    with pytest.MonkeyPatch.context() as patch:
        for name, value in env.items():
            patch.setenv(name, value)
        patch.delenv("AWS_ENDPOINT_URL", raising=False)
        with mock_aws(), recorder.recording():
            yield recorder


def ec2_world(recorder: AwsCallRecorder, region: str, cidr: str, zone: str | None = None) -> Ec2World:
    """``cidr``: the VPC's /16 prefix (``10.41``), its subnet the .1.0/24 in ``zone`` if given."""
    ec2 = boto3.client("ec2", region_name=region)
    with recorder.aside():
        vpc = ec2.create_vpc(CidrBlock=f"{cidr}.0.0/16")["Vpc"]["VpcId"]
        placed = {"AvailabilityZone": zone} if zone else {}
        subnet = ec2.create_subnet(VpcId=vpc, CidrBlock=f"{cidr}.1.0/24", **placed)["Subnet"]["SubnetId"]
        group = ec2.create_security_group(GroupName="storagebench", Description="instances", VpcId=vpc)[
            "GroupId"
        ]
        image = ec2.describe_images(
            Owners=["amazon"], Filters=[{"Name": "architecture", "Values": ["x86_64"]}]
        )["Images"][0]["ImageId"]
        iam = boto3.client("iam", region_name=region)
        iam.create_role(RoleName="storagebench-instance", AssumeRolePolicyDocument="{}")
        profile = iam.create_instance_profile(InstanceProfileName="storagebench-instance")["InstanceProfile"]
        iam.add_role_to_instance_profile(
            InstanceProfileName="storagebench-instance", RoleName="storagebench-instance"
        )
    values = StackValues(account=ACCOUNT, vpc_id=vpc, subnet_id=subnet, instance_security_group=group)
    settings = AwsSettings(
        results_table="t",
        artifacts_bucket="b",
        stack_name=values.stack_name,
        subnet_id=subnet,
        security_group_id=group,
        instance_profile_arn=profile["Arn"],
        instance_role_id=values.instance_role_id,
        agent_document="d",
        region=region,
    )
    return Ec2World(ec2=ec2, values=values, settings=settings, image=image)


def decide(calls: list[AwsCall], values: StackValues, region: str) -> list[tuple[AwsCall, Decision]]:
    """Each recorded call's checks (but lookups, which take no resource-level permission: the
    roles' Lookups allow them, test_recorded_calls) evaluated against the rendered template."""
    rendered = render(values)
    stack = Stack(ACCOUNT, region, values.role_arn("InstanceRole"))
    pairs: list[tuple[AwsCall, Request]] = []
    for call in calls:
        if call.operation.startswith(("Describe", "Get")):
            continue
        for check in checks_of(call, stack):
            label = f"{call.describe()}: {check.action} {check.resource}"
            request = Request.of(
                label, rendered, call.principal, call.principal, check.action, check.resource, check.context
            )
            pairs.append((call, request))
    evaluated = evaluate([request for _, request in pairs])
    return [(call, decision) for (call, _), decision in zip(pairs, evaluated, strict=True)]

"""moto with the stack's network (a VPC, its subnet, the instance group, a profile) for the network
adapter, the launch and the release; moto's EC2 gets placement groups and EC2's DependencyViolation
from local mode's emulation (``storagebench_local.adapters.moto_ec2.emulate_network``)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import boto3
import pytest
from moto import mock_aws
from network_helpers import REGION, STACK
from tests.support.moto_env import moto_credentials

from storagebench.adapters.aws.ec2 import Ec2Compute
from storagebench.adapters.aws.network import Ec2Network
from storagebench.adapters.aws.settings import AwsSettings
from storagebench_local.adapters.moto_ec2 import emulate_network


@pytest.fixture
def aws(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    moto_credentials(monkeypatch, REGION, AWS_SESSION_TOKEN="testing")
    emulate_network()
    with mock_aws():
        yield


@pytest.fixture
def ec2(aws: None) -> Any:
    return boto3.client("ec2", region_name=REGION)


@pytest.fixture
def settings(ec2: Any) -> AwsSettings:
    vpc = ec2.create_vpc(CidrBlock="10.40.0.0/16")["Vpc"]["VpcId"]
    subnet = ec2.create_subnet(VpcId=vpc, CidrBlock="10.40.1.0/24", AvailabilityZone=f"{REGION}a")["Subnet"]
    group = ec2.create_security_group(GroupName="storagebench", Description="instances", VpcId=vpc)["GroupId"]
    iam = boto3.client("iam", region_name=REGION)
    role = iam.create_role(RoleName="storagebench-instance", AssumeRolePolicyDocument="{}")["Role"]
    profile = iam.create_instance_profile(InstanceProfileName="storagebench-instance")["InstanceProfile"]
    iam.add_role_to_instance_profile(InstanceProfileName="storagebench-instance", RoleName=role["RoleName"])
    return AwsSettings(
        results_table="results",
        artifacts_bucket="artifacts",
        stack_name=STACK,
        subnet_id=subnet["SubnetId"],
        security_group_id=group,
        instance_profile_arn=profile["Arn"],
        instance_role_id=role["RoleId"],
        agent_document="storagebench-agent",
        region=REGION,
    )


@pytest.fixture
def network(ec2: Any, settings: AwsSettings) -> Ec2Network:
    return Ec2Network(ec2, settings)


@pytest.fixture
def compute(ec2: Any, settings: AwsSettings) -> Ec2Compute:
    return Ec2Compute(ec2, boto3.client("ssm", region_name=REGION), settings)


@pytest.fixture
def image_id(ec2: Any) -> str:
    """An x86_64 image moto knows (the launch describes it)."""
    images = ec2.describe_images(Owners=["amazon"], Filters=[{"Name": "architecture", "Values": ["x86_64"]}])
    return str(images["Images"][0]["ImageId"])

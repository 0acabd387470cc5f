"""moto fixtures for the AWS adapters: the stack's network, bucket and table, and its environment.

The results table is built from ``template.yaml`` itself (``table_kwargs``), so a change to
the table's keys or indexes in the template reaches these tests and the schema cannot drift.
"""

from __future__ import annotations

import copy
import functools
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import boto3
import pytest
import yaml
from moto import mock_aws

from storagebench.adapters.aws.settings import AwsSettings
from storagebench_local.adapters.moto_ec2 import emulate_network

REGION = "us-east-1"
ZONE = f"{REGION}a"
TEMPLATE = Path(__file__).resolve().parents[3] / "template.yaml"
TABLE = "storagebench-results"
BUCKET = "storagebench-artifacts"
DOCUMENT = "storagebench-AgentDocument-test"
STACK = "storagebench-test"


# ------------------------------------------------------------------------ template.yaml


class _TemplateLoader(yaml.SafeLoader):  # type: ignore[misc, unused-ignore]
    """Reads CloudFormation YAML: every ``!Tag`` becomes a plain value (``!Ref X`` -> "X")."""


def _any_tag(loader: yaml.SafeLoader, suffix: str, node: yaml.Node) -> Any:
    if isinstance(node, yaml.ScalarNode):
        return loader.construct_scalar(node)
    if isinstance(node, yaml.SequenceNode):
        return loader.construct_sequence(node, deep=True)
    assert isinstance(node, yaml.MappingNode)
    return loader.construct_mapping(node, deep=True)


_TemplateLoader.add_multi_constructor("!", _any_tag)


@functools.cache
def _parsed_template() -> dict[str, Any]:
    """Parsed once a session: pure-Python YAML took 0.2-0.5 s a ``table`` fixture."""
    document = yaml.load(TEMPLATE.read_text(encoding="utf-8"), Loader=_TemplateLoader)
    assert isinstance(document, dict)
    return document


def load_template() -> dict[str, Any]:
    return copy.deepcopy(_parsed_template())  # a copy of its own for every caller, as a fresh parse gave


def table_kwargs(resource: str = "ResultsTable", table_name: str = TABLE) -> dict[str, Any]:
    """``create_table`` arguments from an ``AWS::DynamoDB::Table`` resource of template.yaml.

    Properties that are not create_table arguments (point-in-time recovery) are dropped; an
    unknown property fails loudly, so a template change is looked at here.
    """
    definition = load_template()["Resources"][resource]
    assert definition["Type"] == "AWS::DynamoDB::Table"
    properties = dict(definition["Properties"])
    kwargs: dict[str, Any] = {"TableName": table_name}
    for name in (
        "AttributeDefinitions",
        "KeySchema",
        "GlobalSecondaryIndexes",
        "BillingMode",
        "LocalSecondaryIndexes",
        "ProvisionedThroughput",
        "StreamSpecification",
    ):
        if name in properties:
            kwargs[name] = properties.pop(name)
    sse = properties.pop("SSESpecification", None)
    if sse is not None:
        kwargs["SSESpecification"] = {"Enabled": bool(sse.get("SSEEnabled", False))}
    properties.pop("PointInTimeRecoverySpecification", None)
    properties.pop("TimeToLiveSpecification", None)  # update_time_to_live, not create_table
    properties.pop("Tags", None)
    assert not properties, (
        f"template.yaml {resource} has properties this helper does not map: {sorted(properties)}"
    )
    return kwargs


def agent_document_parameters() -> dict[str, dict[str, Any]]:
    """The parameters the SSM document in template.yaml declares."""
    content = load_template()["Resources"]["AgentDocument"]["Properties"]["Content"]
    parameters = content["parameters"]
    assert isinstance(parameters, dict)
    return parameters


# ------------------------------------------------------------------------ moto


@pytest.fixture
def stack_env(monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """Fake credentials and the variables the template gives every function."""
    env = {
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        "AWS_SESSION_TOKEN": "testing",
        "AWS_DEFAULT_REGION": REGION,
        "RESULTS_TABLE": TABLE,
        "ARTIFACTS_BUCKET": BUCKET,
        "STACK_NAME": STACK,
        "AGENT_DOCUMENT": DOCUMENT,
    }
    for name in ("AWS_PROFILE", "AWS_REGION", "AWS_ENDPOINT_URL"):
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    return env


@pytest.fixture
def aws(stack_env: dict[str, str]) -> Iterator[None]:
    emulate_network()  # moto 5.2.5 has no placement groups, which the janitor lists (local mode's fix)
    with mock_aws():
        yield


@pytest.fixture
def network(aws: None, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """A VPC with one subnet, a security group and an instance profile, as the stack provides."""
    ec2 = boto3.client("ec2", region_name=REGION)
    vpc = ec2.create_vpc(CidrBlock="10.40.0.0/16")["Vpc"]["VpcId"]
    subnet = ec2.create_subnet(VpcId=vpc, CidrBlock="10.40.1.0/24", AvailabilityZone=ZONE)["Subnet"][
        "SubnetId"
    ]
    group = ec2.create_security_group(GroupName="storagebench", Description="instances", VpcId=vpc)["GroupId"]
    fs_group = ec2.create_security_group(GroupName="sb-config", Description="a config's group", VpcId=vpc)[
        "GroupId"
    ]
    iam = boto3.client("iam", region_name=REGION)
    role = iam.create_role(RoleName="storagebench-instance", AssumeRolePolicyDocument="{}")["Role"]
    profile = iam.create_instance_profile(InstanceProfileName="storagebench-instance")["InstanceProfile"]
    iam.add_role_to_instance_profile(
        InstanceProfileName="storagebench-instance", RoleName="storagebench-instance"
    )
    values = {"vpc": vpc, "subnet": subnet, "group": group, "fs_group": fs_group, "profile": profile["Arn"]}
    monkeypatch.setenv("SUBNET_ID", subnet)
    monkeypatch.setenv("SECURITY_GROUP_ID", group)
    monkeypatch.setenv("INSTANCE_PROFILE_ARN", profile["Arn"])
    monkeypatch.setenv("INSTANCE_ROLE_ID", role["RoleId"])
    return values


@pytest.fixture
def settings(network: dict[str, str]) -> AwsSettings:
    return AwsSettings.from_env()


@pytest.fixture
def ami(aws: None) -> dict[str, str]:
    """The AL2023 public parameters: moto ships them for us-east-1; put them if it ever does not."""
    ssm = boto3.client("ssm", region_name=REGION)
    images: dict[str, str] = {}
    for arch in ("x86_64", "arm64"):
        name = f"/aws/service/ami-amazon-linux-latest/al2023-ami-kernel-default-{arch}"
        try:
            images[arch] = ssm.get_parameter(Name=name)["Parameter"]["Value"]
        except ssm.exceptions.ParameterNotFound:
            images[arch] = f"ami-{'0' * 9}{len(images) + 1:08x}"
            ssm.put_parameter(Name=name, Value=images[arch], Type="String")
    return images


@pytest.fixture
def bucket(aws: None) -> str:
    boto3.client("s3", region_name=REGION).create_bucket(Bucket=BUCKET)
    return BUCKET


@pytest.fixture
def table(aws: None) -> str:
    client = boto3.client("dynamodb", region_name=REGION)
    client.create_table(**table_kwargs())
    client.get_waiter("table_exists").wait(TableName=TABLE)
    return TABLE


class CallLog:
    """Records the operations a client sends (botocore's before-call event), in order."""

    def __init__(self, *clients: Any) -> None:
        self.calls: list[tuple[str, dict[str, Any]]] = []
        for client in clients:
            client.meta.events.register("provide-client-params.*.*", self._record)

    def _record(self, params: dict[str, Any], model: Any, **_: Any) -> None:
        self.calls.append((model.name, dict(params)))

    @property
    def names(self) -> list[str]:
        return [name for name, _ in self.calls]

    def count(self, name: str) -> int:
        return self.names.count(name)


@pytest.fixture
def call_log() -> type[CallLog]:
    """``call_log(client, ...)`` starts recording those clients' operations."""
    return CallLog


@pytest.fixture
def document_parameters() -> dict[str, dict[str, Any]]:
    return agent_document_parameters()


@pytest.fixture
def template_table() -> dict[str, Any]:
    """The create_table arguments template.yaml implies (what the ``table`` fixture created)."""
    return table_kwargs()

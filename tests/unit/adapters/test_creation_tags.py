"""Everything the workflow creates carries the stack's tag in the create call itself.

template.yaml lets Provision call RunInstances (instances, volumes), CreateFileSystem (EFS, FSx),
CreateSecurityGroup (the config's group, which the file systems join) and the tag-on-create actions
only with ``aws:RequestTag/storagebench:stack`` = the stack's name, and lets Cleanup delete only
what carries it. A create call without the tag would be refused on AWS, and a resource tagged
afterwards would not be deletable by the stack: this drives Provision through the AWS adapters on
moto and reads every create request that left.
"""

from __future__ import annotations

from typing import Any

import pytest
from tests.support.runs import work_item

from storagebench.adapters.aws import AwsFileSystems, Ec2Compute, build_services
from storagebench.core.state import ConfigState, StepTiming
from storagebench.core.tags import TAG_STACK
from storagebench.request import parse_request
from storagebench.workflow.artifact_keys import request_key
from storagebench.workflow.steps.provision import provision

STACK = "storagebench-test"  # the adapters conftest's STACK_NAME
RUN = "run-tags"
REQUEST = {
    "name": "tags",
    "configs": [
        {
            "id": "all-kinds",
            "instance_type": "m6i.large",
            "targets": [
                {"kind": "ebs", "type": "gp3", "size_gib": 100},
                {"kind": "ebs", "type": "st1", "size_gib": 125, "count": 2},
                {"kind": "efs"},
                {"kind": "fsx_lustre", "storage_capacity_gib": 1200},
            ],
        }
    ],
    "workloads": [{"profile": "std-randread-4k", "scale": 0.01}],
}
# Creates that take no tags: an EFS mount target is not taggable and goes with its file system.
UNTAGGABLE = {"CreateMountTarget"}


def _tags_sent(params: dict[str, Any]) -> list[dict[str, str]]:
    """The tag sets one create call carries: one per TagSpecification, or its Tags list."""
    if "TagSpecifications" in params:
        return [{t["Key"]: t["Value"] for t in spec["Tags"]} for spec in params["TagSpecifications"]]
    return [{t["Key"]: t["Value"] for t in params.get("Tags") or []}]


@pytest.fixture
def provisioned(
    network: dict[str, str], ami: dict[str, str], bucket: str, table: str, call_log: Any
) -> list[tuple[str, dict[str, Any]]]:
    services = build_services()
    compute, filesystems = services.compute, services.filesystems
    assert isinstance(compute, Ec2Compute) and isinstance(filesystems, AwsFileSystems)
    log = call_log(compute.ec2, filesystems.efs, filesystems.fsx)
    request = parse_request(REQUEST)
    services.artifacts.put_json(request_key(RUN), request.model_dump(mode="json"))
    item = work_item(
        RUN,
        "all-kinds",
        "tags",
        "us-east-1",
        "2030-01-01T00:00:00Z",
        "2030-01-01T06:00:00Z",
        timing=StepTiming(ready_poll_s=30, ready_timeout_s=1200, heartbeat_s=300, command_timeout_s=3600),
    )
    provision(ConfigState(item=item), services)
    calls: list[tuple[str, dict[str, Any]]] = log.calls
    return calls


def test_every_create_call_carries_the_stack_tag(provisioned: list[tuple[str, dict[str, Any]]]) -> None:
    creates = [
        (name, params)
        for name, params in provisioned
        if name.startswith(("Create", "Run")) and name not in UNTAGGABLE
    ]
    expected = ["CreateFileSystem", "CreateFileSystem", "CreateSecurityGroup", "RunInstances"]
    assert sorted(name for name, _ in creates) == expected  # the group: the file systems' fence
    for name, params in creates:
        for tags in _tags_sent(params):
            assert tags.get(TAG_STACK) == STACK, f"{name} sent tags {tags} without {TAG_STACK}={STACK}"


def test_the_launch_tags_its_instance_and_volumes_at_creation(
    provisioned: list[tuple[str, dict[str, Any]]],
) -> None:
    (launch,) = [params for name, params in provisioned if name == "RunInstances"]
    assert sorted(spec["ResourceType"] for spec in launch["TagSpecifications"]) == ["instance", "volume"]


def test_nothing_is_tagged_after_creation(provisioned: list[tuple[str, dict[str, Any]]]) -> None:
    # the policies allow CreateTags only as part of RunInstances, and no separate CreateVolume
    late = [name for name, _ in provisioned if name in ("CreateTags", "TagResource", "CreateVolume")]
    assert late == []


def test_the_file_systems_join_the_configs_group_which_admits_their_ports_from_itself_only(
    provisioned: list[tuple[str, dict[str, Any]]],
) -> None:
    (group_call,) = [params for name, params in provisioned if name == "CreateSecurityGroup"]
    (launch,) = [params for name, params in provisioned if name == "RunInstances"]
    (fsx,) = [
        params
        for name, params in provisioned
        if name == "CreateFileSystem" and "LustreConfiguration" in params
    ]
    rules = [params for name, params in provisioned if name == "AuthorizeSecurityGroupIngress"]
    (group,) = {rule["GroupId"] for rule in rules}
    assert group in launch["SecurityGroupIds"] and fsx["SecurityGroupIds"] == [group]
    opened = sorted(
        (p["FromPort"], p["ToPort"], [g["GroupId"] for g in p["UserIdGroupPairs"]])
        for rule in rules
        for p in rule["IpPermissions"]
    )
    assert opened == [(988, 988, [group]), (1018, 1023, [group]), (2049, 2049, [group])]
    assert group_call["VpcId"]  # the stack subnet's VPC
    mount_targets = [params for name, params in provisioned if name == "CreateMountTarget"]
    assert all(target["SecurityGroups"] == [group] for target in mount_targets)

"""A node group's Multi-Attach volume on moto: created once by the first node's launch (CreateVolume
with MultiAttachEnabled, not a RunInstances mapping), attached to each node by its readiness poll,
deleted by the config's cleanup once the nodes are gone.

moto keeps one attachment per volume; local mode's ``emulate_multi_attach`` gives a Multi-Attach
volume one per instance, as EC2 does, and these tests run on it.
"""

from __future__ import annotations

from typing import Any

import boto3
import pytest
from tests.support.requests import controllers, virtual_san

from storagebench.adapters.aws.ec2 import Ec2Compute
from storagebench.adapters.aws.settings import AwsSettings
from storagebench.core.state import LaunchSpec
from storagebench.core.tags import TAG_CLIENT_TOKEN, TAG_CONFIG, TAG_EXPIRES, TAG_NODE, TAG_RUN, TAG_STACK
from storagebench.request.model import Config
from storagebench.workflow.bindings import launch_spec
from storagebench_local.adapters.moto_ec2 import emulate_multi_attach

REGION = "us-east-1"
LABELS = {
    TAG_RUN: "run-1",
    TAG_CONFIG: "vsan",
    TAG_EXPIRES: "2030-01-01T00:00:00Z",
    TAG_STACK: "storagebench-test",
    "Name": "storagebench run-1/vsan",
}
OWN = {"id": "own", "kind": "ebs", "type": "gp3", "size_gib": 10, "filesystem": "raw"}
SHARED = {
    "id": "shared",
    "kind": "ebs",
    "type": "io2",
    "size_gib": 100,
    "iops": 5000,
    "filesystem": "raw",
    "prepare": False,
    "multi_attach": True,
}
CONFIG = Config.model_validate(virtual_san([controllers(2, targets=[OWN, SHARED])], placement="cluster"))


@pytest.fixture
def compute(settings: AwsSettings, ami: dict[str, str]) -> Ec2Compute:
    emulate_multi_attach()
    return Ec2Compute(
        boto3.client("ec2", region_name=REGION), boto3.client("ssm", region_name=REGION), settings
    )


def node_spec(index: int) -> LaunchSpec:
    name = f"controller-{index}"
    tags = {**LABELS, TAG_NODE: name, "Name": f"{LABELS['Name']} {name}"}
    return launch_spec(CONFIG, "run-1", tags, machine=CONFIG.nodes[0], name=name)


def _tags(resource: dict[str, Any]) -> dict[str, str]:
    return {t["Key"]: t["Value"] for t in resource.get("Tags", [])}


def test_the_nodes_share_one_token_and_the_volume_is_no_launch_mapping(compute: Ec2Compute) -> None:
    first, second = node_spec(0), node_spec(1)
    shared = [v for v in first.volumes if v.target_id == "shared"]
    assert len(shared) == 1 and shared[0].share_token is not None
    assert shared[0].share_token == next(v for v in second.volumes if v.target_id == "shared").share_token
    assert shared[0].share_token != first.client_token
    assert all(v.share_token is None for v in first.volumes if v.target_id == "own")
    request = compute.run_instances_request(first, compute.image(first))
    mapped = [m["DeviceName"] for m in request["BlockDeviceMappings"]]
    assert shared[0].device_name not in mapped
    assert next(v for v in first.volumes if v.target_id == "own").device_name in mapped


def test_one_volume_is_created_for_the_group_and_attached_to_each_node(
    compute: Ec2Compute, call_log: Any
) -> None:
    log = call_log(compute.ec2)
    nodes = [compute.launch(node_spec(0)), compute.launch(node_spec(1))]
    again = compute.launch(node_spec(0))  # a retried Provision finds the instance and the volume

    assert log.count("CreateVolume") == 1
    create = next(params for name, params in log.calls if name == "CreateVolume")
    assert create["MultiAttachEnabled"] is True
    assert (create["VolumeType"], create["Size"], create["Iops"]) == ("io2", 100, 5000)
    shared_ids = {next(v.volume_id for v in r.volumes if v.target_id == "shared") for r in [*nodes, again]}
    assert len(shared_ids) == 1 and None not in shared_ids
    volume = compute.ec2.describe_volumes(VolumeIds=list(shared_ids))["Volumes"][0]
    tags = _tags(volume)
    assert volume["MultiAttachEnabled"] is True
    assert (tags[TAG_RUN], tags[TAG_CONFIG], tags[TAG_STACK]) == ("run-1", "vsan", "storagebench-test")
    assert TAG_NODE not in tags and tags[TAG_CLIENT_TOKEN] == create["ClientToken"]
    assert tags["Name"] == "storagebench run-1/vsan shared/0 multi-attach"

    for node in nodes:
        status = compute.status(node)  # running on moto: the poll attaches it
        assert status.volumes_in_use is False  # seen attached by the next poll
    attached = [params for name, params in log.calls if name == "AttachVolume"]
    assert sorted(p["InstanceId"] for p in attached) == sorted(str(n.instance_id) for n in nodes)
    assert {p["VolumeId"] for p in attached} == shared_ids
    for node in nodes:
        status = compute.status(node)
        assert status.volumes_in_use is True
        assert {v.volume_id for v in status.volumes if v.multi_attach} == shared_ids
    described = compute.ec2.describe_volumes(VolumeIds=list(shared_ids))["Volumes"][0]
    holders = sorted(a["InstanceId"] for a in described["Attachments"])
    assert holders == sorted(str(n.instance_id) for n in nodes)
    assert log.count("AttachVolume") == 2  # attached once per node, not again by later polls


def test_cleanup_deletes_the_shared_volume_with_the_nodes(compute: Ec2Compute) -> None:
    nodes = [compute.launch(node_spec(0)), compute.launch(node_spec(1))]
    for node in nodes:
        compute.status(node)
    shared = next(v.volume_id for v in nodes[0].volumes if v.target_id == "shared")

    deleted: list[str] = []
    for node in nodes:
        deleted += compute.terminate(node, "run-1", "vsan")

    assert shared in deleted
    assert compute.leftovers("run-1", "vsan") == []
    assert shared not in {v["VolumeId"] for v in compute.ec2.describe_volumes()["Volumes"]}

"""A launch puts the instance in the stack's group and the config's own, and in its placement group."""

from __future__ import annotations

from typing import Any

from network_helpers import RUN, launch_spec, network_spec

from storagebench.adapters.aws.ec2 import Ec2Compute, Image
from storagebench.adapters.aws.network import Ec2Network
from storagebench.adapters.aws.settings import AwsSettings

IMAGE = Image("ami-1", "/dev/xvda", "x86_64")


def test_the_request_carries_the_configs_group_besides_the_stacks_and_its_placement_group(
    compute: Ec2Compute, settings: AwsSettings
) -> None:
    request = compute.run_instances_request(launch_spec(groups=["sg-config"], placement="sb-1"), IMAGE)
    assert request["SecurityGroupIds"] == [settings.security_group_id, "sg-config"]
    assert request["Placement"] == {"GroupName": "sb-1"}


def test_without_a_network_the_request_is_the_stacks_group_alone_and_no_placement(
    compute: Ec2Compute, settings: AwsSettings
) -> None:
    request = compute.run_instances_request(launch_spec(), IMAGE)
    assert request["SecurityGroupIds"] == [settings.security_group_id]
    assert "Placement" not in request


def test_the_stacks_group_named_again_is_sent_once(compute: Ec2Compute, settings: AwsSettings) -> None:
    request = compute.run_instances_request(launch_spec(groups=[settings.security_group_id]), IMAGE)
    assert request["SecurityGroupIds"] == [settings.security_group_id]


def test_a_launched_node_is_in_both_groups_and_in_the_placement_group(
    ec2: Any, compute: Ec2Compute, network: Ec2Network, settings: AwsSettings, image_id: str
) -> None:
    ref = network.open(network_spec())
    assert ref.security_group_id is not None
    resources = compute.launch(launch_spec(image_id, [ref.security_group_id], ref.placement_group))
    reservation = ec2.describe_instances(InstanceIds=[resources.instance_id])["Reservations"][0]
    (instance,) = reservation["Instances"]
    assert {g["GroupId"] for g in instance["SecurityGroups"]} == {
        settings.security_group_id,
        ref.security_group_id,
    }
    assert instance["Placement"]["GroupName"] == ref.placement_group
    assert RUN in {t["Value"] for t in instance["Tags"]}

"""What the network tests share: the run, the config's labels and its port rules."""

from __future__ import annotations

from typing import Any

from storagebench.core.state import ImageRef, LaunchSpec, LaunchVolume, NetworkSpec, PortRule
from storagebench.core.tags import TAG_CONFIG, TAG_EXPIRES, TAG_RUN, TAG_STACK

REGION = "us-east-1"
STACK = "storagebench-test"
RUN = "vsa-20261126T000000Z-0a1b2c3d"
NVME_OF = PortRule(protocol="tcp", from_port=4420, to_port=4420)
CHUNKS = PortRule(protocol="tcp", from_port=9420, to_port=9422)


def labels(
    run_id: str = RUN, config_id: str = "vsa", expires: str = "2030-01-01T00:00:00Z"
) -> dict[str, str]:
    return {TAG_RUN: run_id, TAG_CONFIG: config_id, TAG_EXPIRES: expires, TAG_STACK: STACK}


def network_spec(
    config_id: str = "vsa",
    placement: Any = "cluster",
    rules: list[PortRule] | None = None,
    expires: str = "2030-01-01T00:00:00Z",
) -> NetworkSpec:
    return NetworkSpec(
        run_id=RUN,
        config_id=config_id,
        tags=labels(config_id=config_id, expires=expires),
        ingress=[NVME_OF, CHUNKS] if rules is None else rules,
        placement=placement,
    )


def launch_spec(
    image_id: str = "ami-1", groups: list[str] | None = None, placement: str | None = None, token: str = "t"
) -> LaunchSpec:
    """A node of the config: an r5b.large with an 8 GiB root, in ``groups`` and ``placement``."""
    return LaunchSpec(
        client_token=token * 64,
        instance_type="r5b.large",
        architecture="x86_64",
        root=LaunchVolume(target_id="root", member=0, device_name="/dev/xvda", volume_type="gp3", size_gib=8),
        volumes=[],
        tags=labels(),
        image=ImageRef(label="test", ami_id=image_id),
        security_group_ids=groups or [],
        placement_group=placement,
    )


def hold(ec2: Any, image_id: str, subnet_id: str, group_id: str | None, **request: Any) -> str:
    """An instance in ``group_id``, holding the group until it is gone; ``request`` adds to RunInstances."""
    common = {"ImageId": image_id, "MinCount": 1, "MaxCount": 1, "SubnetId": subnet_id}
    instance = ec2.run_instances(**common, SecurityGroupIds=[group_id], **request)["Instances"][0]
    return str(instance["InstanceId"])

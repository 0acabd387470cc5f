"""Per-config images on moto: each catalog name resolves for the type's architecture, boots from
the image's own root device, and a wrong owner or architecture is refused before RunInstances."""

from __future__ import annotations

from typing import Any

import boto3
import pytest

from storagebench.adapters.aws.ec2 import Ec2Compute
from storagebench.adapters.aws.settings import AwsSettings
from storagebench.catalog.images import image_ref
from storagebench.core.errors import ProvisioningError
from storagebench.core.state import ImageRef, LaunchSpec
from storagebench.request import parse_request
from storagebench.workflow.bindings import launch_spec
from storagebench_local.public_images import publish

REGION = "us-east-1"
ACCOUNT = "123456789012"


@pytest.fixture
def images(network: dict[str, str]) -> dict[str, str]:
    return publish(ACCOUNT, REGION)


@pytest.fixture
def compute(settings: AwsSettings, images: dict[str, str]) -> Ec2Compute:
    return Ec2Compute(
        boto3.client("ec2", region_name=REGION), boto3.client("ssm", region_name=REGION), settings
    )


def _spec(instance_type: str, image: str, token: str = "t" * 64) -> LaunchSpec:
    config = {"id": "c", "instance_type": instance_type, "image": image, "targets": [{"kind": "efs"}]}
    request = parse_request(
        {"name": "n", "configs": [config], "workloads": [{"profile": "dd-seq-write-1m-dsync"}]}
    )
    return launch_spec(request.configs[0], "run-1", {"storagebench:run": "run-1"}).model_copy(
        update={"client_token": token}
    )


def _instance(compute: Ec2Compute, instance_id: str | None) -> dict[str, Any]:
    reservations = compute.ec2.describe_instances(InstanceIds=[instance_id])["Reservations"]
    return dict(reservations[0]["Instances"][0])


@pytest.mark.parametrize(
    ("instance_type", "image", "arch", "root"),
    [
        ("c5.2xlarge", "ubuntu-24.04", "x86_64", "/dev/sda1"),
        ("c7g.large", "ubuntu-24.04", "arm64", "/dev/sda1"),
        ("m5.large", "ubuntu-22.04", "x86_64", "/dev/sda1"),
        ("c5.2xlarge", "debian-12", "x86_64", "/dev/xvda"),
        ("m7g.large", "debian-12", "arm64", "/dev/xvda"),
        ("m5.large", "rhel-9", "x86_64", "/dev/sda1"),
        ("c7g.large", "rhel-9", "arm64", "/dev/sda1"),
    ],
)
def test_a_catalog_image_resolves_for_the_types_architecture_and_boots_from_its_root_device(
    compute: Ec2Compute, images: dict[str, str], instance_type: str, image: str, arch: str, root: str
) -> None:
    resources = compute.launch(_spec(instance_type, image))
    instance = _instance(compute, resources.instance_id)
    assert instance["ImageId"] == images[f"{image}/{arch}"]
    assert {m["DeviceName"] for m in instance["BlockDeviceMappings"]} == {root}


def test_al2023_and_an_ami_id_and_a_parameter_path_launch_too(
    compute: Ec2Compute, images: dict[str, str]
) -> None:
    al2023 = compute.ssm.get_parameter(
        Name="/aws/service/ami-amazon-linux-latest/al2023-ami-kernel-default-x86_64"
    )
    for image, expected in (
        ("al2023", al2023["Parameter"]["Value"]),
        (images["debian-12/x86_64"], images["debian-12/x86_64"]),
        ("/aws/service/debian/release/12/latest/amd64", images["debian-12/x86_64"]),
    ):
        resources = compute.launch(_spec("m5.large", image, token=image.replace("/", "-")[:64]))
        assert _instance(compute, resources.instance_id)["ImageId"] == expected


def test_an_image_of_the_wrong_architecture_is_refused_before_launch(
    compute: Ec2Compute, images: dict[str, str]
) -> None:
    with pytest.raises(ProvisioningError, match=r"is arm64, but m5.large is x86_64: pick an x86_64 image"):
        compute.launch(_spec("m5.large", images["debian-12/arm64"]))
    assert compute.ec2.describe_instances()["Reservations"] == []


def test_a_parameter_pointing_at_an_image_of_another_owner_is_refused(
    compute: Ec2Compute, images: dict[str, str]
) -> None:
    spec = _spec("m5.large", "ubuntu-24.04")
    # the Ubuntu name, but the parameter answers Debian's image (a tampered or wrong parameter)
    wrong = ImageRef(label="ubuntu-24.04", ami_id=images["debian-12/x86_64"], owners=["099720109477"])
    with pytest.raises(ProvisioningError, match=r"owned by 136693071363, not by 099720109477"):
        compute.launch(spec.model_copy(update={"image": wrong}))


def test_a_missing_ami_is_named(compute: Ec2Compute) -> None:
    spec = _spec("m5.large", "ami-0123456789abcdef0")
    with pytest.raises(ProvisioningError, match="ami-0123456789abcdef0"):
        compute.launch(spec)


def test_ebs_optimization_is_requested_where_it_is_optional_and_left_to_ec2_elsewhere(
    compute: Ec2Compute,
) -> None:
    image = compute.image(_spec("m5.large", "al2023"))
    r3 = _spec("r3.4xlarge", "al2023")
    assert r3.ebs_optimized is True
    assert compute.run_instances_request(r3, image)["EbsOptimized"] is True
    m5 = _spec("m5.large", "al2023")
    assert m5.ebs_optimized is None and "EbsOptimized" not in compute.run_instances_request(m5, image)
    config = {"id": "c", "instance_type": "r3.4xlarge", "ebs_optimized": False, "targets": [{"kind": "efs"}]}
    declined = parse_request(
        {"name": "n", "configs": [config], "workloads": [{"profile": "dd-seq-write-1m-dsync"}]}
    )
    spec = launch_spec(declined.configs[0], "run-1", {})
    assert compute.run_instances_request(spec, image)["EbsOptimized"] is False


def test_the_launch_spec_carries_how_to_find_the_image() -> None:
    assert image_ref("rhel-9", "arm64") == ImageRef(
        label="rhel-9", name_pattern="RHEL-9.*_HVM-*-arm64-*-Hourly2-GP3", owners=["309956199498"]
    )
    assert _spec("c7g.large", "ubuntu-22.04").image == ImageRef(
        label="ubuntu-22.04",
        ssm_parameter="/aws/service/canonical/ubuntu/server/22.04/stable/current/arm64/hvm/ebs-gp2/ami-id",
        owners=["099720109477"],
    )

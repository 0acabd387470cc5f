"""Ec2Compute on moto (launch, status, terminate, leftovers) and botocore's Stubber (exact requests)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import boto3
import pytest
from botocore.exceptions import ClientError
from botocore.stub import ANY, Stubber
from tests.support.stack_env import aws_settings

from storagebench.adapters.aws.ec2 import Ec2Compute, Image
from storagebench.adapters.aws.settings import AwsSettings
from storagebench.core.errors import CapacityError, NotYetConsistentError, ResourceBusyError
from storagebench.core.state import LaunchSpec, LaunchVolume, Resources, VolumeRef
from storagebench.core.tags import TAG_CLIENT_TOKEN, TAG_CONFIG, TAG_EXPIRES, TAG_RUN, TAG_STACK

REGION = "us-east-1"
AMI = Image("ami-1", "/dev/xvda", "x86_64")
TAGS = {
    TAG_RUN: "run-1",
    TAG_CONFIG: "gp3",
    TAG_EXPIRES: "2030-01-01T00:00:00Z",
    TAG_STACK: "storagebench-test",
    "Name": "storagebench run-1/gp3",
}


def spec(
    token: str = "a" * 64, architecture: str = "x86_64", tags: dict[str, str] | None = None
) -> LaunchSpec:
    return LaunchSpec(
        client_token=token,
        instance_type="m6i.large",
        architecture=architecture,
        root=LaunchVolume(target_id="root", member=0, device_name="/dev/xvda", volume_type="gp3", size_gib=8),
        volumes=[
            LaunchVolume(
                target_id="ebs0",
                member=0,
                device_name="/dev/sdf",
                volume_type="gp3",
                size_gib=100,
                iops=6000,
                throughput_mibps=250,
            ),
            LaunchVolume(
                target_id="ebs0",
                member=1,
                device_name="/dev/sdg",
                volume_type="gp3",
                size_gib=100,
                iops=6000,
                throughput_mibps=250,
            ),
            LaunchVolume(target_id="ebs1", member=0, device_name="/dev/sdh", volume_type="st1", size_gib=125),
        ],
        tags=TAGS if tags is None else tags,
    )


@pytest.fixture
def compute(settings: AwsSettings, ami: dict[str, str]) -> Ec2Compute:
    return Ec2Compute(
        boto3.client("ec2", region_name=REGION), boto3.client("ssm", region_name=REGION), settings
    )


def _instance(ec2: Any, instance_id: str) -> dict[str, Any]:
    reservations = ec2.describe_instances(InstanceIds=[instance_id])["Reservations"]
    return dict(reservations[0]["Instances"][0])


def _tags(resource: dict[str, Any]) -> dict[str, str]:
    return {t["Key"]: t["Value"] for t in resource.get("Tags", [])}


# ------------------------------------------------------------------------ launch (moto)


def test_launch_tags_instance_and_every_volume_at_creation(
    compute: Ec2Compute, network: dict[str, str], ami: dict[str, str]
) -> None:
    resources = compute.launch(spec())

    assert resources.instance_id is not None
    instance = _instance(compute.ec2, resources.instance_id)
    assert _tags(instance) == {**TAGS, TAG_CLIENT_TOKEN: "a" * 64}
    assert instance["ImageId"] == ami["x86_64"]
    assert instance["SubnetId"] == network["subnet"]
    assert [g["GroupId"] for g in instance["SecurityGroups"]] == [network["group"]]
    assert instance["IamInstanceProfile"]["Arn"].endswith("instance-profile/storagebench-instance")
    assert "KeyName" not in instance
    assert instance["MetadataOptions"]["HttpTokens"] == "required"  # IMDSv2 only

    volumes = compute.ec2.describe_volumes(
        Filters=[{"Name": "attachment.instance-id", "Values": [resources.instance_id]}]
    )["Volumes"]
    assert sorted(v["Attachments"][0]["Device"] for v in volumes) == [
        "/dev/sdf",
        "/dev/sdg",
        "/dev/sdh",
        "/dev/xvda",
    ]
    for volume in volumes:  # root and data volumes carry the run's tags from the start
        assert _tags(volume)[TAG_RUN] == "run-1"
        assert _tags(volume)[TAG_CONFIG] == "gp3"
        assert volume["Encrypted"] is True
    by_device = {v["Attachments"][0]["Device"]: v for v in volumes}
    assert by_device["/dev/sdh"]["VolumeType"] == "st1"
    assert by_device["/dev/sdh"]["Size"] == 125
    mappings = {m["DeviceName"]: m["Ebs"] for m in instance["BlockDeviceMappings"]}
    assert all(m["DeleteOnTermination"] for m in mappings.values())

    assert [(v.target_id, v.member, v.device_name) for v in resources.volumes] == [
        ("ebs0", 0, "/dev/sdf"),
        ("ebs0", 1, "/dev/sdg"),
        ("ebs1", 0, "/dev/sdh"),
    ]
    assert [v.volume_id for v in resources.volumes] == [
        by_device[d]["VolumeId"] for d in ("/dev/sdf", "/dev/sdg", "/dev/sdh")
    ]
    assert resources.launched_at is not None and resources.launched_at.endswith("Z")


def test_retried_launch_returns_the_same_instance(compute: Ec2Compute, call_log: Any) -> None:
    log = call_log(compute.ec2)
    first = compute.launch(spec())
    again = compute.launch(spec())

    assert again.instance_id == first.instance_id
    assert [v.volume_id for v in again.volumes] == [v.volume_id for v in first.volumes]
    assert log.count("RunInstances") == 1
    running = compute.ec2.describe_instances(Filters=[{"Name": f"tag:{TAG_RUN}", "Values": ["run-1"]}])[
        "Reservations"
    ]
    assert sum(len(r["Instances"]) for r in running) == 1
    run_call = next(params for name, params in log.calls if name == "RunInstances")
    assert run_call["ClientToken"] == "a" * 64  # EC2's own idempotency, should the tag lookup miss


def test_another_token_launches_another_instance(compute: Ec2Compute) -> None:
    first = compute.launch(spec("a" * 64))
    other = compute.launch(spec("b" * 64, tags={**TAGS, TAG_CONFIG: "other"}))
    assert other.instance_id != first.instance_id


def test_arm64_uses_the_arm64_image(compute: Ec2Compute, ami: dict[str, str]) -> None:
    resources = compute.launch(spec(architecture="arm64"))
    assert resources.instance_id is not None
    assert _instance(compute.ec2, resources.instance_id)["ImageId"] == ami["arm64"]


# ------------------------------------------------------------------------ launch (exact request)


def test_encrypted_volumes_use_the_stack_key_when_it_names_one(
    settings: AwsSettings, ami: dict[str, str]
) -> None:
    key = "arn:aws:kms:us-east-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab"
    keyed = Ec2Compute(None, None, settings.model_copy(update={"ebs_kms_key_arn": key}))
    plain = Ec2Compute(None, None, settings)
    launch = spec()
    launch.volumes[1] = launch.volumes[1].model_copy(update={"encrypted": False})

    with_key = [m["Ebs"] for m in keyed.run_instances_request(launch, AMI)["BlockDeviceMappings"]]
    assert [e["Encrypted"] for e in with_key] == [True, True, False, True]  # root first
    assert [e.get("KmsKeyId") for e in with_key] == [key, key, None, key]  # never on an unencrypted one
    account_default = [m["Ebs"] for m in plain.run_instances_request(launch, AMI)["BlockDeviceMappings"]]
    assert all("KmsKeyId" not in e for e in account_default)
    assert [e["Encrypted"] for e in account_default] == [True, True, False, True]


def test_run_instances_request_carries_every_volume_parameter(stack_env: dict[str, str]) -> None:
    """moto rejects io1/io2 mappings (it drops their Iops), so the request is checked as sent."""
    ec2 = boto3.client("ec2", region_name=REGION)
    ssm = boto3.client("ssm", region_name=REGION)
    settings = aws_settings(REGION)
    launch = LaunchSpec(
        client_token="tok-1",
        instance_type="r5b.large",
        architecture="x86_64",
        root=LaunchVolume(
            target_id="root",
            member=0,
            device_name="/dev/xvda",
            volume_type="io2",
            size_gib=20,
            iops=3000,
            encrypted=False,
        ),
        volumes=[
            LaunchVolume(
                target_id="io", member=0, device_name="/dev/sdf", volume_type="io2", size_gib=512, iops=64000
            ),
            LaunchVolume(
                target_id="gp",
                member=0,
                device_name="/dev/sdg",
                volume_type="gp3",
                size_gib=100,
                iops=4000,
                throughput_mibps=500,
            ),
            LaunchVolume(
                target_id="snap",
                member=0,
                device_name="/dev/sdh",
                volume_type="gp3",
                size_gib=200,
                snapshot_id="snap-0123456789abcdef0",
                initialization_rate_mibps=300,
            ),
        ],
        tags={TAG_RUN: "r", TAG_CONFIG: "c"},
    )
    tags = [
        {"Key": TAG_CLIENT_TOKEN, "Value": "tok-1"},
        {"Key": TAG_CONFIG, "Value": "c"},
        {"Key": TAG_RUN, "Value": "r"},
    ]
    expected = {
        "ClientToken": "tok-1",
        "ImageId": "ami-0123",
        "InstanceType": "r5b.large",
        "MinCount": 1,
        "MaxCount": 1,
        "SubnetId": "subnet-1",
        "SecurityGroupIds": ["sg-1"],
        "IamInstanceProfile": {"Arn": "arn:aws:iam::1:instance-profile/p"},
        "MetadataOptions": {"HttpTokens": "required", "HttpEndpoint": "enabled"},
        "InstanceInitiatedShutdownBehavior": "terminate",
        "BlockDeviceMappings": [
            {
                "DeviceName": "/dev/xvda",
                "Ebs": {
                    "VolumeType": "io2",
                    "VolumeSize": 20,
                    "Encrypted": False,
                    "DeleteOnTermination": True,
                    "Iops": 3000,
                },
            },
            {
                "DeviceName": "/dev/sdf",
                "Ebs": {
                    "VolumeType": "io2",
                    "VolumeSize": 512,
                    "Encrypted": True,
                    "DeleteOnTermination": True,
                    "Iops": 64000,
                },
            },
            {
                "DeviceName": "/dev/sdg",
                "Ebs": {
                    "VolumeType": "gp3",
                    "VolumeSize": 100,
                    "Encrypted": True,
                    "DeleteOnTermination": True,
                    "Iops": 4000,
                    "Throughput": 500,
                },
            },
            {
                "DeviceName": "/dev/sdh",
                "Ebs": {
                    "VolumeType": "gp3",
                    "VolumeSize": 200,
                    "Encrypted": True,
                    "DeleteOnTermination": True,
                    "SnapshotId": "snap-0123456789abcdef0",
                    "VolumeInitializationRate": 300,
                },
            },
        ],
        "TagSpecifications": [
            {"ResourceType": "instance", "Tags": tags},
            {"ResourceType": "volume", "Tags": tags},
        ],
    }
    with Stubber(ec2) as ec2_stub, Stubber(ssm) as ssm_stub:
        ec2_stub.add_response(
            "describe_instances",
            {"Reservations": []},
            {"Filters": [{"Name": f"tag:{TAG_CLIENT_TOKEN}", "Values": ["tok-1"]}]},
        )
        ssm_stub.add_response(
            "get_parameter",
            {"Parameter": {"Name": "p", "Value": "ami-0123"}},
            {"Name": "/aws/service/ami-amazon-linux-latest/al2023-ami-kernel-default-x86_64"},
        )
        ec2_stub.add_response(
            "describe_images",
            {"Images": [{"ImageId": "ami-0123", "Architecture": "x86_64", "RootDeviceName": "/dev/xvda"}]},
            {"ImageIds": ["ami-0123"]},
        )
        ec2_stub.add_response(
            "run_instances",
            {
                "Instances": [
                    {
                        "InstanceId": "i-0abc",
                        "LaunchTime": datetime(2030, 1, 1, tzinfo=UTC),
                        "BlockDeviceMappings": [],
                    }
                ]
            },
            expected,
        )
        resources = Ec2Compute(ec2, ssm, settings).launch(launch)
        ec2_stub.assert_no_pending_responses()
    assert resources.instance_id == "i-0abc"
    assert resources.launched_at == "2030-01-01T00:00:00Z"
    assert [v.volume_id for v in resources.volumes] == [None, None, None]  # filled in by status()


def test_capacity_errors_surface_as_capacity_error(stack_env: dict[str, str]) -> None:
    ec2 = boto3.client("ec2", region_name=REGION)
    ssm = boto3.client("ssm", region_name=REGION)
    settings = aws_settings(REGION, instance_profile_arn="arn:p", agent_document="d")
    with Stubber(ec2) as ec2_stub, Stubber(ssm) as ssm_stub:
        ec2_stub.add_response("describe_instances", {"Reservations": []})
        ssm_stub.add_response("get_parameter", {"Parameter": {"Value": "ami-1"}})
        ec2_stub.add_response("describe_images", {"Images": [{"ImageId": "ami-1", "Architecture": "x86_64"}]})
        ec2_stub.add_client_error(
            "run_instances",
            "InsufficientInstanceCapacity",
            "We currently do not have sufficient m6i.large capacity in us-east-1a.",
        )
        with pytest.raises(CapacityError, match="InsufficientInstanceCapacity") as caught:
            Ec2Compute(ec2, ssm, settings).launch(spec())
    assert isinstance(caught.value.__cause__, ClientError)


# ------------------------------------------------------------------------ status


def test_status_reports_running_checks_and_attached_volumes(compute: Ec2Compute) -> None:
    launched = compute.launch(spec())
    recorded = launched.model_copy(
        update={"volumes": [v.model_copy(update={"volume_id": None}) for v in launched.volumes]}
    )

    status = compute.status(recorded)

    assert status.instance_state == "running"
    assert status.status_checks_ok is True
    assert status.volumes_in_use is True
    assert status.volumes_initialized is True  # blank volumes need no initialisation
    assert [v.volume_id for v in status.volumes] == [v.volume_id for v in launched.volumes]
    assert {v.state for v in status.volumes} == {"in-use"}


def test_status_of_an_unknown_instance_is_not_yet_consistent(compute: Ec2Compute) -> None:
    with pytest.raises(NotYetConsistentError, match=r"InvalidInstanceID\.NotFound"):
        compute.status(Resources(instance_id="i-0123456789abcdef0"))


def _volume(volume_id: str, device: str, snapshot: str = "", rate: int | None = None) -> dict[str, Any]:
    volume: dict[str, Any] = {
        "VolumeId": volume_id,
        "State": "in-use",
        "SnapshotId": snapshot,
        "Size": 200,
        "VolumeType": "gp3",
        "Attachments": [
            {
                "InstanceId": "i-1",
                "Device": device,
                "State": "attached",
                "VolumeId": volume_id,
                "DeleteOnTermination": True,
            }
        ],
    }
    if rate is not None:
        volume["VolumeInitializationRate"] = rate
    return volume


@pytest.mark.parametrize(("progress", "initialized"), [(40, False), (100, True)])
def test_status_waits_for_provisioned_rate_initialization(
    stack_env: dict[str, str], progress: int, initialized: bool
) -> None:
    ec2 = boto3.client("ec2", region_name=REGION)
    settings = aws_settings(REGION, instance_profile_arn="arn:p", agent_document="d")
    refs = [
        VolumeRef(target_id="snap", member=0, device_name="/dev/sdf", volume_type="gp3", size_gib=200),
        VolumeRef(target_id="lazy", member=0, device_name="/dev/sdg", volume_type="gp3", size_gib=200),
        VolumeRef(target_id="blank", member=0, device_name="/dev/sdh", volume_type="gp3", size_gib=200),
    ]
    with Stubber(ec2) as stub:
        stub.add_response(
            "describe_instances",
            {
                "Reservations": [
                    {"Instances": [{"InstanceId": "i-1", "State": {"Code": 16, "Name": "running"}}]}
                ]
            },
            {"InstanceIds": ["i-1"]},
        )
        stub.add_response(
            "describe_instance_status",
            {
                "InstanceStatuses": [
                    {
                        "InstanceId": "i-1",
                        "InstanceStatus": {"Status": "ok"},
                        "SystemStatus": {"Status": "ok"},
                    }
                ]
            },
            {"InstanceIds": ["i-1"], "IncludeAllInstances": True},
        )
        stub.add_response(
            "describe_volumes",
            {
                "Volumes": [
                    _volume("vol-snap", "/dev/sdf", "snap-1", rate=300),
                    _volume("vol-lazy", "/dev/sdg", "snap-2"),
                    _volume("vol-blank", "/dev/sdh"),
                    _volume("vol-root", "/dev/xvda", "snap-ami"),
                ]
            },
            {"Filters": [{"Name": "attachment.instance-id", "Values": ["i-1"]}]},
        )
        stub.add_response(
            "describe_volume_status",
            {
                "VolumeStatuses": [
                    {
                        "VolumeId": "vol-snap",
                        "InitializationStatusDetails": {
                            "InitializationType": "provisioned-rate",
                            "Progress": progress,
                        },
                    },
                    {
                        "VolumeId": "vol-lazy",
                        "InitializationStatusDetails": {"InitializationType": "default", "Progress": 3},
                    },
                ]
            },
            {"VolumeIds": ["vol-snap", "vol-lazy"]},
        )  # only data volumes restored from snapshots
        status = Ec2Compute(ec2, object(), settings).status(Resources(instance_id="i-1", volumes=refs))
        stub.assert_no_pending_responses()
    assert status.volumes_initialized is initialized
    assert status.volumes_in_use is True
    assert [v.volume_id for v in status.volumes] == ["vol-snap", "vol-lazy", "vol-blank"]
    assert status.reason is not None
    assert f"vol-snap {progress}% (provisioned rate)" in status.reason
    assert "vol-lazy 3%" in status.reason  # reported, not waited for: the cold read is a result


# ------------------------------------------------------------------------ terminate and leftovers


def test_leftovers_before_and_after_terminate(compute: Ec2Compute) -> None:
    launched = compute.launch(spec())
    other = compute.launch(spec("b" * 64, tags={**TAGS, TAG_CONFIG: "other"}))
    assert launched.instance_id is not None

    before = compute.leftovers("run-1", "gp3")
    assert launched.instance_id in before
    assert len(before) == 1 + 4  # the instance, its root and three data volumes
    assert other.instance_id not in before

    deleted = compute.terminate(launched, "run-1", "gp3")
    assert launched.instance_id in deleted
    assert compute.leftovers("run-1", "gp3") == []
    assert other.instance_id in compute.leftovers("run-1", "other")


def test_terminate_deletes_a_separately_created_volume(compute: Ec2Compute, network: dict[str, str]) -> None:
    launched = compute.launch(spec())
    assert launched.instance_id is not None
    tag_list = [{"Key": k, "Value": v} for k, v in TAGS.items()]
    loose = compute.ec2.create_volume(
        AvailabilityZone="us-east-1a",
        Size=10,
        VolumeType="gp3",
        TagSpecifications=[{"ResourceType": "volume", "Tags": tag_list}],
    )["VolumeId"]
    attached = compute.ec2.create_volume(
        AvailabilityZone="us-east-1a",
        Size=10,
        VolumeType="gp3",
        TagSpecifications=[{"ResourceType": "volume", "Tags": tag_list}],
    )["VolumeId"]
    compute.ec2.attach_volume(VolumeId=attached, InstanceId=launched.instance_id, Device="/dev/sdz")
    unrelated = compute.ec2.create_volume(AvailabilityZone="us-east-1a", Size=10)["VolumeId"]

    deleted = compute.terminate(launched, "run-1", "gp3")

    assert {loose, attached} <= set(deleted)
    remaining = {v["VolumeId"] for v in compute.ec2.describe_volumes()["Volumes"]}
    assert remaining == {unrelated}
    assert _instance(compute.ec2, launched.instance_id)["State"]["Name"] == "terminated"


def test_terminate_is_idempotent(compute: Ec2Compute) -> None:
    launched = compute.launch(spec())
    assert launched.instance_id in compute.terminate(launched, "run-1", "gp3")
    assert compute.terminate(launched, "run-1", "gp3") == []  # already terminated: nothing more to do
    assert compute.terminate(Resources(instance_id="i-0123456789abcdef0"), "run-1", "gp3") == []  # long gone
    assert compute.terminate(Resources(), "run-9", "none") == []


def test_terminate_finds_an_instance_the_state_never_recorded(compute: Ec2Compute) -> None:
    """Provision launched, then failed before returning: cleanup still finds the instance by its tags."""
    launched = compute.launch(spec())
    deleted = compute.terminate(Resources(), "run-1", "gp3")
    assert launched.instance_id in deleted
    assert compute.leftovers("run-1", "gp3") == []


def test_terminate_waits_for_a_volume_that_outlives_its_instance(stack_env: dict[str, str]) -> None:
    """Attached without DeleteOnTermination to an instance still shutting down: retry later."""
    ec2 = boto3.client("ec2", region_name=REGION)
    settings = aws_settings(REGION, instance_profile_arn="arn:p", agent_document="d")
    instance = {
        "InstanceId": "i-1",
        "State": {"Code": 32, "Name": "shutting-down"},
        "Tags": [{"Key": TAG_RUN, "Value": "r"}, {"Key": TAG_CONFIG, "Value": "c"}],
        "BlockDeviceMappings": [
            {"DeviceName": "/dev/xvda", "Ebs": {"VolumeId": "vol-root", "DeleteOnTermination": True}}
        ],
    }
    kept = _volume("vol-kept", "/dev/sdz")
    kept["Attachments"][0]["DeleteOnTermination"] = False
    with Stubber(ec2) as stub:
        stub.add_response(
            "describe_instances", {"Reservations": [{"Instances": [instance]}]}, {"Filters": ANY}
        )
        stub.add_response("terminate_instances", {"TerminatingInstances": []}, {"InstanceIds": ["i-1"]})
        stub.add_response(
            "describe_volumes", {"Volumes": [_volume("vol-root", "/dev/xvda"), kept]}, {"Filters": ANY}
        )
        with pytest.raises(ResourceBusyError, match="vol-kept"):
            Ec2Compute(ec2, object(), settings).terminate(Resources(instance_id="i-1"), "r", "c")

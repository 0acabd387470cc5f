"""AwsFileSystems: EFS and FSx for Lustre on moto, lifecycles moto skips with botocore's Stubber."""

from __future__ import annotations

import json
from typing import Any

import boto3
import pytest
from botocore.stub import Stubber
from tests.support.stack_env import aws_settings

from storagebench.adapters.aws.filesystems import AwsFileSystems, efs_file_system_policy, fsx_request_token
from storagebench.adapters.aws.settings import AwsSettings
from storagebench.core.errors import ProvisioningError, ResourceBusyError
from storagebench.core.state import FileSystemRef, FileSystemSpec
from storagebench.core.tags import TAG_CONFIG, TAG_RUN

REGION = "us-east-1"
TAGS = {TAG_RUN: "r1", TAG_CONFIG: "efs"}
STUB_GROUP = "sg-0c0f1a2b"  # the config's group where EC2 is stubbed; on moto, the network fixture's


def tagged(token: str, group: str) -> dict[str, Any]:
    """What every file system of these tests is created with: its token, the run's tags, its group."""
    return {"creation_token": token, "tags": TAGS, "security_group_id": group}


def efs_spec(group: str = STUB_GROUP, token: str = "r1-efs-efs0", **settings: Any) -> FileSystemSpec:
    values: dict[str, Any] = {
        "kind": "efs",
        "id": "efs0",
        "throughput_mode": "elastic",
        "provisioned_throughput_mibps": None,
        "performance_mode": "generalPurpose",
        "one_zone": False,
        "encrypted": True,
    }
    values.update(settings)
    return FileSystemSpec(target_id="efs0", kind="efs", **tagged(token, group), settings=values)


def fsx_spec(group: str = STUB_GROUP, token: str = "r1-fsx-fsx0", **settings: Any) -> FileSystemSpec:
    values: dict[str, Any] = {
        "kind": "fsx_lustre",
        "id": "fsx0",
        "deployment_type": "SCRATCH_2",
        "storage_capacity_gib": 1200,
        "per_unit_storage_throughput": None,
        "data_compression": "NONE",
        "stripe_count": -1,
    }
    values.update(settings)
    return FileSystemSpec(target_id="fsx0", kind="fsx_lustre", **tagged(token, group), settings=values)


@pytest.fixture
def filesystems(settings: AwsSettings) -> AwsFileSystems:
    return AwsFileSystems(
        boto3.client("efs", region_name=REGION),
        boto3.client("fsx", region_name=REGION),
        settings,
        boto3.client("ec2", region_name=REGION),
    )


def stub_settings() -> AwsSettings:
    return aws_settings(
        REGION,
        subnet_id="subnet-0123abcd",
        security_group_id="sg-instances",
        instance_profile_arn="arn:p",
        agent_document="d",
    )


def _request(log: Any, operation: str) -> dict[str, Any]:
    return next(params for name, params in log.calls if name == operation)


def _created(filesystems: AwsFileSystems, call_log: Any, spec: Any) -> tuple[Any, dict[str, Any]]:
    """The file system made from ``spec``, and the CreateFileSystem request its service was sent."""
    log = call_log(filesystems.efs if spec.kind == "efs" else filesystems.fsx)
    ref = filesystems.create(spec, None)
    return ref, _request(log, "CreateFileSystem")


# ------------------------------------------------------------------------ EFS on moto


def test_efs_create_makes_the_file_system_and_its_mount_target(
    filesystems: AwsFileSystems, network: dict[str, str], call_log: Any
) -> None:
    ref, request = _created(filesystems, call_log, efs_spec(network["fs_group"]))
    assert request == {
        "CreationToken": "r1-efs-efs0",
        "PerformanceMode": "generalPurpose",
        "ThroughputMode": "elastic",
        "Encrypted": True,
        "Tags": [{"Key": TAG_CONFIG, "Value": "efs"}, {"Key": TAG_RUN, "Value": "r1"}],
    }
    assert ref.kind == "efs"
    assert ref.dns_name == f"{ref.file_system_id}.efs.{REGION}.amazonaws.com"
    targets = filesystems.efs.describe_mount_targets(FileSystemId=ref.file_system_id)["MountTargets"]
    assert [t["SubnetId"] for t in targets] == [network["subnet"]]
    assert ref.mount_target_ids == [targets[0]["MountTargetId"]]
    groups = filesystems.efs.describe_mount_target_security_groups(MountTargetId=targets[0]["MountTargetId"])
    assert groups["SecurityGroups"] == [network["fs_group"]]  # the config's group, from the spec
    described = filesystems.efs.describe_file_systems(FileSystemId=ref.file_system_id)["FileSystems"][0]
    assert {t["Key"]: t["Value"] for t in described["Tags"]} == TAGS
    policy = filesystems.efs.describe_file_system_policy(FileSystemId=ref.file_system_id)["Policy"]
    assert json.loads(policy) == efs_file_system_policy(described["FileSystemArn"])
    assert filesystems.status(ref) == "available"


def test_efs_create_is_idempotent_by_creation_token(
    filesystems: AwsFileSystems, network: dict[str, str]
) -> None:
    first = filesystems.create(efs_spec(network["fs_group"]), None)
    again = filesystems.create(efs_spec(network["fs_group"]), None)
    assert again.file_system_id == first.file_system_id
    assert again.mount_target_ids == first.mount_target_ids
    assert len(filesystems.efs.describe_file_systems()["FileSystems"]) == 1


def test_one_zone_provisioned_efs_goes_in_the_subnet_zone(
    filesystems: AwsFileSystems, call_log: Any, network: dict[str, str]
) -> None:
    spec = efs_spec(
        network["fs_group"], throughput_mode="provisioned", provisioned_throughput_mibps=128.0, one_zone=True
    )
    ref, request = _created(filesystems, call_log, spec)
    assert request["AvailabilityZoneName"] == "us-east-1a"
    assert request["ThroughputMode"] == "provisioned"
    assert request["ProvisionedThroughputInMibps"] == 128.0
    described = filesystems.efs.describe_file_systems(FileSystemId=ref.file_system_id)["FileSystems"][0]
    assert described["AvailabilityZoneName"] == "us-east-1a"
    assert described["ProvisionedThroughputInMibps"] == 128.0


def test_efs_delete_removes_mount_targets_before_the_file_system(
    filesystems: AwsFileSystems, call_log: Any, network: dict[str, str]
) -> None:
    ref = filesystems.create(efs_spec(network["fs_group"]), None)
    log = call_log(filesystems.efs)

    filesystems.delete(ref)

    writes = [name for name in log.names if name.startswith("Delete")]
    assert writes == ["DeleteMountTarget", "DeleteFileSystem"]
    assert filesystems.efs.describe_file_systems()["FileSystems"] == []
    filesystems.delete(ref)  # a retried cleanup: already gone


# ------------------------------------------------------------------------ EFS lifecycle (stubbed)


FS_ARN = f"arn:aws:elasticfilesystem:{REGION}:123456789012:file-system/fs-1"


def described_fs_1(state: str) -> dict[str, Any]:
    """DescribeFileSystems' answer for fs-1 (no mount target yet) in ``state``."""
    return {
        "FileSystems": [
            {
                "FileSystemId": "fs-1",
                "FileSystemArn": FS_ARN,
                "LifeCycleState": state,
                "OwnerId": "1",
                "CreationToken": "t",
                "CreationTime": 0,
                "NumberOfMountTargets": 0,
                "SizeInBytes": {"Value": 0},
                "PerformanceMode": "generalPurpose",
                "Tags": [],
            }
        ]
    }


def test_efs_mount_target_waits_for_an_available_file_system(stack_env: dict[str, str]) -> None:
    efs = boto3.client("efs", region_name=REGION)
    filesystems = AwsFileSystems(efs, object(), stub_settings(), object())
    ref = FileSystemRef(target_id="efs0", kind="efs", file_system_id="fs-1", security_group_id=STUB_GROUP)

    def mount_target(state: str) -> dict[str, Any]:
        return {
            "MountTargetId": "fsmt-0123abcd",
            "FileSystemId": "fs-1",
            "SubnetId": "subnet-0123abcd",
            "LifeCycleState": state,
        }

    with Stubber(efs) as stub:
        stub.add_response("describe_file_systems", described_fs_1("creating"), {"FileSystemId": "fs-1"})
        stub.add_response("describe_file_systems", described_fs_1("available"), {"FileSystemId": "fs-1"})
        stub.add_response("describe_mount_targets", {"MountTargets": []}, {"FileSystemId": "fs-1"})
        stub.add_response(  # the policy first: no client ever meets the default (public) policy
            "put_file_system_policy",
            {"FileSystemId": "fs-1", "Policy": "{}"},
            {"FileSystemId": "fs-1", "Policy": json.dumps(efs_file_system_policy(FS_ARN))},
        )
        stub.add_response(
            "create_mount_target",
            mount_target("creating"),
            {"FileSystemId": "fs-1", "SubnetId": "subnet-0123abcd", "SecurityGroups": [STUB_GROUP]},
        )
        stub.add_response("describe_file_systems", described_fs_1("available"), {"FileSystemId": "fs-1"})
        stub.add_response(
            "describe_mount_targets", {"MountTargets": [mount_target("available")]}, {"FileSystemId": "fs-1"}
        )

        assert filesystems.status(ref) == "creating"  # no mount target on a creating file system
        assert filesystems.status(ref) == "creating"  # mount target requested
        assert ref.mount_target_ids == ["fsmt-0123abcd"]
        assert filesystems.status(ref) == "available"  # the existing one is not created twice
        stub.assert_no_pending_responses()


def test_the_efs_policy_lets_clients_in_through_a_mount_target_only() -> None:
    (statement,) = efs_file_system_policy(FS_ARN)["Statement"]
    assert statement["Effect"] == "Allow" and statement["Resource"] == FS_ARN
    assert statement["Condition"] == {"Bool": {"elasticfilesystem:AccessedViaMountTarget": "true"}}
    assert sorted(statement["Action"]) == [
        "elasticfilesystem:ClientMount",
        "elasticfilesystem:ClientRootAccess",
        "elasticfilesystem:ClientWrite",
    ]


def test_an_efs_ref_without_the_configs_group_gets_no_mount_target(stack_env: dict[str, str]) -> None:
    efs = boto3.client("efs", region_name=REGION)
    filesystems = AwsFileSystems(efs, object(), stub_settings(), object())
    ref = FileSystemRef(target_id="efs0", kind="efs", file_system_id="fs-1")  # recorded before issue 27
    available = described_fs_1("available")
    with Stubber(efs) as stub:
        stub.add_response("describe_file_systems", available, {"FileSystemId": "fs-1"})
        stub.add_response("describe_mount_targets", {"MountTargets": []}, {"FileSystemId": "fs-1"})
        with pytest.raises(
            ProvisioningError, match="EFS fs-1: no security group recorded for its mount target"
        ):
            filesystems.status(ref)


def test_efs_delete_is_busy_while_mount_targets_go(stack_env: dict[str, str]) -> None:
    efs = boto3.client("efs", region_name=REGION)
    filesystems = AwsFileSystems(efs, object(), stub_settings(), object())
    ref = FileSystemRef(target_id="efs0", kind="efs", file_system_id="fs-1")
    available = {
        "MountTargetId": "fsmt-0123abcd",
        "FileSystemId": "fs-1",
        "SubnetId": "subnet-0123abcd",
        "LifeCycleState": "available",
    }
    deleting = {**available, "LifeCycleState": "deleting"}
    with Stubber(efs) as stub:
        stub.add_response("describe_mount_targets", {"MountTargets": [available]}, {"FileSystemId": "fs-1"})
        stub.add_response("delete_mount_target", {}, {"MountTargetId": "fsmt-0123abcd"})
        stub.add_response("describe_mount_targets", {"MountTargets": [deleting]}, {"FileSystemId": "fs-1"})
        # the retry: still deleting, not asked again, and no DeleteFileSystem
        stub.add_response("describe_mount_targets", {"MountTargets": [deleting]}, {"FileSystemId": "fs-1"})
        stub.add_response("describe_mount_targets", {"MountTargets": [deleting]}, {"FileSystemId": "fs-1"})
        # the last retry: gone, so the file system goes
        stub.add_response("describe_mount_targets", {"MountTargets": []}, {"FileSystemId": "fs-1"})
        stub.add_response("delete_file_system", {}, {"FileSystemId": "fs-1"})

        with pytest.raises(ResourceBusyError, match="fsmt-0123abcd"):
            filesystems.delete(ref)
        with pytest.raises(ResourceBusyError):
            filesystems.delete(ref)
        filesystems.delete(ref)
        stub.assert_no_pending_responses()


def test_efs_file_system_in_use_is_busy(stack_env: dict[str, str]) -> None:
    efs = boto3.client("efs", region_name=REGION)
    filesystems = AwsFileSystems(efs, object(), stub_settings(), object())
    with Stubber(efs) as stub:
        stub.add_response("describe_mount_targets", {"MountTargets": []}, {"FileSystemId": "fs-1"})
        stub.add_client_error("delete_file_system", "FileSystemInUse", "mount targets exist", 409)
        with pytest.raises(ResourceBusyError, match="FileSystemInUse"):
            filesystems.delete(FileSystemRef(target_id="efs0", kind="efs", file_system_id="fs-1"))


# ------------------------------------------------------------------------ FSx for Lustre


def test_fsx_create_sends_the_lustre_configuration(
    filesystems: AwsFileSystems, network: dict[str, str], call_log: Any
) -> None:
    spec = fsx_spec(
        network["fs_group"],
        deployment_type="PERSISTENT_2",
        per_unit_storage_throughput=250,
        data_compression="LZ4",
    )
    ref, request = _created(filesystems, call_log, spec)
    assert request == {
        "ClientRequestToken": "r1-fsx-fsx0",
        "FileSystemType": "LUSTRE",
        "StorageCapacity": 1200,
        "SubnetIds": [network["subnet"]],
        "SecurityGroupIds": [network["fs_group"]],
        "LustreConfiguration": {
            "DeploymentType": "PERSISTENT_2",
            "DataCompressionType": "LZ4",
            "PerUnitStorageThroughput": 250,
            "AutomaticBackupRetentionDays": 0,
        },
        "Tags": [{"Key": TAG_CONFIG, "Value": "efs"}, {"Key": TAG_RUN, "Value": "r1"}],
    }
    assert ref.kind == "fsx_lustre"
    assert ref.dns_name == f"{ref.file_system_id}.fsx.{REGION}.amazonaws.com"
    described = filesystems.fsx.describe_file_systems(FileSystemIds=[ref.file_system_id])["FileSystems"][0]
    assert {t["Key"]: t["Value"] for t in described["Tags"]} == TAGS

    filesystems.delete(ref)
    assert filesystems.fsx.describe_file_systems()["FileSystems"] == []
    filesystems.delete(ref)  # already gone


def test_scratch_fsx_takes_no_per_unit_throughput(filesystems: AwsFileSystems) -> None:
    request = filesystems.fsx_request(fsx_spec(per_unit_storage_throughput=200))
    assert request["LustreConfiguration"] == {"DeploymentType": "SCRATCH_2", "DataCompressionType": "NONE"}


def test_fsx_request_token_fits_fsx_rules() -> None:
    assert fsx_request_token("r1-fsx-fsx0") == "r1-fsx-fsx0"
    long = "r" * 40 + "-config-with-long-name-x"  # 64 characters, as steps.provision may make
    assert len(long) == 64
    token = fsx_request_token(long)
    assert len(token) == 63 and token == fsx_request_token(long)
    assert fsx_request_token("run:1/x") != "run:1/x"


@pytest.mark.parametrize(
    ("lifecycle", "expected"),
    [
        ("CREATING", "creating"),
        ("AVAILABLE", "available"),
        ("UPDATING", "available"),
        ("FAILED", "failed"),
        ("MISCONFIGURED", "failed"),
    ],
)
def test_fsx_status_follows_the_lifecycle(stack_env: dict[str, str], lifecycle: str, expected: str) -> None:
    fsx = boto3.client("fsx", region_name=REGION)
    filesystems = AwsFileSystems(object(), fsx, stub_settings(), object())
    ref = FileSystemRef(target_id="fsx0", kind="fsx_lustre", file_system_id="fs-0123456789abcdef0")
    with Stubber(fsx) as stub:
        stub.add_response(
            "describe_file_systems",
            {
                "FileSystems": [
                    {
                        "FileSystemId": "fs-0123456789abcdef0",
                        "Lifecycle": lifecycle,
                        "DNSName": "fs-0123456789abcdef0.fsx.us-east-1.amazonaws.com",
                        "LustreConfiguration": {"DeploymentType": "SCRATCH_2", "MountName": "abcdefgh"},
                    }
                ]
            },
            {"FileSystemIds": ["fs-0123456789abcdef0"]},
        )
        assert filesystems.status(ref) == expected
    assert ref.dns_name == "fs-0123456789abcdef0.fsx.us-east-1.amazonaws.com"
    assert ref.mount_name == "abcdefgh"


def test_persistent_fsx_is_deleted_without_a_final_backup(stack_env: dict[str, str]) -> None:
    fsx = boto3.client("fsx", region_name=REGION)
    filesystems = AwsFileSystems(object(), fsx, stub_settings(), object())
    ref = FileSystemRef(target_id="fsx0", kind="fsx_lustre", file_system_id="fs-0123456789abcdef0")
    described = {
        "FileSystemId": "fs-0123456789abcdef0",
        "Lifecycle": "AVAILABLE",
        "LustreConfiguration": {"DeploymentType": "PERSISTENT_1"},
    }
    with Stubber(fsx) as stub:
        stub.add_response("describe_file_systems", {"FileSystems": [described]})
        stub.add_response(
            "delete_file_system",
            {"FileSystemId": "fs-0123456789abcdef0", "Lifecycle": "DELETING"},
            {"FileSystemId": "fs-0123456789abcdef0", "LustreConfiguration": {"SkipFinalBackup": True}},
        )
        filesystems.delete(ref)
        stub.add_response("describe_file_systems", {"FileSystems": [{**described, "Lifecycle": "DELETING"}]})
        filesystems.delete(ref)  # already deleting: nothing more to ask
        stub.assert_no_pending_responses()


def test_find_returns_the_configs_file_systems_by_tag(
    filesystems: AwsFileSystems, network: dict[str, str]
) -> None:
    """A create whose answer was lost is still found (and so deleted) by its tags."""
    mine = filesystems.create(efs_spec(network["fs_group"]), None)
    other = filesystems.create(efs_spec(network["fs_group"], token="r1-other-efs0"), None)
    filesystems.efs.tag_resource(
        ResourceId=other.file_system_id, Tags=[{"Key": TAG_CONFIG, "Value": "other"}]
    )
    found = filesystems.find("r1", "efs")
    assert [ref.file_system_id for ref in found] == [mine.file_system_id]
    assert found[0].kind == "efs"
    filesystems.delete(found[0])
    assert filesystems.find("r1", "efs") == []

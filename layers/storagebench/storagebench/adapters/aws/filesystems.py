"""File systems a config benchmarks: Amazon EFS and Amazon FSx for Lustre, in the stack's subnet.

EFS needs a mount target in the instance's subnet, and a mount target can only be created
once its file system is ``available``: ``create`` makes one right away when it can, and
``status`` makes it on a later poll otherwise. ``status`` also records what it learns on the
ref it is given (mount target ids, FSx DNS and mount names): the caller's state keeps that
ref. Each file system is reached through the config's own security group (its mount targets and
FSx's interfaces join it; it admits their ports from the config's instances only), and an EFS file
system gets a policy before its mount target: clients only through a mount target (the agent mounts
NFS without IAM authorization, so a policy naming a role would refuse the benchmark itself).
Deletion of EFS goes mount targets first and raises ``ResourceBusyError`` until they are gone, so
the state machine's retry comes back for the file system.
"""

from __future__ import annotations

import hashlib
import json
import re
from typing import Any

from storagebench.adapters.aws.errors import ClientError, aws_call, error_code, workflow_error
from storagebench.adapters.aws.settings import AwsSettings
from storagebench.core.errors import NotYetConsistentError, ProvisioningError, ResourceBusyError
from storagebench.core.state import FileSystemRef, FileSystemSpec, Resources
from storagebench.core.tags import TAG_CONFIG, TAG_RUN, TAG_TARGET

FSX_TOKEN = re.compile(r"^[A-Za-z0-9_.-]{1,63}$")
FSX_AVAILABLE = ("AVAILABLE", "UPDATING")
FSX_FAILED = ("FAILED", "MISCONFIGURED", "MISCONFIGURED_UNAVAILABLE", "DELETING")
EFS_FAILED = ("error", "deleting", "deleted")
EFS_CLIENT_ACTIONS = (
    "elasticfilesystem:ClientMount",
    "elasticfilesystem:ClientWrite",
    "elasticfilesystem:ClientRootAccess",  # fio writes as root
)


def efs_file_system_policy(file_system_arn: str) -> dict[str, Any]:
    """Anonymous NFS clients (the agent's mount) only through a mount target: no public access."""
    return {
        "Version": "2012-10-17",
        "Statement": [
            {
                "Sid": "ClientsThroughMountTargetsOnly",
                "Effect": "Allow",
                "Principal": {"AWS": "*"},
                "Action": list(EFS_CLIENT_ACTIONS),
                "Resource": file_system_arn,
                "Condition": {"Bool": {"elasticfilesystem:AccessedViaMountTarget": "true"}},
            }
        ],
    }


def fsx_request_token(creation_token: str) -> str:
    """FSx takes at most 63 characters of ``[A-Za-z0-9_.-]``; otherwise a digest (still stable)."""
    if FSX_TOKEN.match(creation_token):
        return creation_token
    return hashlib.sha256(creation_token.encode()).hexdigest()[:63]


def _tag_list(tags: dict[str, str]) -> list[dict[str, str]]:
    return [{"Key": k, "Value": v} for k, v in sorted(tags.items())]


def _setting(spec: FileSystemSpec, name: str, default: Any = None) -> Any:
    value = spec.settings.get(name, default)
    return default if value is None else value


FILE_SYSTEM_SERVICES = ("efs", "fsx_lustre")


def _service(kind: str) -> str:
    """The service a file system kind is created in; an unknown kind is refused, never taken for FSx."""
    if kind not in FILE_SYSTEM_SERVICES:
        raise ProvisioningError(
            f"file system kind {kind!r} has no AWS driver here; known: {', '.join(FILE_SYSTEM_SERVICES)}"
        )
    return kind


class AwsFileSystems:
    """``FileSystems`` on EFS and FSx for Lustre, in the stack's subnet and the config's group."""

    def __init__(self, efs: Any, fsx: Any, settings: AwsSettings, ec2: Any = None) -> None:
        self.efs = efs
        self.fsx = fsx
        self.settings = settings
        self._ec2 = ec2  # only for the subnet's zone (one-zone EFS); made when first needed
        self._zone: str | None = None

    @classmethod
    def from_settings(cls, settings: AwsSettings) -> AwsFileSystems:
        return cls(settings.client("efs"), settings.client("fsx"), settings, settings.client("ec2"))

    @property
    def ec2(self) -> Any:
        if self._ec2 is None:
            self._ec2 = self.settings.client("ec2")
        return self._ec2

    def create(self, spec: FileSystemSpec, subnet_hint: Resources | None) -> FileSystemRef:
        service = _service(spec.kind)
        return self._create_efs(spec) if service == "efs" else self._create_fsx(spec)

    def status(self, ref: FileSystemRef) -> str:
        service = _service(ref.kind)
        return self._efs_status(ref) if service == "efs" else self._fsx_status(ref)

    def delete(self, ref: FileSystemRef) -> None:
        if _service(ref.kind) == "efs":
            self._delete_efs(ref)
        else:
            self._delete_fsx(ref)

    def find(self, run_id: str, config_id: str) -> list[FileSystemRef]:
        """EFS and FSx file systems carrying the run's and config's tags that are not being deleted."""
        wanted = {TAG_RUN: run_id, TAG_CONFIG: config_id}
        found: list[FileSystemRef] = []
        with aws_call("list EFS file systems", ProvisioningError):
            pages = self.efs.get_paginator("describe_file_systems").paginate()
            for page in pages:
                for fs in page["FileSystems"]:
                    tags = {t["Key"]: t["Value"] for t in fs.get("Tags") or []}
                    if all(tags.get(k) == v for k, v in wanted.items()) and fs["LifeCycleState"] not in (
                        "deleting",
                        "deleted",
                    ):
                        found.append(
                            FileSystemRef(
                                target_id=tags.get(TAG_TARGET, "?"),
                                kind="efs",
                                file_system_id=str(fs["FileSystemId"]),
                            )
                        )
        with aws_call("list FSx file systems", ProvisioningError):
            pages = self.fsx.get_paginator("describe_file_systems").paginate()
            for page in pages:
                for fs in page["FileSystems"]:
                    tags = {t["Key"]: t["Value"] for t in fs.get("Tags") or []}
                    if all(tags.get(k) == v for k, v in wanted.items()) and fs.get("Lifecycle") not in (
                        "DELETING",
                    ):
                        found.append(
                            FileSystemRef(
                                target_id=tags.get(TAG_TARGET, "?"),
                                kind="fsx_lustre",
                                file_system_id=str(fs["FileSystemId"]),
                            )
                        )
        return found

    # -------------------------------------------------------------- EFS

    def subnet_zone(self) -> str:
        if self._zone is None:
            with aws_call(f"describe subnet {self.settings.subnet_id}", ProvisioningError):
                subnets = self.ec2.describe_subnets(SubnetIds=[self.settings.subnet_id])["Subnets"]
            self._zone = str(subnets[0]["AvailabilityZone"])
        return self._zone

    def efs_request(self, spec: FileSystemSpec) -> dict[str, Any]:
        throughput_mode = str(_setting(spec, "throughput_mode", "elastic"))
        request: dict[str, Any] = {
            "CreationToken": spec.creation_token,
            "PerformanceMode": str(_setting(spec, "performance_mode", "generalPurpose")),
            "ThroughputMode": throughput_mode,
            "Encrypted": bool(_setting(spec, "encrypted", True)),
            "Tags": _tag_list(spec.tags),
        }
        provisioned = _setting(spec, "provisioned_throughput_mibps")
        if throughput_mode == "provisioned" and provisioned is not None:
            request["ProvisionedThroughputInMibps"] = float(provisioned)
        if _setting(spec, "one_zone", False):
            request["AvailabilityZoneName"] = self.subnet_zone()
        return request

    def _create_efs(self, spec: FileSystemSpec) -> FileSystemRef:
        request = self.efs_request(spec)
        try:
            created = self.efs.create_file_system(**request)
        except ClientError as exc:
            if error_code(exc) != "FileSystemAlreadyExists":
                raise workflow_error(exc, f"create EFS file system for {spec.target_id}") from exc
            created = self._efs_by_token(spec.creation_token)
        file_system_id = str(created["FileSystemId"])
        ref = FileSystemRef(
            target_id=spec.target_id,
            kind="efs",
            file_system_id=file_system_id,
            dns_name=f"{file_system_id}.efs.{self.settings.region}.amazonaws.com",
            security_group_id=spec.security_group_id,
        )
        if created.get("LifeCycleState") == "available":
            self._ensure_mount_target(ref, created)
        return ref

    def _efs_by_token(self, token: str) -> dict[str, Any]:
        with aws_call(f"find EFS file system {token}", ProvisioningError):
            found = self.efs.describe_file_systems(CreationToken=token)["FileSystems"]
        if not found:
            raise NotYetConsistentError(f"EFS file system with creation token {token} is not visible yet")
        return dict(found[0])

    def _mount_targets(self, file_system_id: str) -> list[dict[str, Any]]:
        with aws_call(f"describe mount targets of {file_system_id}", ProvisioningError):
            pages = self.efs.get_paginator("describe_mount_targets").paginate(FileSystemId=file_system_id)
            return [t for page in pages for t in page.get("MountTargets", [])]

    def _ensure_mount_target(self, ref: FileSystemRef, described: dict[str, Any]) -> list[dict[str, Any]]:
        """The file system's mount targets, creating the one in our subnet (after the file system's
        policy) if it is missing; ``described`` is what EFS said of the file system."""
        targets = [t for t in self._mount_targets(ref.file_system_id) if t.get("LifeCycleState") != "deleted"]
        zone_taken = any(t.get("SubnetId") == self.settings.subnet_id for t in targets)
        if not zone_taken:
            if ref.security_group_id is None:
                raise ProvisioningError(
                    f"EFS {ref.file_system_id}: no security group recorded for its mount target"
                )
            self._put_policy(ref, str(described["FileSystemArn"]))
            try:
                created = self.efs.create_mount_target(
                    FileSystemId=ref.file_system_id,
                    SubnetId=self.settings.subnet_id,
                    SecurityGroups=[ref.security_group_id],
                )
                targets.append(created)
            except ClientError as exc:
                if error_code(exc) != "MountTargetConflict":  # a concurrent poll made it
                    raise workflow_error(exc, f"create mount target for {ref.file_system_id}") from exc
                targets = self._mount_targets(ref.file_system_id)
        ref.mount_target_ids = sorted(str(t["MountTargetId"]) for t in targets)
        return targets

    def _put_policy(self, ref: FileSystemRef, arn: str) -> None:
        """Before the mount target, so no client reaches the file system under the default policy."""
        with aws_call(f"put the file system policy of {ref.file_system_id}", ProvisioningError):
            self.efs.put_file_system_policy(
                FileSystemId=ref.file_system_id, Policy=json.dumps(efs_file_system_policy(arn))
            )

    def _efs_status(self, ref: FileSystemRef) -> str:
        try:
            found = self.efs.describe_file_systems(FileSystemId=ref.file_system_id)["FileSystems"]
        except ClientError as exc:
            if error_code(exc) == "FileSystemNotFound":  # just created: not visible everywhere yet
                raise NotYetConsistentError(f"EFS {ref.file_system_id} is not visible yet") from exc
            raise workflow_error(exc, f"describe EFS {ref.file_system_id}", ProvisioningError) from exc
        if not found:
            raise NotYetConsistentError(f"EFS {ref.file_system_id} is not visible yet")
        state = str(found[0].get("LifeCycleState"))
        if state in EFS_FAILED:
            return "failed"
        if state != "available":
            return "creating"
        targets = self._ensure_mount_target(ref, found[0])
        states = {str(t.get("LifeCycleState")) for t in targets}
        if states & set(EFS_FAILED):
            return "failed"
        return "available" if targets and states == {"available"} else "creating"

    def _delete_efs(self, ref: FileSystemRef) -> None:
        try:
            targets = self._mount_targets(ref.file_system_id)
        except ProvisioningError as exc:
            if _code_of(exc) == "FileSystemNotFound":
                return
            raise
        pending = [t for t in targets if t.get("LifeCycleState") != "deleted"]
        if pending:
            for target in pending:
                if target.get("LifeCycleState") in ("deleting", "deleted"):
                    continue
                try:
                    self.efs.delete_mount_target(MountTargetId=target["MountTargetId"])
                except ClientError as exc:
                    if error_code(exc) != "MountTargetNotFound":
                        raise workflow_error(exc, f"delete mount target {target['MountTargetId']}") from exc
            remaining = [
                t["MountTargetId"]
                for t in self._mount_targets(ref.file_system_id)
                if t.get("LifeCycleState") != "deleted"
            ]
            if remaining:
                raise ResourceBusyError(
                    f"EFS {ref.file_system_id}: mount target(s) {', '.join(remaining)} still being deleted"
                )
        try:
            self.efs.delete_file_system(FileSystemId=ref.file_system_id)
        except ClientError as exc:
            if error_code(exc) != "FileSystemNotFound":
                raise workflow_error(exc, f"delete EFS {ref.file_system_id}") from exc

    # -------------------------------------------------------------- FSx for Lustre

    def fsx_request(self, spec: FileSystemSpec) -> dict[str, Any]:
        deployment = str(_setting(spec, "deployment_type", "SCRATCH_2"))
        lustre: dict[str, Any] = {
            "DeploymentType": deployment,
            "DataCompressionType": str(_setting(spec, "data_compression", "NONE")),
        }
        per_unit = _setting(spec, "per_unit_storage_throughput")
        if per_unit is not None and deployment.startswith("PERSISTENT"):
            lustre["PerUnitStorageThroughput"] = int(per_unit)
        if deployment.startswith("PERSISTENT"):
            lustre["AutomaticBackupRetentionDays"] = 0  # nothing of a benchmark outlives it
        return {
            "ClientRequestToken": fsx_request_token(spec.creation_token),
            "FileSystemType": "LUSTRE",
            "StorageCapacity": int(str(_setting(spec, "storage_capacity_gib"))),
            "SubnetIds": [self.settings.subnet_id],
            "SecurityGroupIds": [spec.security_group_id],
            "LustreConfiguration": lustre,
            "Tags": _tag_list(spec.tags),
        }

    def _create_fsx(self, spec: FileSystemSpec) -> FileSystemRef:
        if _setting(spec, "storage_capacity_gib") is None:
            raise ProvisioningError(f"FSx target {spec.target_id}: storage_capacity_gib is missing")
        with aws_call(f"create FSx for Lustre file system for {spec.target_id}"):
            created = self.fsx.create_file_system(**self.fsx_request(spec))["FileSystem"]
        return FileSystemRef(
            target_id=spec.target_id,
            kind="fsx_lustre",
            file_system_id=str(created["FileSystemId"]),
            dns_name=created.get("DNSName"),
            mount_name=(created.get("LustreConfiguration") or {}).get("MountName"),
            security_group_id=spec.security_group_id,
        )

    def _describe_fsx(self, file_system_id: str) -> dict[str, Any] | None:
        try:
            found = self.fsx.describe_file_systems(FileSystemIds=[file_system_id])["FileSystems"]
        except ClientError as exc:
            if error_code(exc) == "FileSystemNotFound":
                return None
            raise workflow_error(exc, f"describe FSx {file_system_id}", ProvisioningError) from exc
        return dict(found[0]) if found else None

    def _fsx_status(self, ref: FileSystemRef) -> str:
        described = self._describe_fsx(ref.file_system_id)
        if described is None:
            raise NotYetConsistentError(f"FSx {ref.file_system_id} is not visible yet")
        ref.dns_name = described.get("DNSName") or ref.dns_name
        ref.mount_name = (described.get("LustreConfiguration") or {}).get("MountName") or ref.mount_name
        lifecycle = str(described.get("Lifecycle") or "CREATING")
        if lifecycle in FSX_FAILED:
            return "failed"
        if lifecycle in FSX_AVAILABLE:
            return "available"
        return "creating"

    def _delete_fsx(self, ref: FileSystemRef) -> None:
        described = self._describe_fsx(ref.file_system_id)
        if described is None or described.get("Lifecycle") == "DELETING":
            return
        request: dict[str, Any] = {"FileSystemId": ref.file_system_id}
        deployment = str((described.get("LustreConfiguration") or {}).get("DeploymentType", ""))
        if deployment.startswith("PERSISTENT"):
            request["LustreConfiguration"] = {"SkipFinalBackup": True}
        try:
            self.fsx.delete_file_system(**request)
        except ClientError as exc:
            if error_code(exc) != "FileSystemNotFound":
                raise workflow_error(exc, f"delete FSx {ref.file_system_id}") from exc


def _code_of(exc: BaseException) -> str | None:
    cause = exc.__cause__
    return error_code(cause) if isinstance(cause, ClientError) else None

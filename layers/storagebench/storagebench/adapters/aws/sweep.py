"""The janitor's ``TaggedResources`` on AWS: find by the stack's tag, delete with the workflow's adapters.

Discovery asks each service for what carries ``storagebench:stack`` = this stack: EC2 instances and
volumes through DescribeInstances/DescribeVolumes tag filters (server-side), EFS and FSx through
their Describe calls (both return tags; neither filters by tag), Storage Gateway gateways and file
shares through ListGateways/ListFileShares and ListTagsForResource for each, a config's security
groups and placement groups through their Describe calls' tag filters. Deletion is the
workflow's own code (``Ec2Compute.terminate_instance``/``delete_volume``, ``AwsFileSystems.delete``:
EFS mount targets first; ``StorageGateways.delete_share``/``delete_gateway``; ``Ec2Network.close``),
so the janitor deletes exactly as Cleanup does; the function's IAM policy allows those deletes only
on resources tagged with the stack.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from typing import Any

from storagebench.adapters.aws.ec2 import Ec2Compute
from storagebench.adapters.aws.errors import ClientError, aws_call
from storagebench.adapters.aws.filesystems import AwsFileSystems
from storagebench.adapters.aws.network import Ec2Network
from storagebench.adapters.aws.storagegateway import GONE, StorageGateways, detail_code
from storagebench.core.clock import SystemClock
from storagebench.core.errors import ProvisioningError
from storagebench.core.state import FileSystemRef, NetworkRef
from storagebench.core.tags import TAG_STACK, TAG_TARGET
from storagebench.janitor.models import RESOURCE_KINDS, Attachment, ResourceKind, TaggedResource
from storagebench.janitor.service import Janitor


def _tags(described: dict[str, Any]) -> dict[str, str]:
    return {str(t["Key"]): str(t["Value"]) for t in described.get("Tags") or []}


_SWEPT = RESOURCE_KINDS
# The janitor's file system kinds and the filesystems port's: an unknown one is refused, never taken for FSx.
_FILE_SYSTEM_OF = {"efs-file-system": "efs", "fsx-file-system": "fsx_lustre"}


class AwsTaggedResources:
    def __init__(
        self,
        compute: Ec2Compute,
        filesystems: AwsFileSystems,
        gateways: StorageGateways | None = None,
        network: Ec2Network | None = None,
    ) -> None:
        self.compute = compute
        self.filesystems = filesystems
        self.gateways = gateways  # None: the stack has no gateway settings, so it made no gateway
        # None: on the compute's EC2 client and settings (local mode passes its moto-backed one)
        self.network = network or Ec2Network(compute.ec2, compute.settings)

    def tagged(self, kind: ResourceKind, stack: str) -> list[TaggedResource]:
        if kind == "gateway-file-share":
            return self._file_shares(stack) if self.gateways else []
        if kind == "storage-gateway":
            return self._gateways(stack) if self.gateways else []
        if kind == "ec2-instance":
            return list(self._instances(stack))
        if kind == "ebs-volume":
            return list(self._volumes(stack))
        if kind == "efs-file-system":
            return list(self._efs(stack))
        if kind == "fsx-file-system":
            return list(self._fsx(stack))
        if kind == "security-group":
            return self._security_groups(stack)
        if kind == "placement-group":
            return self._placement_groups(stack)
        raise ProvisioningError(f"resource kind {kind!r} cannot be swept; known: {', '.join(_SWEPT)}")

    def delete(self, resource: TaggedResource) -> str:
        if resource.kind in ("gateway-file-share", "storage-gateway"):
            if self.gateways is None:
                raise ProvisioningError(f"no Storage Gateway client to delete {resource.resource_id}")
            if resource.kind == "gateway-file-share":
                self.gateways.delete_share(resource.resource_id)
                return "deleted (forced: data not yet uploaded is dropped)"
            self.gateways.delete_gateway(resource.resource_id)
            return "deleted (its appliance instance is swept as an instance)"
        if resource.kind == "ec2-instance":
            self.compute.terminate_instance(resource.resource_id)
            return "terminated (its DeleteOnTermination volumes go with it)"
        if resource.kind == "ebs-volume":
            gone = not self.compute.delete_volume(resource.resource_id)
            return "already gone" if gone else "deleted"
        if resource.kind in ("security-group", "placement-group"):
            # ResourceBusyError while an instance still holds it: the next sweep deletes it
            group = (
                NetworkRef(security_group_id=resource.resource_id)
                if resource.kind == "security-group"
                else NetworkRef(placement_group=resource.resource_id)
            )
            return "deleted" if self.network.close(group) else "already gone"
        kind: Any = _FILE_SYSTEM_OF.get(resource.kind)
        if kind is None:
            raise ProvisioningError(
                f"resource kind {resource.kind!r} of {resource.resource_id} cannot be deleted; known: "
                f"{', '.join(_SWEPT)}"
            )
        ref = FileSystemRef(
            target_id=resource.tags.get(TAG_TARGET, "?"), kind=kind, file_system_id=resource.resource_id
        )
        self.filesystems.delete(ref)  # EFS: ResourceBusyError while its mount targets go
        return "deleted" if resource.kind == "fsx-file-system" else "deleted (mount targets first)"

    # -------------------------------------------------------------- discovery

    @staticmethod
    def _stack_filter(stack: str) -> list[dict[str, Any]]:
        return [{"Name": f"tag:{TAG_STACK}", "Values": [stack]}]

    def _instances(self, stack: str) -> Iterable[TaggedResource]:
        with aws_call("list the stack's instances", ProvisioningError):
            pages = self.compute.ec2.get_paginator("describe_instances").paginate(
                Filters=self._stack_filter(stack)
            )
            described = [i for page in pages for r in page["Reservations"] for i in r["Instances"]]
        for instance in described:
            yield TaggedResource(
                kind="ec2-instance",
                resource_id=str(instance["InstanceId"]),
                state=str(instance["State"]["Name"]),
                tags=_tags(instance),
            )

    def _volumes(self, stack: str) -> Iterable[TaggedResource]:
        with aws_call("list the stack's volumes", ProvisioningError):
            pages = self.compute.ec2.get_paginator("describe_volumes").paginate(
                Filters=self._stack_filter(stack)
            )
            described = [v for page in pages for v in page["Volumes"]]
        attached = {
            (str(a["InstanceId"]), str(v["VolumeId"])): a
            for v in described
            for a in v.get("Attachments") or []
            if a.get("State") != "detached"
        }
        on_termination = self._delete_on_termination(
            sorted({i for (i, _), a in attached.items() if "DeleteOnTermination" not in a})
        )
        for volume in described:
            volume_id = str(volume["VolumeId"])
            attachments = [
                Attachment(
                    instance_id=instance_id,
                    delete_on_termination=bool(
                        a.get("DeleteOnTermination", on_termination.get((instance_id, volume_id)))
                    ),
                )
                for (instance_id, vid), a in attached.items()
                if vid == volume_id
            ]
            yield TaggedResource(
                kind="ebs-volume",
                resource_id=volume_id,
                state=str(volume["State"]),
                tags=_tags(volume),
                attachments=attachments,
            )

    def _delete_on_termination(self, instance_ids: list[str]) -> dict[tuple[str, str], bool]:
        """(instance, volume) -> DeleteOnTermination from the instances' block device mappings, for
        attachments that do not say (AWS's DescribeVolumes does; moto's, which local mode runs on,
        does not)."""
        if not instance_ids:
            return {}
        with aws_call("describe the instances volumes are attached to", ProvisioningError):
            pages = self.compute.ec2.get_paginator("describe_instances").paginate(InstanceIds=instance_ids)
            instances = [i for page in pages for r in page["Reservations"] for i in r["Instances"]]
        return {
            (str(i["InstanceId"]), str(m["Ebs"]["VolumeId"])): bool(m["Ebs"].get("DeleteOnTermination"))
            for i in instances
            for m in i.get("BlockDeviceMappings") or []
            if "Ebs" in m
        }

    def _security_groups(self, stack: str) -> list[TaggedResource]:
        return [
            TaggedResource(
                kind="security-group", resource_id=str(g["GroupId"]), state="available", tags=_tags(g)
            )
            for g in self.network.security_groups(self._stack_filter(stack))
        ]

    def _placement_groups(self, stack: str) -> list[TaggedResource]:
        return [
            TaggedResource(
                kind="placement-group",
                resource_id=str(p["GroupName"]),
                state=str(p.get("State", "unknown")).lower(),
                tags=_tags(p),
            )
            for p in self.network.placement_groups(self._stack_filter(stack))
        ]

    def _gateways(self, stack: str) -> list[TaggedResource]:
        with aws_call("list Storage Gateway gateways", ProvisioningError):
            pages = self._gateway_client().get_paginator("list_gateways").paginate()
            described = [g for page in pages for g in page.get("Gateways", [])]
        found = []
        for gateway in described:
            arn = str(gateway["GatewayARN"])
            tags = self._tags_of(arn)
            if tags is not None and tags.get(TAG_STACK) == stack:
                state = str(gateway.get("GatewayOperationalState") or "unknown").lower()
                found.append(TaggedResource(kind="storage-gateway", resource_id=arn, state=state, tags=tags))
        return found

    def _file_shares(self, stack: str) -> list[TaggedResource]:
        with aws_call("list Storage Gateway file shares", ProvisioningError):
            pages = self._gateway_client().get_paginator("list_file_shares").paginate()
            described = [s for page in pages for s in page.get("FileShareInfoList", [])]
        found = []
        for share in described:
            arn = str(share["FileShareARN"])
            tags = self._tags_of(arn)
            if tags is not None and tags.get(TAG_STACK) == stack:
                # FORCE_DELETING and DELETING both read as going (plan.GOING has "deleting")
                state = str(share.get("FileShareStatus") or "unknown").lower().replace("force_", "")
                found.append(
                    TaggedResource(kind="gateway-file-share", resource_id=arn, state=state, tags=tags)
                )
        return found

    def _gateway_client(self) -> Any:
        if self.gateways is None:
            raise ProvisioningError("no Storage Gateway client: this stack has no gateway settings")
        return self.gateways.client

    def _tags_of(self, arn: str) -> dict[str, str] | None:
        """The resource's tags; None when it went between the listing and this call."""
        with aws_call(f"list the tags of {arn}", ProvisioningError):
            try:
                pages = (
                    self._gateway_client().get_paginator("list_tags_for_resource").paginate(ResourceARN=arn)
                )
                return {str(t["Key"]): str(t["Value"]) for page in pages for t in page.get("Tags", [])}
            except ClientError as exc:
                if detail_code(exc) in GONE:
                    return None
                raise

    def _efs(self, stack: str) -> Iterable[TaggedResource]:
        return self._file_systems(self.filesystems.efs, "EFS", "efs-file-system", "LifeCycleState", stack)

    def _fsx(self, stack: str) -> Iterable[TaggedResource]:
        return self._file_systems(self.filesystems.fsx, "FSx", "fsx-file-system", "Lifecycle", stack)

    @staticmethod
    def _file_systems(
        client: Any, service: str, kind: ResourceKind, state_key: str, stack: str
    ) -> list[TaggedResource]:
        with aws_call(f"list {service} file systems", ProvisioningError):
            pages = client.get_paginator("describe_file_systems").paginate()
            described = [fs for page in pages for fs in page["FileSystems"]]
        return [
            TaggedResource(
                kind=kind,
                resource_id=str(fs["FileSystemId"]),
                state=str(fs.get(state_key, "unknown")).lower(),
                tags=tags,
            )
            for fs in described
            if (tags := _tags(fs)).get(TAG_STACK) == stack
        ]


def build_janitor(environ: Mapping[str, str] | None = None) -> Janitor:
    """The janitor on the stack's EC2, EFS, FSx, Storage Gateway (when the stack has the gateway
    settings, as build_services), table and topic, from the function's environment."""
    from storagebench.adapters.aws.dynamodb import DynamoResultsStore
    from storagebench.adapters.aws.settings import AwsSettings, SettingsError
    from storagebench.adapters.aws.sns import notifier_from_env
    from storagebench.adapters.aws.stepfunctions import StepFunctionsLauncher
    from storagebench.core.guardrails import GATEWAY_VARIABLES

    env = os.environ if environ is None else environ
    settings = AwsSettings.from_env(env)
    state_machine_arn = env.get("STATE_MACHINE_ARN", "").strip()
    if not state_machine_arn:
        raise SettingsError(["STATE_MACHINE_ARN"])
    with_gateways = all(env.get(v, "").strip() for v in GATEWAY_VARIABLES)
    return Janitor(
        resources=AwsTaggedResources(
            Ec2Compute.from_settings(settings),
            AwsFileSystems.from_settings(settings),
            StorageGateways(settings.client("storagegateway")) if with_gateways else None,
        ),
        runs=DynamoResultsStore.from_settings(settings),
        notifier=notifier_from_env(settings, env),
        stack=settings.stack_name,
        clock=SystemClock(),
        executions=StepFunctionsLauncher(settings.client("stepfunctions"), state_machine_arn),
    )

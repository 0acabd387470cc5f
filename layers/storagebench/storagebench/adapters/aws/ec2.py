"""Compute on EC2: one instance per config from the config's image, its EBS volumes in the launch.

The image is resolved at launch (an SSM parameter, an AMI id, or the newest image of an owner
by name) and described once: its architecture must be the instance type's and its owner one
the catalog names, and its root device name is where the root volume's mapping goes (Ubuntu
and RHEL boot from /dev/sda1, Amazon Linux and Debian from /dev/xvda).

Every data volume is a block device mapping of RunInstances (DeleteOnTermination), so one
call creates, attaches and tags everything and a terminated instance takes its volumes
with it; a node group's Multi-Attach volume is the exception (``shared_volumes``: created
once, attached to each node, deleted by cleanup). The launch is idempotent twice over:
RunInstances carries the spec's client token (EC2 returns the first instance for a repeated
token) and the instance is tagged with the token, which a retried launch looks up first.

Spot (``LaunchSpec.market``): the same RunInstances with InstanceMarketOptions (a one-time
request that terminates on interruption), its Spot request tagged like the instance. Not
CreateFleet, on purpose: a config is one instance type in the stack's one subnet (its data
volumes are created by the launch, its EFS mount target and FSx file system live there), so a
fleet's capacity-optimized allocation would choose among exactly one pool and decide nothing,
while costing a launch template per launch (one more resource to tag, clean up and allow) and
the fleet's service-linked role; and moto 5.2.5's CreateFleet drops the template's block device
mappings and instance profile from Spot instances, so local mode could not run what AWS runs.
With several subnets per stack, CreateFleet (type instant, SpotOptions.AllocationStrategy
capacity-optimized, one override per subnet) becomes the better path for configs without file
systems. Which market EC2 used is read back from the instance (InstanceLifecycle), with its zone:
the run is priced from that zone's Spot price history (``adapters.aws.spot_prices``).
"""

from __future__ import annotations

import copy
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from storagebench.adapters.aws.errors import ClientError, aws_call, error_code, workflow_error
from storagebench.adapters.aws.settings import AwsSettings
from storagebench.adapters.aws.shared_volumes import attach_pending, ensure_volume
from storagebench.core.clock import Clock, SystemClock, iso
from storagebench.core.errors import (
    NotReadyError,
    NotYetConsistentError,
    ProvisioningError,
    ResourceBusyError,
)
from storagebench.core.launch import Market
from storagebench.core.state import (
    ComputeStatus,
    ImageRef,
    LaunchSpec,
    LaunchVolume,
    Resources,
    VolumeRef,
)
from storagebench.core.tags import TAG_CLIENT_TOKEN, TAG_CONFIG, TAG_RUN

AMI_PARAMETER = "/aws/service/ami-amazon-linux-latest/al2023-ami-kernel-default-{arch}"
# A one-time Spot request, no maximum price (the Spot price, never above on-demand), terminated
# when EC2 reclaims the capacity: an interrupted config is relaunched, never resumed.
SPOT_MARKET_OPTIONS: dict[str, Any] = {
    "MarketType": "spot",
    "SpotOptions": {"SpotInstanceType": "one-time", "InstanceInterruptionBehavior": "terminate"},
}
LIVE_STATES = ("pending", "running", "stopping", "stopped")
GONE_STATES = ("shutting-down", "terminated")


def _tags(tags: dict[str, str]) -> list[dict[str, str]]:
    return [{"Key": k, "Value": v} for k, v in sorted(tags.items())]


def _tag_map(resource: dict[str, Any]) -> dict[str, str]:
    return {str(t["Key"]): str(t["Value"]) for t in resource.get("Tags") or []}


def block_device(volume: LaunchVolume, kms_key_id: str | None = None) -> dict[str, Any]:
    """One RunInstances block device mapping (only the fields the volume type takes).

    An encrypted volume uses ``kms_key_id`` when the stack names one, else the account's EBS
    default key; EC2 refuses a key on an unencrypted volume, so none is sent then.
    """
    ebs: dict[str, Any] = {
        "VolumeType": volume.volume_type,
        "VolumeSize": volume.size_gib,
        "Encrypted": volume.encrypted,
        "DeleteOnTermination": True,
    }
    if volume.encrypted and kms_key_id:
        ebs["KmsKeyId"] = kms_key_id
    if volume.iops is not None:
        ebs["Iops"] = volume.iops
    if volume.throughput_mibps is not None:
        ebs["Throughput"] = volume.throughput_mibps
    if volume.snapshot_id:
        ebs["SnapshotId"] = volume.snapshot_id
    if volume.initialization_rate_mibps is not None:
        ebs["VolumeInitializationRate"] = volume.initialization_rate_mibps
    return {"DeviceName": volume.device_name, "Ebs": ebs}


@dataclass(frozen=True)
class Image:
    """A resolved image: what RunInstances needs from it."""

    image_id: str
    root_device: str
    architecture: str


class Ec2Compute:
    """``Compute`` on EC2 in the stack's subnet, security group and instance profile, plus the
    config's own security group and placement group when its launch spec names them
    (``adapters.aws.network``)."""

    def __init__(self, ec2: Any, ssm: Any, settings: AwsSettings, clock: Clock | None = None) -> None:
        self.ec2 = ec2
        self.ssm = ssm  # reads the public AMI parameter
        self.settings = settings
        self.clock: Clock = clock or SystemClock()

    @classmethod
    def from_settings(cls, settings: AwsSettings) -> Ec2Compute:
        return cls(settings.client("ec2"), settings.client("ssm"), settings)

    # -------------------------------------------------------------- launch

    def default_image(self, spec: LaunchSpec) -> ImageRef:
        """The image of a spec that names none: Amazon Linux 2023 for its architecture."""
        return ImageRef(label="al2023", ssm_parameter=AMI_PARAMETER.format(arch=spec.architecture))

    def image(self, spec: LaunchSpec) -> Image:
        """Resolve and describe the spec's image; refuse one that cannot boot this type."""
        ref = spec.image or self.default_image(spec)
        image_id = ref.ami_id
        if ref.ssm_parameter:
            with aws_call(f"read the AMI parameter {ref.ssm_parameter}", ProvisioningError):
                image_id = str(self.ssm.get_parameter(Name=ref.ssm_parameter)["Parameter"]["Value"])
        if ref.name_pattern:
            image = self._newest(ref, spec.architecture)
        else:
            with aws_call(f"describe image {image_id} ({ref.label})", ProvisioningError):
                found = self.ec2.describe_images(ImageIds=[image_id])["Images"]
            if not found:
                raise ProvisioningError(f"image {image_id} ({ref.label}) does not exist in this region")
            image = found[0]
        # an owner is an account id, or an alias ("amazon") that DescribeImages reports separately
        owned_by = {str(image.get("OwnerId")), str(image.get("ImageOwnerAlias"))}
        if ref.owners and not owned_by & set(ref.owners):
            raise ProvisioningError(
                f"image {image['ImageId']} ({ref.label}) is owned by {image.get('OwnerId')}, not by "
                f"{', '.join(sorted(ref.owners))}: refusing an image its parameter should not point at"
            )
        if image.get("Architecture") != spec.architecture:
            raise ProvisioningError(
                f"image {image['ImageId']} ({ref.label}) is {image.get('Architecture')}, but "
                f"{spec.instance_type} is {spec.architecture}: pick an {spec.architecture} image"
            )
        return Image(
            str(image["ImageId"]), str(image.get("RootDeviceName") or "/dev/xvda"), spec.architecture
        )

    def _newest(self, ref: ImageRef, architecture: str) -> dict[str, Any]:
        with aws_call(f"find the newest {ref.label} image", ProvisioningError):
            found = self.ec2.describe_images(
                Owners=ref.owners,
                Filters=[
                    {"Name": "name", "Values": [str(ref.name_pattern)]},
                    {"Name": "architecture", "Values": [architecture]},
                    {"Name": "state", "Values": ["available"]},
                ],
            )["Images"]
        if not found:
            raise ProvisioningError(
                f"no {architecture} image named {ref.name_pattern} owned by {', '.join(ref.owners)} "
                f"in this region ({ref.label})"
            )
        return max(found, key=lambda i: str(i.get("CreationDate", "")))

    def run_instances_request(self, spec: LaunchSpec, image: Image) -> dict[str, Any]:
        """The RunInstances parameters for a spec (public so tests can read what is sent)."""
        tags = {**spec.tags, TAG_CLIENT_TOKEN: spec.client_token}
        root = spec.root.model_copy(update={"device_name": image.root_device})
        request: dict[str, Any] = {
            "ClientToken": spec.client_token,
            "ImageId": image.image_id,
            "InstanceType": spec.instance_type,
            "MinCount": 1,
            "MaxCount": 1,
            "SubnetId": self.settings.subnet_id,
            # the stack's group (egress to the AWS APIs), and the config's own: its nodes to each other
            "SecurityGroupIds": list(
                dict.fromkeys([self.settings.security_group_id, *spec.security_group_ids])
            ),
            "IamInstanceProfile": {"Arn": self.settings.instance_profile_arn},
            "MetadataOptions": {"HttpTokens": "required", "HttpEndpoint": "enabled"},
            "InstanceInitiatedShutdownBehavior": "terminate",
            "BlockDeviceMappings": [  # Multi-Attach volumes are not mappings (shared_volumes)
                block_device(v, self.settings.ebs_kms_key_arn)
                for v in (root, *spec.volumes)
                if v.share_token is None
            ],
            "TagSpecifications": [
                {"ResourceType": "instance", "Tags": _tags(tags)},
                {"ResourceType": "volume", "Tags": _tags(tags)},
            ],
        }
        if spec.ebs_optimized is not None:
            request["EbsOptimized"] = spec.ebs_optimized
        if spec.placement_group is not None:
            request["Placement"] = {"GroupName": spec.placement_group}
        if spec.market == "spot":
            request["InstanceMarketOptions"] = copy.deepcopy(SPOT_MARKET_OPTIONS)
            spot_request = {"ResourceType": "spot-instances-request", "Tags": _tags(tags)}
            request["TagSpecifications"].append(spot_request)
        return request

    def launch(self, spec: LaunchSpec) -> Resources:
        existing = self._find_by_token(spec.client_token)
        if existing is None:
            request = self.run_instances_request(spec, self.image(spec))
            with aws_call(f"launch {spec.instance_type}", ProvisioningError):
                existing = self.ec2.run_instances(**request)["Instances"][0]
        resources = self._resources(existing, spec.volumes)
        shared = {
            (v.target_id, v.member): ensure_volume(
                self.ec2, v, resources.availability_zone, spec.tags, self.settings.ebs_kms_key_arn
            )
            for v in spec.volumes
            if v.share_token is not None
        }
        resources.volumes = [
            r.model_copy(update={"volume_id": shared[(r.target_id, r.member)]})
            if (r.target_id, r.member) in shared
            else r
            for r in resources.volumes
        ]
        return resources

    def _find_by_token(self, token: str) -> dict[str, Any] | None:
        """The instance a previous attempt launched with this token (a live one first)."""
        found = list(self._instances([{"Name": f"tag:{TAG_CLIENT_TOKEN}", "Values": [token]}]))
        found.sort(key=lambda i: i["State"]["Name"] in GONE_STATES)
        return found[0] if found else None

    def _resources(self, instance: dict[str, Any], volumes: list[LaunchVolume]) -> Resources:
        attached = {str(m["DeviceName"]): m.get("Ebs", {}) for m in instance.get("BlockDeviceMappings") or []}
        refs = []
        for volume in volumes:
            ebs = attached.get(volume.device_name, {})
            refs.append(
                VolumeRef(
                    target_id=volume.target_id,
                    member=volume.member,
                    device_name=volume.device_name,
                    volume_type=volume.volume_type,
                    size_gib=volume.size_gib,
                    volume_id=ebs.get("VolumeId"),
                    state="in-use" if ebs.get("VolumeId") else None,
                    multi_attach=volume.share_token is not None,
                )
            )
        launched = instance.get("LaunchTime")
        launched_at = iso(launched) if isinstance(launched, datetime) else iso(self.clock.now())
        return Resources(
            instance_id=str(instance["InstanceId"]),
            volumes=refs,
            launched_at=launched_at,
            market=market_of(instance),
            availability_zone=(instance.get("Placement") or {}).get("AvailabilityZone"),
        )

    # -------------------------------------------------------------- status

    def status(self, resources: Resources) -> ComputeStatus:
        instance_id = resources.instance_id
        if instance_id is None:
            raise NotReadyError("no instance was recorded for this config")
        with aws_call(f"describe instance {instance_id}", ProvisioningError):
            reservations = self.ec2.describe_instances(InstanceIds=[instance_id])["Reservations"]
            statuses = self.ec2.describe_instance_status(InstanceIds=[instance_id], IncludeAllInstances=True)[
                "InstanceStatuses"
            ]
        instance = next((i for r in reservations for i in r["Instances"]), None)
        if instance is None:
            raise NotYetConsistentError(f"instance {instance_id} is not visible yet")
        state = str(instance["State"]["Name"])
        checks = statuses[0] if statuses else {}
        checks_ok = all(
            checks.get(name, {}).get("Status") == "ok" for name in ("InstanceStatus", "SystemStatus")
        )
        volumes, described = self._volume_states(instance_id, resources.volumes)
        if state == "running":  # AttachVolume needs a running instance; the next poll sees them attached
            attach_pending(self.ec2, instance_id, volumes, described)
        in_use = all(v.volume_id is not None and v.state == "in-use" for v in volumes) and all(
            _attachment_state(described.get(str(v.volume_id)), instance_id) == "attached" for v in volumes
        )
        initialized, progress = self._initialization(volumes, described)
        reason_parts = []
        transition = (instance.get("StateReason") or {}).get("Message") or instance.get(
            "StateTransitionReason"
        )
        if transition:
            reason_parts.append(str(transition))
        if progress:
            reason_parts.append("initialization " + ", ".join(progress))
        return ComputeStatus(
            instance_state=state,
            status_checks_ok=checks_ok,
            volumes_in_use=in_use,
            volumes_initialized=initialized,
            volumes=volumes,
            private_ip=instance.get("PrivateIpAddress"),
            reason="; ".join(reason_parts) or None,
            reason_code=(instance.get("StateReason") or {}).get("Code"),
        )

    def _volume_states(
        self, instance_id: str, refs: list[VolumeRef]
    ) -> tuple[list[VolumeRef], dict[str, dict[str, Any]]]:
        """Fill each ref's volume id (by device name) and state from DescribeVolumes."""
        filters = [{"Name": "attachment.instance-id", "Values": [instance_id]}]
        with aws_call(f"describe volumes of {instance_id}", ProvisioningError):
            pages = self.ec2.get_paginator("describe_volumes").paginate(Filters=filters)
            described = {str(v["VolumeId"]): v for page in pages for v in page["Volumes"]}
        unattached = [
            str(r.volume_id) for r in refs if r.multi_attach and r.volume_id and r.volume_id not in described
        ]
        if unattached:  # a group's Multi-Attach volume, not attached to this node yet
            described.update({str(v["VolumeId"]): v for v in self._volumes([], unattached)})
        by_device = {}
        for volume in described.values():
            for attachment in volume.get("Attachments") or []:
                if attachment.get("InstanceId") == instance_id:
                    by_device[str(attachment["Device"])] = volume
        updated = []
        for ref in refs:
            volume = by_device.get(ref.device_name) or described.get(str(ref.volume_id))
            if volume is None:
                updated.append(ref.model_copy(update={"state": None}))
            else:
                updated.append(
                    ref.model_copy(update={"volume_id": volume["VolumeId"], "state": volume["State"]})
                )
        return updated, described

    def _initialization(
        self, refs: list[VolumeRef], described: dict[str, dict[str, Any]]
    ) -> tuple[bool, list[str]]:
        """Snapshot volumes with a provisioned initialization rate must reach 100 % first.

        Volumes restored at the default rate initialise lazily (first read): they do not
        hold readiness back (measuring the cold read is a result), their progress is reported.
        """
        restored = [
            described[str(r.volume_id)]
            for r in refs
            if r.volume_id and described.get(str(r.volume_id), {}).get("SnapshotId")
        ]
        if not restored:
            return True, []
        with aws_call("describe volume initialization", ProvisioningError):
            pages = self.ec2.get_paginator("describe_volume_status").paginate(
                VolumeIds=[str(v["VolumeId"]) for v in restored]
            )
            details = {
                str(item["VolumeId"]): item.get("InitializationStatusDetails") or {}
                for page in pages
                for item in page.get("VolumeStatuses", [])
            }
        initialized = True
        progress = []
        for volume in restored:
            volume_id = str(volume["VolumeId"])
            detail = details.get(volume_id, {})
            percent = detail.get("Progress")
            provisioned = volume.get("VolumeInitializationRate") is not None or (
                detail.get("InitializationType") == "provisioned-rate"
            )
            if provisioned and (percent is None or int(percent) < 100):
                initialized = False
            progress.append(
                f"{volume_id} {'?' if percent is None else percent}%"
                + (" (provisioned rate)" if provisioned else "")
            )
        return initialized, progress

    # -------------------------------------------------------------- cleanup

    def terminate(self, resources: Resources, run_id: str, config_id: str) -> list[str]:
        """Terminate the config's instances, then delete its volumes that are left over.

        Instances are the one Provision recorded and any other still carrying the run's and
        config's tags (a launch whose answer was lost). Attached data volumes go with their
        instance (DeleteOnTermination); what remains is a volume created or detached
        separately, found by the tags and by the ids Provision recorded. A volume still
        attached to a terminating instance without DeleteOnTermination raises
        ResourceBusyError (retried).
        """
        deleted: list[str] = []
        going: set[str] = set()
        instances = {str(i["InstanceId"]): i for i in self._instances(self._tag_filters(run_id, config_id))}
        if resources.instance_id is not None and resources.instance_id not in instances:
            recorded = self._describe_instance(resources.instance_id)
            if recorded is not None:
                instances[resources.instance_id] = recorded
        for instance_id, instance in sorted(instances.items()):
            if instance["State"]["Name"] == "terminated":
                continue
            on_termination = {
                str(m["Ebs"]["VolumeId"])
                for m in instance.get("BlockDeviceMappings") or []
                if m.get("Ebs", {}).get("DeleteOnTermination")
            }
            going |= on_termination
            self.terminate_instance(instance_id)
            deleted.append(instance_id)
            deleted.extend(sorted(on_termination))
        candidates = self._volumes_to_check(resources, {TAG_RUN: run_id, TAG_CONFIG: config_id})
        for volume in candidates:
            volume_id = str(volume["VolumeId"])
            if volume_id in going:
                continue
            attachments = [a for a in volume.get("Attachments") or [] if a.get("State") != "detached"]
            if volume["State"] == "available" and not attachments:
                if self.delete_volume(volume_id):
                    deleted.append(volume_id)
            elif volume["State"] in ("deleting", "deleted"):
                continue
            elif any(not a.get("DeleteOnTermination") for a in attachments):
                raise ResourceBusyError(
                    f"volume {volume_id} is still attached ({volume['State']}); "
                    "it is deleted once its instance has terminated"
                )
        return deleted

    def _describe_instance(self, instance_id: str) -> dict[str, Any] | None:
        try:
            reservations = self.ec2.describe_instances(InstanceIds=[instance_id])["Reservations"]
        except ClientError as exc:
            if error_code(exc) in ("InvalidInstanceID.NotFound", "InvalidInstanceID.Malformed"):
                return None  # long gone: terminated instances disappear after about an hour
            raise workflow_error(exc, f"describe instance {instance_id}", ProvisioningError) from exc
        return next((i for r in reservations for i in r["Instances"]), None)

    def terminate_instance(self, instance_id: str) -> None:
        """Terminate one instance (already gone is done); the janitor uses it too."""
        try:
            self.ec2.terminate_instances(InstanceIds=[instance_id])
        except ClientError as exc:
            if error_code(exc) != "InvalidInstanceID.NotFound":
                raise workflow_error(exc, f"terminate {instance_id}", ProvisioningError) from exc

    def _volumes_to_check(self, resources: Resources, tags: dict[str, str]) -> list[dict[str, Any]]:
        found: dict[str, dict[str, Any]] = {}
        if tags.get(TAG_RUN) and tags.get(TAG_CONFIG):
            for volume in self._volumes(self._tag_filters(tags[TAG_RUN], tags[TAG_CONFIG])):
                found[str(volume["VolumeId"])] = volume
        recorded = [str(v.volume_id) for v in resources.volumes if v.volume_id and v.volume_id not in found]
        for volume_id in recorded:  # one at a time: a deleted id must not fail the others
            for volume in self._volumes([], [volume_id]):
                found[str(volume["VolumeId"])] = volume
        return list(found.values())

    def delete_volume(self, volume_id: str) -> bool:
        """Delete one volume; False when it was already gone (the janitor uses it too)."""
        try:
            self.ec2.delete_volume(VolumeId=volume_id)
        except ClientError as exc:
            if error_code(exc) == "InvalidVolume.NotFound":
                return False
            raise workflow_error(exc, f"delete volume {volume_id}", ProvisioningError) from exc
        return True

    def leftovers(self, run_id: str, config_id: str) -> list[str]:
        """Instances and volumes of this config that will still exist once cleanup settles.

        An instance shutting down or terminated is not a leftover, nor a volume attached to
        such an instance with DeleteOnTermination, nor a volume being deleted.
        """
        filters = self._tag_filters(run_id, config_id)
        instances = list(self._instances(filters))
        remaining = [str(i["InstanceId"]) for i in instances if i["State"]["Name"] in LIVE_STATES]
        going = {str(i["InstanceId"]) for i in instances if i["State"]["Name"] in GONE_STATES}
        for volume in self._volumes(filters):
            if volume["State"] in ("deleting", "deleted"):
                continue
            attachments = [a for a in volume.get("Attachments") or [] if a.get("State") != "detached"]
            if attachments and all(
                a.get("InstanceId") in going and a.get("DeleteOnTermination") for a in attachments
            ):
                continue
            remaining.append(str(volume["VolumeId"]))
        return remaining

    # -------------------------------------------------------------- lookups

    @staticmethod
    def _tag_filters(run_id: str, config_id: str) -> list[dict[str, Any]]:
        return [
            {"Name": f"tag:{TAG_RUN}", "Values": [run_id]},
            {"Name": f"tag:{TAG_CONFIG}", "Values": [config_id]},
        ]

    def _instances(self, filters: list[dict[str, Any]]) -> Iterable[dict[str, Any]]:
        with aws_call("describe instances", ProvisioningError):
            pages = self.ec2.get_paginator("describe_instances").paginate(Filters=filters)
            return [i for page in pages for r in page["Reservations"] for i in r["Instances"]]

    def _volumes(
        self, filters: list[dict[str, Any]], volume_ids: list[str] | None = None
    ) -> list[dict[str, Any]]:
        arguments: dict[str, Any] = {"Filters": filters} if filters else {}
        if volume_ids:
            arguments["VolumeIds"] = volume_ids
        try:
            pages = self.ec2.get_paginator("describe_volumes").paginate(**arguments)
            return [v for page in pages for v in page["Volumes"]]
        except ClientError as exc:
            if volume_ids and error_code(exc) == "InvalidVolume.NotFound":
                return []
            raise workflow_error(exc, "describe volumes", ProvisioningError) from exc


def market_of(instance: dict[str, Any]) -> Market:
    """How EC2 says the instance was bought: DescribeInstances names Spot (and Scheduled) instances in
    InstanceLifecycle and leaves it out for on-demand ones."""
    return "spot" if instance.get("InstanceLifecycle") == "spot" else "on-demand"


def _attachment_state(volume: dict[str, Any] | None, instance_id: str) -> str | None:
    if volume is None:
        return None
    for attachment in volume.get("Attachments") or []:
        if attachment.get("InstanceId") == instance_id:
            return str(attachment.get("State"))
    return None

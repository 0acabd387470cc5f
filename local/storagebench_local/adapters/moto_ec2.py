"""The EC2 adapters as local mode runs them on moto, with moto 5.2.5's gaps filled where they differ.

* Launch: moto drops ``Iops`` from io1/io2 block device mappings and then rejects the call for
  lacking it (InvalidParameterDependency). Locally the volume moto records only stands for the
  requested one (the emulated volume follows the request's type, size and IOPS), so io1/io2 are
  launched there as gp3 without IOPS.
* Placement groups: moto implements none of CreatePlacementGroup, DescribePlacementGroups and
  DeletePlacementGroup, and RunInstances ignores ``Placement.GroupName``. ``emulate_network`` adds
  the three calls to moto's EC2 (tags, filters, and EC2's errors: InvalidPlacementGroup.Duplicate,
  .Unknown, .InUse), and RunInstances then refuses an unknown group and records the group on the
  instance, as DescribeInstances reports it.
* Security groups: moto deletes a group that a live instance still uses; EC2 answers
  DependencyViolation until the instance has terminated. ``emulate_network`` makes moto refuse the
  same way, so cleanup's order (instances first) and its retry are exercised locally.
* Multi-Attach: moto keeps one attachment per volume (a second AttachVolume replaces the first, and
  terminating the first instance then fails the others' detach). ``emulate_multi_attach`` lets a
  volume created with MultiAttachEnabled hold one attachment per instance, reported in Attachments
  and matched by the ``attachment.instance-id`` filter, each detached on its own; a volume without
  it keeps moto's behaviour.

The patches go on moto's classes, so the in-process mock and the ThreadedMotoServer local instances
talk to both have them; ``MotoEc2Network`` applies them (once) when it is built. Everything else is
the AWS adapters unchanged.
"""

from __future__ import annotations

import threading
from typing import Any

from storagebench.adapters.aws.ec2 import Ec2Compute, Image
from storagebench.adapters.aws.network import Ec2Network
from storagebench.adapters.aws.settings import AwsSettings
from storagebench.core.clock import Clock
from storagebench.core.state import ComputeStatus, LaunchSpec, Resources

PLACEMENT_STRATEGIES = ("cluster", "spread", "partition")
LIVE_INSTANCE_STATES = ("pending", "running", "stopping", "stopped", "shutting-down")
_APPLIED: list[bool] = []
_MULTI_ATTACH_APPLIED: list[bool] = []
_LOCK = threading.Lock()


class MotoEc2Compute(Ec2Compute):
    def __init__(self, ec2: Any, ssm: Any, settings: AwsSettings, clock: Clock | None = None) -> None:
        emulate_multi_attach()
        super().__init__(ec2, ssm, settings, clock)

    def run_instances_request(self, spec: LaunchSpec, image: Image) -> dict[str, Any]:
        request = super().run_instances_request(spec, image)
        for mapping in request["BlockDeviceMappings"]:
            ebs = mapping.get("Ebs", {})
            if ebs.get("VolumeType") in ("io1", "io2"):
                ebs["VolumeType"] = "gp3"
                ebs.pop("Iops", None)
        return request

    def status(self, resources: Resources) -> ComputeStatus:
        """As on AWS, with the instance's private address mapped into 127/8 (``loopback_address``)."""
        status = super().status(resources)
        if status.private_ip is None:
            return status
        return status.model_copy(update={"private_ip": loopback_address(status.private_ip)})


def loopback_address(private_ip: str) -> str:
    """Where a local instance answers for its VPC address: ``10.0.1.5`` -> ``127.0.1.5``.

    Local instances share this machine's network; Linux routes all of 127/8 to the loopback
    interface, so each instance binds its own address there and the servers of several nodes use
    the same ports side by side, reached by the address the topology gives, as on a subnet."""
    octets = private_ip.split(".")
    if len(octets) != 4 or not all(o.isdigit() and 0 <= int(o) <= 255 for o in octets):
        raise ValueError(f"private address {private_ip!r}: an IPv4 address expected")
    return ".".join(["127", *octets[1:]])


def loopback_address_range(cidr: str) -> str:
    """Where a subnet's instances answer (``loopback_address``): ``10.42.1.0/24`` -> ``127.42.1.0/24``."""
    address, _, length = cidr.partition("/")
    if not length.isdigit() or int(length) < 8:
        raise ValueError(f"subnet {cidr!r}: a /8 or narrower IPv4 range expected")
    return f"{loopback_address(address)}/{length}"


class MotoEc2Network(Ec2Network):
    """The AWS network adapter on a moto whose EC2 has placement groups and refuses to delete a
    security group in use (``emulate_network``)."""

    def __init__(self, ec2: Any, settings: AwsSettings) -> None:
        emulate_network()
        super().__init__(ec2, settings)


def emulate_network() -> None:
    """Give moto's EC2 placement groups and EC2's DependencyViolation on a security group in use."""
    with _LOCK:
        if _APPLIED:
            return
        from moto.ec2.models.security_groups import SecurityGroupBackend
        from moto.ec2.responses import EC2Response
        from moto.ec2.responses.instances import InstanceResponse

        EC2Response.create_placement_group = _create_placement_group  # type: ignore[attr-defined]
        EC2Response.describe_placement_groups = _describe_placement_groups  # type: ignore[attr-defined]
        EC2Response.delete_placement_group = _delete_placement_group  # type: ignore[attr-defined]
        original_run = InstanceResponse.run_instances
        original_delete = SecurityGroupBackend.delete_security_group

        def run_instances(self: Any) -> Any:
            name = self._get_param("Placement.GroupName")
            if name and name not in _placement_groups(self.ec2_backend):
                raise _error("InvalidPlacementGroup.Unknown", f"The Placement Group '{name}' is unknown.")
            result = original_run(self)
            if name:
                reservation: Any = result.result  # moto's Reservation
                for instance in reservation.instances:
                    instance.placement.group_name = name
            return result

        def delete_security_group(self: Any, name: str | None = None, group_id: str | None = None) -> None:
            wanted = group_id or (g.id if (g := self.get_security_group_by_name_or_id(name)) else None)
            users = [
                i.id
                for i in self.all_instances()
                if i.state in LIVE_INSTANCE_STATES and any(g.id == wanted for g in i.security_groups)
            ]
            if users:
                raise _error("DependencyViolation", f"resource {wanted} has a dependent object ({users[0]})")
            original_delete(self, name=name, group_id=group_id)

        InstanceResponse.run_instances = run_instances  # type: ignore[method-assign]
        SecurityGroupBackend.delete_security_group = delete_security_group  # type: ignore[method-assign]
        _APPLIED.append(True)


# ------------------------------------------------------------------ Multi-Attach on moto


def _held(volume: Any) -> list[Any]:
    """Every attachment a volume holds: moto's own one, then the others of a Multi-Attach volume."""
    return [a for a in (volume.attachment, *getattr(volume, "sb_more_attachments", [])) if a is not None]


def emulate_multi_attach() -> None:
    """Let a Multi-Attach volume on moto's EC2 be attached to several instances at once."""
    with _LOCK:
        if _MULTI_ATTACH_APPLIED:
            return
        from moto.ec2.exceptions import InvalidVolumeAttachmentError
        from moto.ec2.models.elastic_block_store import EBSBackend, Volume

        original_attach = EBSBackend.attach_volume
        original_detach = EBSBackend.detach_volume
        original_filter = Volume.get_filter_value

        def attach_volume(
            self: Any, volume_id: str, instance_id: str, device_path: str, delete_on_termination: bool = False
        ) -> Any:
            volume = self.get_volume(volume_id)
            held = volume.attachment
            attached = original_attach(self, volume_id, instance_id, device_path, delete_on_termination)
            if held is not None and getattr(volume, "multi_attach_enabled", False):
                volume.sb_more_attachments = [*getattr(volume, "sb_more_attachments", []), held]
            return attached

        def detach_volume(self: Any, volume_id: str, instance_id: str, device_path: str) -> Any:
            volume = self.get_volume(volume_id)
            held = _held(volume)
            mine = next((a for a in held if a.instance.id == instance_id), None)
            if mine is None:
                raise InvalidVolumeAttachmentError(volume_id, instance_id)
            others = [a for a in held if a is not mine]
            volume.attachment, volume.sb_more_attachments = mine, []
            detached = original_detach(self, volume_id, instance_id, device_path or mine.device)
            volume.attachment, volume.sb_more_attachments = (others[0], others[1:]) if others else (None, [])
            return detached

        def get_filter_value(self: Any, filter_name: str, method_name: str | None = None) -> Any:
            if filter_name == "attachment.instance-id" and getattr(self, "sb_more_attachments", None):
                return [a.instance.id for a in _held(self)]
            return original_filter(self, filter_name, method_name)

        EBSBackend.attach_volume = attach_volume  # type: ignore[method-assign]
        EBSBackend.detach_volume = detach_volume  # type: ignore[method-assign]
        Volume.get_filter_value = get_filter_value  # type: ignore[method-assign]
        Volume.attachments = property(_held)  # type: ignore[assignment, method-assign]
        _MULTI_ATTACH_APPLIED.append(True)


# ------------------------------------------------------------------ placement groups on moto


def _error(code: str, message: str) -> Exception:
    from moto.ec2.exceptions import EC2ClientError

    return EC2ClientError(code, message)


def _placement_groups(backend: Any) -> dict[str, dict[str, Any]]:
    """The backend's placement groups by name (moto resets a backend by rebuilding it: they go too)."""
    groups: dict[str, dict[str, Any]] = backend.__dict__.setdefault("storagebench_placement_groups", {})
    return groups


def _create_placement_group(self: Any) -> Any:
    from moto.core.responses import ActionResult
    from moto.ec2.utils import random_id

    name = str(self._get_param("GroupName") or "")
    strategy = str(self._get_param("Strategy") or "")
    if not name:
        raise _error("MissingParameter", "The request must contain the parameter GroupName")
    if strategy not in PLACEMENT_STRATEGIES:
        raise _error("InvalidParameterValue", f"Value ({strategy}) for parameter strategy is invalid.")
    self.error_on_dryrun()
    groups = _placement_groups(self.ec2_backend)
    if name in groups:
        raise _error("InvalidPlacementGroup.Duplicate", f"The Placement Group '{name}' already exists.")
    tags = self._parse_tag_specification("placement-group").get("placement-group", {})
    group_id = random_id(prefix="pg-")
    group: dict[str, Any] = {
        "GroupName": name,
        "State": "available",
        "Strategy": strategy,
        "GroupId": group_id,
        "GroupArn": f"arn:aws:ec2:{self.region}:{self.current_account}:placement-group/{name}",
        "Tags": [{"Key": k, "Value": v} for k, v in tags.items()],
    }
    if strategy == "partition":
        group["PartitionCount"] = int(self._get_param("PartitionCount") or 2)
    groups[name] = group
    return ActionResult({"PlacementGroup": group})


def _describe_placement_groups(self: Any) -> Any:
    from moto.core.responses import ActionResult

    groups = _placement_groups(self.ec2_backend)
    names = self._get_param("GroupNames", [])
    unknown = [n for n in names if n not in groups]
    if unknown:
        raise _error("InvalidPlacementGroup.Unknown", f"The Placement Group '{unknown[0]}' is unknown.")
    found = [groups[n] for n in names] if names else list(groups.values())
    for name, values in self._filters_from_querystring().items():
        found = [g for g in found if _matches(g, name, values)]
    return ActionResult({"PlacementGroups": found})


def _matches(group: dict[str, Any], name: str, values: list[str]) -> bool:
    tags = {t["Key"]: t["Value"] for t in group["Tags"]}
    if name.startswith("tag:"):
        return tags.get(name[4:]) in values
    if name == "tag-key":
        return any(key in values for key in tags)
    fields = {"group-name": "GroupName", "group-arn": "GroupArn", "state": "State", "strategy": "Strategy"}
    if name not in fields:
        raise _error(
            "InvalidParameterValue", f"The filter '{name}' is invalid (emulated: {', '.join(fields)})"
        )
    return str(group[fields[name]]) in values


def _delete_placement_group(self: Any) -> Any:
    from moto.core.responses import ActionResult

    name = str(self._get_param("GroupName") or "")
    self.error_on_dryrun()
    groups = _placement_groups(self.ec2_backend)
    if name not in groups:
        raise _error("InvalidPlacementGroup.Unknown", f"The Placement Group '{name}' is unknown.")
    held = [
        i.id
        for i in self.ec2_backend.all_instances()
        if i.state in LIVE_INSTANCE_STATES and i.placement.group_name == name
    ]
    if held:
        raise _error("InvalidPlacementGroup.InUse", f"The Placement Group '{name}' is in use by {held[0]}.")
    del groups[name]
    return ActionResult({})

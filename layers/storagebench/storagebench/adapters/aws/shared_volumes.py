"""EBS Multi-Attach volumes of a node group: created once, attached to every node.

RunInstances cannot enable Multi-Attach, so such a volume is no block device mapping: the first
node's launch creates it (CreateVolume, MultiAttachEnabled, in that node's Availability Zone, with
the group's client token, tagged like the config's other resources and with the token, which a
later node's launch or a retried one looks up first), and each node's readiness poll attaches it
(AttachVolume needs a running instance and an available or in-use volume). It is attached without
DeleteOnTermination: the config's cleanup finds it by its run and config tags and deletes it once
the last node has terminated (``Ec2Compute.terminate`` raises ResourceBusyError until then).
"""

from __future__ import annotations

from typing import Any

from storagebench.adapters.aws.errors import aws_call
from storagebench.core.errors import ProvisioningError
from storagebench.core.state import LaunchVolume, VolumeRef
from storagebench.core.tags import TAG_CLIENT_TOKEN, TAG_NODE

ATTACHABLE = ("available", "in-use")  # a Multi-Attach volume in use by another node takes one more


def shared_tags(tags: dict[str, str], volume: LaunchVolume) -> dict[str, str]:
    """The launch's tags without the node's own (every node asks with the same ones), plus the token."""
    kept = {k: v for k, v in tags.items() if k not in (TAG_NODE, "Name")}
    name = tags.get("Name", "storagebench").rsplit(" ", 1)[0] if TAG_NODE in tags else tags.get("Name")
    return {
        **kept,
        "Name": f"{name or 'storagebench'} {volume.target_id}/{volume.member} multi-attach",
        TAG_CLIENT_TOKEN: str(volume.share_token),
    }


def create_volume_request(
    volume: LaunchVolume, zone: str, tags: dict[str, str], kms_key_id: str | None
) -> dict[str, Any]:
    """The CreateVolume parameters of a Multi-Attach volume (public so tests can read what is sent)."""
    request: dict[str, Any] = {
        "ClientToken": str(volume.share_token),
        "AvailabilityZone": zone,
        "VolumeType": volume.volume_type,
        "Size": volume.size_gib,
        "Encrypted": volume.encrypted,
        "MultiAttachEnabled": True,
        "TagSpecifications": [
            {"ResourceType": "volume", "Tags": [{"Key": k, "Value": v} for k, v in sorted(tags.items())]}
        ],
    }
    if volume.encrypted and kms_key_id:
        request["KmsKeyId"] = kms_key_id
    if volume.iops is not None:
        request["Iops"] = volume.iops
    if volume.throughput_mibps is not None:
        request["Throughput"] = volume.throughput_mibps
    if volume.snapshot_id:
        request["SnapshotId"] = volume.snapshot_id
    return request


def ensure_volume(
    ec2: Any, volume: LaunchVolume, zone: str | None, tags: dict[str, str], kms_key_id: str | None
) -> str:
    """The group's volume for ``volume.share_token``: the one already made, else a new one in ``zone``."""
    token = str(volume.share_token)
    with aws_call(f"find the Multi-Attach volume of {volume.target_id}/{volume.member}", ProvisioningError):
        pages = ec2.get_paginator("describe_volumes").paginate(
            Filters=[{"Name": f"tag:{TAG_CLIENT_TOKEN}", "Values": [token]}]
        )
        found = [v for page in pages for v in page["Volumes"] if v["State"] not in ("deleting", "deleted")]
    if found:
        return str(found[0]["VolumeId"])
    if zone is None:
        raise ProvisioningError(
            f"Multi-Attach volume {volume.target_id}/{volume.member}: EC2 reported no Availability Zone "
            "for the node it must be created beside"
        )
    request = create_volume_request(volume, zone, shared_tags(tags, volume), kms_key_id)
    with aws_call(f"create the Multi-Attach volume {volume.target_id}/{volume.member}", ProvisioningError):
        return str(ec2.create_volume(**request)["VolumeId"])


def attach_pending(ec2: Any, instance_id: str, refs: list[VolumeRef], described: dict[str, Any]) -> list[str]:
    """Attach each Multi-Attach volume of ``refs`` not yet attached to the running ``instance_id``
    (``described``: DescribeVolumes by id); returns the volume ids attached by this call."""
    attached: list[str] = []
    for ref in refs:
        if not ref.multi_attach or ref.volume_id is None:
            continue
        volume = described.get(ref.volume_id)
        if volume is None or volume["State"] not in ATTACHABLE:
            continue  # still creating: the next poll attaches it
        if any(a.get("InstanceId") == instance_id for a in volume.get("Attachments") or []):
            continue
        with aws_call(f"attach Multi-Attach volume {ref.volume_id} to {instance_id}", ProvisioningError):
            ec2.attach_volume(Device=ref.device_name, InstanceId=instance_id, VolumeId=ref.volume_id)
        attached.append(ref.volume_id)
    return attached

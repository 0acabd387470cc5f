"""From a config and what Provision created to the agent's targets, and to launch specs.

Device names are requested in order (/dev/sdf, /dev/sdg, ...) but the agent finds volumes by
NVMe serial (volume id), so the name only matters on Xen instances. Each EBS target also
carries its requested volume type and size, which the manifest records and which local mode
uses to stand a loop device in for the volume.
"""

from __future__ import annotations

import re
from typing import Literal

from storagebench.agent.plan import TargetSpec
from storagebench.catalog import instance_type as catalog_instance
from storagebench.core.errors import NotYetConsistentError, ProvisioningError
from storagebench.core.launch import DATA_DEVICE_LETTERS, ROOT_DEVICE, client_token
from storagebench.core.state import LaunchSpec, LaunchVolume, Resources
from storagebench.request.model import (
    Config,
    EbsTarget,
    EfsTarget,
    FileGatewayTarget,
    FsxLustreTarget,
    InstanceStoreTarget,
    LocalTarget,
    NfsTarget,
)

_GRAVITON = re.compile(r"^(a1|[a-z]+\d+[a-z]*g[a-z]*)\.")  # a1: first Graviton; c7g, m6gd, r8g, ...


def architecture(instance_type: str) -> Literal["x86_64", "arm64"]:
    spec = catalog_instance(instance_type)
    if spec is not None:
        return spec.arch
    return "arm64" if _GRAVITON.match(instance_type) else "x86_64"


def storage_option(config: Config, target_id: str) -> str:
    """A stable description of one storage option, the key of its history across runs."""
    target = next(t for t in config.targets if t.id == target_id)
    if isinstance(target, EbsTarget):
        parts = [f"ebs:{target.type}:{target.size_gib}GiB"]
        if target.iops:
            parts.append(f"{target.iops}iops")
        if target.throughput_mibps:
            parts.append(f"{target.throughput_mibps}MiBps")
        if target.count > 1:
            parts.append(f"x{target.count}{target.layout}")
        parts.append(target.filesystem)
        described = ":".join(parts)
    elif isinstance(target, EfsTarget):
        described = f"efs:{target.throughput_mode}"
        if target.provisioned_throughput_mibps:
            described += f":{target.provisioned_throughput_mibps:g}MiBps"
        if target.performance_mode != "generalPurpose":
            described += f":{target.performance_mode}"
        if target.one_zone:
            described += ":one-zone"
    elif isinstance(target, FsxLustreTarget):
        described = f"fsx_lustre:{target.deployment_type}:{target.storage_capacity_gib}GiB"
        if target.per_unit_storage_throughput:
            described += f":{target.per_unit_storage_throughput}"
        if target.data_compression != "NONE":
            described += f":{target.data_compression}"
    elif isinstance(target, InstanceStoreTarget):
        described = f"instance_store:{target.count or 'all'}:{target.filesystem}"
    elif isinstance(target, NfsTarget):
        described = f"nfs:{target.server}:{target.export}"
    elif isinstance(target, FileGatewayTarget):
        disks = [target.root_volume, *target.cache_volumes]
        sizes = "+".join(f"{d.type}:{d.size_gib}GiB" + (f":{d.iops}iops" if d.iops else "") for d in disks)
        described = f"file_gateway:{target.gateway_instance_type}:{sizes}:{target.mount_options_for_client()}"
    else:
        described = f"local:{target.path}"
    return f"{config.instance_type}/{described}"


def launch_spec(config: Config, run_id: str, tags: dict[str, str]) -> LaunchSpec:
    root = config.root_volume
    volumes: list[LaunchVolume] = []
    for target in config.targets:
        if not isinstance(target, EbsTarget):
            continue
        for member in range(target.count):
            letter = DATA_DEVICE_LETTERS[len(volumes)]
            volumes.append(
                LaunchVolume(
                    target_id=str(target.id),
                    member=member,
                    device_name=f"/dev/sd{letter}",
                    volume_type=target.type,
                    size_gib=target.size_gib,
                    iops=target.iops,
                    throughput_mibps=target.throughput_mibps,
                    encrypted=target.encrypted,
                    snapshot_id=target.snapshot_id,
                    initialization_rate_mibps=target.initialization_rate_mibps,
                )
            )
    return LaunchSpec(
        client_token=client_token(run_id, config.id),
        instance_type=config.instance_type,
        architecture=architecture(config.instance_type),
        root=LaunchVolume(
            target_id="root",
            member=0,
            device_name=ROOT_DEVICE,
            volume_type=root.type,
            size_gib=root.size_gib,
            iops=root.iops,
            throughput_mibps=root.throughput_mibps,
            encrypted=root.encrypted,
        ),
        volumes=volumes,
        tags=tags,
    )


def file_gateway_mount(target: FileGatewayTarget, gateway_ip: str, share_path: str) -> TargetSpec:
    """The client's NFS mount of a gateway's share: ``mount -t nfs -o <options> <ip>:<path> <dir>``."""
    if not share_path.startswith("/"):
        raise ValueError(f"share_path {share_path!r} must be absolute, e.g. /bucket-name")
    return {
        "id": str(target.id),
        "kind": "nfs",
        "source": f"{gateway_ip}:{share_path}",
        "fstype": "nfs",
        "mount_options": target.mount_options_for_client(),
    }


def agent_targets(config: Config, resources: Resources, region: str) -> list[TargetSpec]:
    """The plan's targets for what Provision created (AWS bindings)."""
    specs: list[TargetSpec] = []
    for target in config.targets:
        target_id = str(target.id)
        if isinstance(target, EbsTarget):
            members = sorted(
                (v for v in resources.volumes if v.target_id == target_id), key=lambda v: v.member
            )
            if len(members) != target.count or any(v.volume_id is None for v in members):
                raise NotYetConsistentError(f"volumes of target {target_id} are not all attached yet")
            spec: TargetSpec = {
                "id": target_id,
                "kind": "ebs",
                "volume_ids": [str(v.volume_id) for v in members],
                "device_names": [v.device_name for v in members],
                "count": target.count,
                "layout": target.layout,
                "filesystem": target.filesystem,
                "allow_destroy": target.allow_destroy,
                "prepare": target.prepare,
                "volume": {
                    "type": target.type,
                    "size_gib": target.size_gib,
                    "iops": target.iops,
                    "throughput_mibps": target.throughput_mibps,
                },
            }
            if target.mount_options:
                spec["mount_options"] = target.mount_options
            if target.raid_chunk_kib:
                spec["raid_chunk_kib"] = target.raid_chunk_kib
            specs.append(spec)
        elif isinstance(target, InstanceStoreTarget):
            store: TargetSpec = {
                "id": target_id,
                "kind": "instance_store",
                "count": target.count or 0,
                "filesystem": target.filesystem,
            }
            if target.mount_options:
                store["mount_options"] = target.mount_options
            specs.append(store)
        elif isinstance(target, EfsTarget | FsxLustreTarget):
            ref = next((f for f in resources.file_systems if f.target_id == target_id), None)
            if ref is None:
                raise NotYetConsistentError(f"file system of target {target_id} is not recorded yet")
            if isinstance(target, EfsTarget):
                source = f"{ref.file_system_id}.efs.{region}.amazonaws.com:/"
                specs.append(
                    {
                        "id": target_id,
                        "kind": "efs",
                        "source": source,
                        "fstype": "nfs4",
                        "mount_options": target.mount_options,
                    }
                )
            else:
                if not ref.dns_name or not ref.mount_name:
                    raise NotYetConsistentError(f"FSx file system {ref.file_system_id} has no DNS name yet")
                fsx: TargetSpec = {
                    "id": target_id,
                    "kind": "fsx_lustre",
                    "fstype": "lustre",
                    "source": f"{ref.dns_name}@tcp:/{ref.mount_name}",
                    "mount_options": target.mount_options,
                }
                if target.stripe_count:
                    fsx["lustre_stripe_count"] = target.stripe_count
                specs.append(fsx)
        elif isinstance(target, NfsTarget):
            options = target.mount_options
            if target.nfs_version:
                options = (
                    f"{options},nfsvers={target.nfs_version}" if options else f"nfsvers={target.nfs_version}"
                )
            specs.append(
                {
                    "id": target_id,
                    "kind": "nfs",
                    "source": f"{target.server}:{target.export}",
                    "fstype": "nfs",
                    "mount_options": options,
                }
            )
        elif isinstance(target, LocalTarget):
            specs.append({"id": target_id, "kind": "directory", "path": target.path})
        elif isinstance(target, FileGatewayTarget):
            gateway = next((g for g in resources.gateways if g.target_id == target_id), None)
            if gateway is None:  # never leave a target out of the plan silently
                raise ProvisioningError(f"target {target_id}: no file gateway was provisioned for it")
            if gateway.stage != "available" or not gateway.appliance_ip or not gateway.share_path:
                raise NotYetConsistentError(f"file share of target {target_id} is not available yet")
            specs.append(file_gateway_mount(target, gateway.appliance_ip, gateway.share_path))
    return specs

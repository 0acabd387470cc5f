"""A plan made for AWS, made runnable on this machine: what both local agent paths share."""

from __future__ import annotations

import os
import shutil

from storagebench.core.errors import AgentError
from storagebench.planning.local import LocalOptions, emulated_ebs
from storagebench.protocol.plan import Plan, TargetSpec
from storagebench.request.model import EbsTarget


def check_machine(tools: tuple[str, ...] = ("fio", "losetup")) -> None:
    """Root and the tools emulated volumes need, or an AgentError naming what is missing."""
    if os.geteuid() != 0:
        raise AgentError(
            "local mode emulates EBS volumes with loop devices and cgroup throttling: run as root"
        )
    missing = [tool for tool in tools if shutil.which(tool) is None]
    if missing:
        raise AgentError(f"local mode needs {', '.join(missing)} (make setup installs them)")


NFS_NEEDS_IMAGE = (
    "target {id} (nfs {source}): local instances mount NFS with a user-space client installed in "
    "their own image root (this machine's kernel has no NFS client, and its own root never gets "
    "one): give the config a catalog image local mode boots as a root of its own (image debian-12)"
)


def rebind(plan: Plan, options: LocalOptions, nfs_client: bool = False) -> Plan:
    """The plan with its EBS targets standing on emulated volumes of this machine (loop device and
    throttle at the volume type's envelope); directories stay; NFS mounts stay when the instance has
    the stand-in NFS client (``nfs_client``: its image root got it, ``ssm.nfs_client``), as the
    shares of local File Gateways need; kinds that need AWS are refused."""
    targets: list[TargetSpec] = []
    for spec in plan["targets"]:
        if spec["kind"] == "ebs":
            volume = spec.get("volume") or {}
            target = EbsTarget.model_validate(
                {
                    "kind": "ebs",
                    "id": spec["id"],
                    "type": volume.get("type"),
                    "size_gib": volume.get("size_gib"),
                    "iops": volume.get("iops"),
                    "throughput_mibps": volume.get("throughput_mibps"),
                    "count": spec.get("count", 1),
                    "layout": spec.get("layout", "raid0"),
                    "filesystem": spec.get("filesystem", "xfs"),
                    "mount_options": spec.get("mount_options"),
                    "raid_chunk_kib": spec.get("raid_chunk_kib"),
                    "prepare": spec.get("prepare", True),  # left to the setup hook: $SB_DEVICE_<ID>
                }
            )
            targets.append(emulated_ebs(target, options))
        elif spec["kind"] == "directory":
            targets.append(spec)
        elif spec["kind"] == "nfs":
            if not nfs_client:
                raise AgentError(NFS_NEEDS_IMAGE.format(id=spec["id"], source=spec.get("source")))
            targets.append(spec)
        else:
            raise AgentError(f"target {spec['id']} ({spec['kind']}) needs AWS and cannot run on this machine")
    rebound = dict(plan)
    rebound["targets"] = targets
    return rebound  # type: ignore[return-value]

"""An S3 File Gateway the run provisions (an EC2 appliance with root and cache disks) whose NFS share
the config's instance mounts: billed as the appliance's hours and disks."""

from __future__ import annotations

from storagebench.catalog.network import StorageSide, network_limits
from storagebench.core.errors import NotYetConsistentError, ProvisioningError
from storagebench.core.state import Resources
from storagebench.kinds.base import INSTANCE_READY_S, Bill, EbsVolumeBill, InstanceBill, StorageKind
from storagebench.protocol.plan import TargetSpec
from storagebench.request.model import Config, FileGatewayTarget

# A File Gateway: the appliance boots like any instance (INSTANCE_READY_S), then activation,
# AddCache and CreateNFSFileShare, whose share AWS reports as CREATING for a minute or two before
# AVAILABLE. No published figure; twice an instance's readiness, the safe side of a guardrail.
FILE_GATEWAY_READY_S = 2 * INSTANCE_READY_S
GATEWAY_ROOT = "gateway-root"
GATEWAY_CACHE = "gateway-cache"


def gateway_volume_id(target_id: str, disk: str, position: int | None = None) -> str:
    """``target_id`` of a gateway disk's components: ``share/gateway-root``, ``share/gateway-cache``."""
    return f"{target_id}/{disk}" if position is None else f"{target_id}/{disk}{position}"


def gateway_disks(target: FileGatewayTarget) -> list[tuple[str, str, int | None]]:
    """(component target id, disk kind, cache position) of every disk of the appliance."""
    tid = str(target.id)
    disks: list[tuple[str, str, int | None]] = [(gateway_volume_id(tid, GATEWAY_ROOT), GATEWAY_ROOT, None)]
    many = len(target.cache_volumes) > 1
    for position in range(len(target.cache_volumes)):
        label = gateway_volume_id(tid, GATEWAY_CACHE, position if many else None)
        disks.append((label, GATEWAY_CACHE, position))
    return disks


def gateway_targets(config: Config) -> list[FileGatewayTarget]:
    """The config's file_gateway targets, each provisioned as an appliance of its own."""
    return [t for t in config.targets if isinstance(t, FileGatewayTarget)]


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


class FileGateway(StorageKind[FileGatewayTarget]):
    name = "file_gateway"
    network = True
    ready_seconds = FILE_GATEWAY_READY_S
    appliances = 1

    def option_key(self, target: FileGatewayTarget) -> str:
        disks = [target.root_volume, *target.cache_volumes]
        sizes = "+".join(f"{d.type}:{d.size_gib}GiB" + (f":{d.iops}iops" if d.iops else "") for d in disks)
        return f"file_gateway:{target.gateway_instance_type}:{sizes}:{target.mount_options_for_client()}"

    def report_text(self, target: FileGatewayTarget) -> tuple[str, str]:
        root = target.root_volume
        caches = " + ".join(f"{c.type} {c.size_gib:,} GiB" for c in target.cache_volumes)
        text = f"File Gateway {target.gateway_instance_type} · cache {caches}"
        options = target.mount_options_for_client()
        detail = f"{text} · root {root.type} {root.size_gib:,} GiB · NFS -o {options}"
        return text, detail

    def preview_text(self, target: FileGatewayTarget) -> str:
        caches = "+".join(f"{c.type} {c.size_gib} GiB" for c in target.cache_volumes)
        return f"{self.name} {target.gateway_instance_type}, cache {caches}"

    def bill(self, target: FileGatewayTarget, instance_type: str) -> Bill:
        tid = str(target.id)
        appliance = target.gateway_instance_type
        items: list[InstanceBill | EbsVolumeBill] = [
            InstanceBill("gateway-instance", tid, appliance, f"{tid}: gateway appliance {appliance}")
        ]
        for label, _disk, position in gateway_disks(target):
            volume = target.root_volume if position is None else target.cache_volumes[position]
            items.append(
                EbsVolumeBill(label, volume.type, volume.size_gib, volume.iops, volume.throughput_mibps)
            )
        note = (
            f"{tid}: Storage Gateway's own charges (S3 requests and storage of the share's data, data "
            "written to AWS by the gateway) are usage-priced and not in the monthly figure"
        )
        return Bill(items=tuple(items), notes=(note,))

    def network_storage(self, target: FileGatewayTarget, clients: int) -> StorageSide:
        """The share is served by the appliance: at most its network carries (its cache's rate and
        S3's are not in the catalog)."""
        appliance = network_limits(target.gateway_instance_type)
        if appliance is None:
            return StorageSide(
                mibps=None, basis=f"gateway appliance {target.gateway_instance_type}: not in the catalog"
            )
        return StorageSide(
            mibps=appliance.baseline_mibps,
            basis=f"at most the gateway appliance's network, {appliance.describe()}",
        )

    def appliance_instance_types(self, target: FileGatewayTarget) -> tuple[tuple[str, str], ...]:
        return (("gateway_instance_type", target.gateway_instance_type),)

    def agent_spec(self, target: FileGatewayTarget, resources: Resources, region: str) -> TargetSpec:
        target_id = str(target.id)
        gateway = next((g for g in resources.gateways if g.target_id == target_id), None)
        if gateway is None:  # never leave a target out of the plan silently
            raise ProvisioningError(f"target {target_id}: no file gateway was provisioned for it")
        if gateway.stage != "available" or not gateway.appliance_ip or not gateway.share_path:
            raise NotYetConsistentError(f"file share of target {target_id} is not available yet")
        return file_gateway_mount(target, gateway.appliance_ip, gateway.share_path)

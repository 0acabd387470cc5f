"""An existing NFS export (a File Gateway share, a filer): mounted, never created, billed elsewhere."""

from __future__ import annotations

from storagebench.catalog.network import StorageSide
from storagebench.core.state import Resources
from storagebench.kinds.base import Bill, StorageKind
from storagebench.protocol.plan import TargetSpec
from storagebench.request.model import NfsTarget


class Nfs(StorageKind[NfsTarget]):
    name = "nfs"
    network = True

    def option_key(self, target: NfsTarget) -> str:
        return f"nfs:{target.server}:{target.export}"

    def report_text(self, target: NfsTarget) -> tuple[str, str]:
        text = f"NFS {target.server}:{target.export}"
        return text, text

    def bill(self, target: NfsTarget, instance_type: str) -> Bill:
        return Bill(
            unpriced=(
                f"{target.id}: NFS export {target.server}:{target.export} not priced: an existing server "
                "(a File Gateway, a filer) billed outside this config",
            )
        )

    def network_storage(self, target: NfsTarget, clients: int) -> StorageSide:
        return StorageSide(mibps=None, basis=f"NFS server {target.server}: not in the catalog")

    def agent_spec(self, target: NfsTarget, resources: Resources, region: str) -> TargetSpec:
        options = target.mount_options
        if target.nfs_version:
            options = (
                f"{options},nfsvers={target.nfs_version}" if options else f"nfsvers={target.nfs_version}"
            )
        return {
            "id": str(target.id),
            "kind": "nfs",
            "source": f"{target.server}:{target.export}",
            "fstype": "nfs",
            "mount_options": options,
        }

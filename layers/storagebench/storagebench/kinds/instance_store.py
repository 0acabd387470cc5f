"""The instance's own NVMe devices (instance store): included in the instance's price, gone at stop."""

from __future__ import annotations

from typing import Literal

from storagebench.core.state import Resources
from storagebench.kinds.base import Bill, StorageKind
from storagebench.protocol.plan import TargetSpec
from storagebench.request.model import InstanceStoreTarget
from storagebench.workloads.profile import TargetContext


class InstanceStore(StorageKind[InstanceStoreTarget]):
    name = "instance_store"
    in_instance_price = True

    def option_key(self, target: InstanceStoreTarget) -> str:
        return f"instance_store:{target.count or 'all'}:{target.filesystem}"

    def report_text(self, target: InstanceStoreTarget) -> tuple[str, str]:
        devices = "all devices" if target.count is None else f"{target.count} device(s)"
        text = f"instance store ({devices}) · {target.filesystem}"
        return text, text

    def bill(self, target: InstanceStoreTarget, instance_type: str) -> Bill:
        return Bill(notes=(f"{target.id}: instance store is included in the {instance_type} price",))

    def context(
        self, target: InstanceStoreTarget, instance_type: str, mode: Literal["raw", "filesystem"]
    ) -> TargetContext:
        return TargetContext(mode=mode, media="ssd")  # NVMe; its IOPS are not in the catalog

    def agent_spec(self, target: InstanceStoreTarget, resources: Resources, region: str) -> TargetSpec:
        spec: TargetSpec = {
            "id": str(target.id),
            "kind": "instance_store",
            "count": target.count or 0,
            "filesystem": target.filesystem,
        }
        if target.mount_options:
            spec["mount_options"] = target.mount_options
        return spec

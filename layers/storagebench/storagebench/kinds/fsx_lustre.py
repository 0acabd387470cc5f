"""Amazon FSx for Lustre: a file system Provision creates, mounted with the Lustre client."""

from __future__ import annotations

from storagebench.catalog.envelope import mb_to_mib
from storagebench.catalog.loader import load_catalog
from storagebench.catalog.network import StorageSide
from storagebench.core.errors import NotYetConsistentError
from storagebench.core.state import Resources
from storagebench.kinds.base import (
    GIB_PER_TIB,
    Bill,
    FsxLustreBill,
    Rates,
    StorageKind,
    recorded_file_system,
)
from storagebench.protocol.plan import TargetSpec
from storagebench.request.model import FsxLustreTarget

# FSx for Lustre documents only "within minutes" (aws.amazon.com/fsx/lustre/faqs); creations of
# scratch and persistent file systems are commonly observed to take 5 to 15 minutes: the upper end.
FSX_LUSTRE_READY_S = 900.0


class FsxLustre(StorageKind[FsxLustreTarget]):
    name = "fsx_lustre"
    network = True
    ready_seconds = FSX_LUSTRE_READY_S
    file_system = "fsx_lustre"
    client_ports = ("tcp/988", "tcp/1018-1023")  # Lustre: clients to servers and servers to each other

    def option_key(self, target: FsxLustreTarget) -> str:
        described = f"fsx_lustre:{target.deployment_type}:{target.storage_capacity_gib}GiB"
        if target.per_unit_storage_throughput:
            described += f":{target.per_unit_storage_throughput}"
        if target.data_compression != "NONE":
            described += f":{target.data_compression}"
        return described

    def report_text(self, target: FsxLustreTarget) -> tuple[str, str]:
        text = f"FSx for Lustre {target.deployment_type} {target.storage_capacity_gib:,} GiB"
        if target.per_unit_storage_throughput:
            text += f" · {target.per_unit_storage_throughput} MB/s/TiB"
        return text, text

    def bill(self, target: FsxLustreTarget, instance_type: str) -> Bill:
        return Bill(items=(FsxLustreBill(target),))

    def rates(self, target: FsxLustreTarget, instance_type: str) -> Rates:
        deployment = load_catalog().fsx_lustre[target.deployment_type]
        per_tib = (
            mb_to_mib(target.per_unit_storage_throughput)
            if target.per_unit_storage_throughput
            else deployment.baseline_mibps_per_tib
        )
        rate = per_tib * target.storage_capacity_gib / GIB_PER_TIB
        return Rates(rate, rate)

    def network_storage(self, target: FsxLustreTarget, clients: int) -> StorageSide:
        rates = self.rates(target, "")
        return StorageSide(mibps=rates.read_mibps, basis=f"{self.report_text(target)[0]}, baseline")

    def agent_spec(self, target: FsxLustreTarget, resources: Resources, region: str) -> TargetSpec:
        target_id = str(target.id)
        ref = recorded_file_system(resources, target_id)
        if not ref.dns_name or not ref.mount_name:
            raise NotYetConsistentError(f"FSx file system {ref.file_system_id} has no DNS name yet")
        spec: TargetSpec = {
            "id": target_id,
            "kind": "fsx_lustre",
            "fstype": "lustre",
            "source": f"{ref.dns_name}@tcp:/{ref.mount_name}",
            "mount_options": target.mount_options,
        }
        if target.stripe_count:
            spec["lustre_stripe_count"] = target.stripe_count
        return spec

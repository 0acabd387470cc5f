"""Amazon EFS: a file system Provision creates, mounted over NFSv4.1 from the instance's subnet."""

from __future__ import annotations

import math

from storagebench.agent.plan import TargetSpec
from storagebench.catalog.loader import load_catalog
from storagebench.catalog.network import StorageSide
from storagebench.core.numbers import num
from storagebench.core.state import Resources
from storagebench.kinds.base import GIB_PER_TIB, Bill, EfsBill, Rates, StorageKind, recorded_file_system
from storagebench.request.model import EfsTarget

# CreateFileSystem makes an EFS file system available within seconds; the mount target in the
# instance's subnet takes about 90 s more (its network interface). Rounded up.
EFS_READY_S = 120.0


class Efs(StorageKind[EfsTarget]):
    name = "efs"
    network = True
    ready_seconds = EFS_READY_S
    file_system = "efs"
    client_ports = ("tcp/2049",)  # NFS

    def option_key(self, target: EfsTarget) -> str:
        described = f"efs:{target.throughput_mode}"
        if target.provisioned_throughput_mibps:
            described += f":{target.provisioned_throughput_mibps:g}MiBps"
        if target.performance_mode != "generalPurpose":
            described += f":{target.performance_mode}"
        if target.one_zone:
            described += ":one-zone"
        return described

    def report_text(self, target: EfsTarget) -> tuple[str, str]:
        text = f"EFS {target.throughput_mode}"
        if target.provisioned_throughput_mibps:
            text += f" {num(target.provisioned_throughput_mibps)} MiB/s"
        if target.one_zone:
            text += " one zone"
        return text, text

    def bill(self, target: EfsTarget, instance_type: str) -> Bill:
        return Bill(items=(EfsBill(target),))

    def rates(self, target: EfsTarget, instance_type: str) -> Rates:
        rules = load_catalog().efs
        if target.throughput_mode == "elastic":
            client = rules.elastic_per_client_max_mibps or math.inf
            return Rates(
                min(client, rules.elastic_max_read_mibps), min(client, rules.elastic_max_write_mibps)
            )
        client = rules.per_client_max_mibps or math.inf
        if target.throughput_mode == "provisioned":
            assert target.provisioned_throughput_mibps is not None  # the request model requires it
            rate = min(client, target.provisioned_throughput_mibps)
        else:  # bursting: the burst rate while credits last (every file system bursts to >= 100 MiB/s)
            stored_tib = (target.storage_gib_hint or 0) / GIB_PER_TIB
            rate = min(client, max(rules.burst_floor_mibps, rules.burst_mibps_per_tib * stored_tib))
        return Rates(rate, rate)

    def network_storage(self, target: EfsTarget, clients: int) -> StorageSide:
        """The file system's rate, and at most EFS's per-client limit times the clients."""
        rules = load_catalog().efs
        if target.throughput_mode == "elastic":
            per_client = rules.elastic_per_client_max_mibps
            file_system = max(rules.elastic_max_read_mibps, rules.elastic_max_write_mibps)
        elif target.throughput_mode == "provisioned":
            assert target.provisioned_throughput_mibps is not None  # the request model requires it
            per_client, file_system = rules.per_client_max_mibps, target.provisioned_throughput_mibps
        else:  # bursting: the burst rate while credits last
            stored_tib = (target.storage_gib_hint or 0) / GIB_PER_TIB
            per_client = rules.per_client_max_mibps
            file_system = max(rules.burst_floor_mibps, rules.burst_mibps_per_tib * stored_tib)
        basis = self.report_text(target)[0]
        if per_client is not None and per_client * clients < file_system:
            limit = f"{clients} x {num(per_client)} MiB/s per client"
            return StorageSide(mibps=per_client * clients, basis=f"{basis}, {limit}")
        return StorageSide(mibps=file_system, basis=f"{basis}, {num(file_system)} MiB/s")

    def duration_notes(self, target: EfsTarget) -> tuple[str, ...]:
        if target.throughput_mode != "bursting":
            return ()
        return (
            "EFS bursting is estimated at its burst rate; once its credits run out it falls to its "
            "baseline (half the burst rate per TiB stored) and the run takes longer",
        )

    def agent_spec(self, target: EfsTarget, resources: Resources, region: str) -> TargetSpec:
        target_id = str(target.id)
        ref = recorded_file_system(resources, target_id)
        return {
            "id": target_id,
            "kind": "efs",
            "source": f"{ref.file_system_id}.efs.{region}.amazonaws.com:/",
            "fstype": "nfs4",
            "mount_options": target.mount_options,
        }

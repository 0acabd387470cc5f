"""Amazon EFS: a file system Provision creates, mounted over NFSv4.1 from the instance's subnet."""

from __future__ import annotations

import math

from storagebench.catalog.efs_envelope import EfsEnvelope, EfsRates, efs_envelope
from storagebench.catalog.network import StorageSide
from storagebench.core.numbers import num
from storagebench.core.state import Resources
from storagebench.kinds.base import Bill, EfsBill, Rates, StorageKind, recorded_file_system
from storagebench.protocol.plan import TargetSpec
from storagebench.request.model import EfsTarget

# CreateFileSystem makes an EFS file system available within seconds; the mount target in the
# instance's subnet takes about 90 s more (its network interface). Rounded up.
EFS_READY_S = 120.0


def _h(seconds: float | None) -> str:
    return "unlimited" if seconds is None else f"{seconds / 3600:.1f}"


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
        if target.storage_gib_hint is not None:
            text += f" · {num(target.storage_gib_hint)} GiB stored"
        return text, self._envelope(target).describe()

    def _envelope(self, target: EfsTarget) -> EfsEnvelope:
        return efs_envelope(
            target.throughput_mode, target.storage_gib_hint, target.provisioned_throughput_mibps
        )

    def envelope_text(self, target: EfsTarget, instance_type: str) -> str:
        return self._envelope(target).describe()

    def bill(self, target: EfsTarget, instance_type: str) -> Bill:
        return Bill(items=(EfsBill(target),))

    def rates(self, target: EfsTarget, instance_type: str) -> Rates:
        """One client's rates: the file system's (bursting: its burst rate while credits last, from
        the declared size) capped by what one client may drive."""
        envelope = self._envelope(target)
        client = envelope.client_max_mibps or math.inf
        return Rates(min(client, envelope.read_mibps), min(client, envelope.write_mibps))

    def network_storage(self, target: EfsTarget, clients: int) -> StorageSide:
        """The file system's rate (bursting: its burst rate while credits last, at the declared
        size), and at most EFS's per-client limit times the clients."""
        envelope = self._envelope(target)
        per_client = envelope.client_max_mibps
        file_system = max(envelope.read_mibps, envelope.write_mibps)
        basis = self.report_text(target)[0]
        if per_client is not None and per_client * clients < file_system:
            limit = f"{clients} x {num(per_client)} MiB/s per client"
            return StorageSide(mibps=per_client * clients, basis=f"{basis}, {limit}")
        return StorageSide(mibps=file_system, basis=f"{basis}, {num(file_system)} MiB/s")

    def duration_notes(self, target: EfsTarget) -> tuple[str, ...]:
        if target.throughput_mode != "bursting":
            return ()
        envelope = self._envelope(target)
        figures = envelope.declared or envelope.empty
        assert figures is not None  # bursting always has the empty file system's figures
        burst = (
            f" (~{figures.burst_seconds / 3600:.1f} h of a new file system's credits)"
            if figures.burst_seconds is not None
            else ""
        )
        return (
            f"EFS bursting is estimated at its burst rate, {figures.burst_mibps:,g} MiB/s{burst}; once its "
            f"credits run out it falls to its baseline, {figures.baseline_mibps:,g} MiB/s, and the run "
            "takes longer",
            *envelope.notes,
        )

    def credit_note(self, target: EfsTarget, busy_seconds: float) -> str | None:
        """The estimated workloads against a new file system's credits, at the declared size and as
        AWS meters it when created (empty: its data counts only once metered)."""
        envelope = self._envelope(target)
        if target.throughput_mode != "bursting" or busy_seconds <= 0 or envelope.empty is None:
            return None
        hours = busy_seconds / 3600

        def verdict(rates: EfsRates, what: str) -> str:
            if rates.burst_seconds is None or rates.burst_seconds >= busy_seconds:
                return f"{what}, the credits last (~{_h(rates.burst_seconds)} h)"
            return (
                f"{what}, they run out after ~{_h(rates.burst_seconds)} h and it falls to "
                f"{rates.baseline_mibps:,g} MiB/s"
            )

        parts = []
        if envelope.declared is not None:
            parts.append(verdict(envelope.declared, f"at the declared {envelope.declared.stored_gib:,g} GiB"))
        parts.append(verdict(envelope.empty, "as created (empty, until the data written is metered)"))
        return (
            f"{target.id}: the workloads keep this EFS busy for ~{hours:.1f} h at its burst rate: "
            + "; ".join(parts)
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

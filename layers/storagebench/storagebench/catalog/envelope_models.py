"""What the envelopes are: one EBS volume's (``VolumeEnvelope``), an instance type's EBS limits and
instance store (``InstanceLimits``), and a target's on an instance (``TargetEnvelope``), each able to
describe itself; with the MB -> MiB conversion and number format they share. ``catalog.envelope``
computes them from the catalog.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict

CreditUnit = Literal["io", "mib"]
BoundBy = Literal["volume", "instance", "network", "unknown-instance"]


_BYTES_PER_MB = 10**6
_BYTES_PER_MIB = 2**20


def mb_to_mib(mb: float) -> float:
    """MB (10^6 bytes, as AWS publishes instance EBS throughput) to MiB (2^20 bytes)."""
    return mb * _BYTES_PER_MB / _BYTES_PER_MIB


def fmt_number(value: float) -> str:
    """Thousands separators; one decimal only for small non-integral values."""
    if value >= 100 or abs(value - round(value)) < 0.05:
        return f"{value:,.0f}"
    return f"{value:,.1f}"


class FrozenModel(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class VolumeEnvelope(FrozenModel):
    """What one EBS volume delivers (combined read + write), per the catalog.

    ``baseline_*`` is sustained indefinitely. ``burst_*`` is the ceiling while credits last
    (None: the type or size does not burst). ``burst_seconds`` is how long a full bucket lasts at
    full burst demand; ``credit_capacity`` / ``credit_refill_per_s`` / ``credit_unit`` describe the
    bucket (``io``: gp2 I/O credits; ``mib``: st1/sc1 throughput credits in MiB).
    """

    volume_type: str
    size_gib: float
    provisioned_iops: int | None
    provisioned_mibps: float | None
    baseline_iops: float
    baseline_mibps: float
    burst_iops: float | None
    burst_mibps: float | None
    burst_seconds: float | None
    credit_capacity: float | None
    credit_refill_per_s: float | None
    credit_unit: CreditUnit | None
    io_size_kib: int
    notes: list[str]

    @property
    def bursts(self) -> bool:
        return (self.burst_iops is not None and self.burst_iops > self.baseline_iops) or (
            self.burst_mibps is not None and self.burst_mibps > self.baseline_mibps
        )

    def describe(self) -> str:
        """One line, e.g. ``gp2 100 GiB: 300 IOPS baseline, 3,000 burst for ~2,000 s, 75 MiB/s ...``."""
        parts = [f"{fmt_number(self.baseline_iops)} IOPS baseline"]
        if self.burst_iops is not None and self.burst_iops > self.baseline_iops:
            burst = f"{fmt_number(self.burst_iops)} burst"
            if self.credit_unit == "io" and self.burst_seconds is not None:
                burst += f" for ~{fmt_number(self.burst_seconds)} s"
            parts.append(burst)
        elif self.burst_iops is None and self.volume_type == "gp2":
            parts[0] += " (no burst)"
        throughput = f"{fmt_number(self.baseline_mibps)} MiB/s"
        if self.burst_mibps is not None and self.burst_mibps > self.baseline_mibps:
            throughput += f" ({fmt_number(self.burst_mibps)} MiB/s while bursting"
            if self.credit_unit == "mib" and self.burst_seconds is not None:
                throughput += f", ~{fmt_number(self.burst_seconds)} s"
            throughput += ")"
        parts.append(throughput)
        return f"{self.volume_type} {fmt_number(self.size_gib)} GiB: " + ", ".join(parts)


class InstanceStoreDevices(FrozenModel):
    count: int
    device_gib: float
    media: Literal["nvme", "ssd", "hdd"]


class InstanceLimits(FrozenModel):
    """An instance type's EBS limits, in MiB/s (converted from AWS's MB/s) and IOPS (16 KiB I/O)."""

    instance_type: str
    nitro: bool
    arch: Literal["x86_64", "arm64"]
    vcpus: int
    memory_gib: float
    baseline_mbps: float
    max_mbps: float
    baseline_mibps: float
    max_mibps: float
    baseline_iops: int
    max_iops: int
    burst_minutes_per_day: int | None
    ebs_optimized_by_default: bool
    instance_store: InstanceStoreDevices | None

    def describe(self) -> str:
        if self.baseline_mibps == self.max_mibps and self.baseline_iops == self.max_iops:
            ebs = f"EBS {fmt_number(self.max_mibps)} MiB/s, {fmt_number(self.max_iops)} IOPS"
        else:
            ebs = (
                f"EBS {fmt_number(self.baseline_mibps)} MiB/s / {fmt_number(self.baseline_iops)} IOPS "
                f"baseline, {fmt_number(self.max_mibps)} MiB/s / {fmt_number(self.max_iops)} IOPS maximum"
            )
            if self.burst_minutes_per_day:
                ebs += f" ({self.burst_minutes_per_day} min per 24 h)"
        line = f"{self.instance_type}: {ebs}"
        if self.instance_store is not None:
            store = self.instance_store
            line += f"; instance store {store.count} x {fmt_number(store.device_gib)} GiB {store.media}"
        if not self.nitro:
            line += "; Xen (non-Nitro)"
        return line


class TargetEnvelope(FrozenModel):
    """``count`` identical volumes (RAID0 when > 1) on an instance: expected and sustained ceilings.

    ``stripe_*`` is the volume side (member envelope x count, after per-volume caps that depend on
    the instance, such as io1/io2 on Xen). ``expected_*`` is a short run: volume burst if it bursts,
    instance maximum. ``sustained_*`` is a long run: volume baseline, instance baseline.
    """

    instance_type: str | None
    count: int
    volume: VolumeEnvelope
    instance: InstanceLimits | None
    stripe_baseline_iops: float
    stripe_baseline_mibps: float
    stripe_burst_iops: float | None
    stripe_burst_mibps: float | None
    expected_iops: float
    expected_mibps: float
    iops_bound_by: BoundBy
    mibps_bound_by: BoundBy
    sustained_iops: float
    sustained_mibps: float
    sustained_iops_bound_by: BoundBy
    sustained_mibps_bound_by: BoundBy
    notes: list[str]

    def describe(self) -> str:
        stripe = f"{self.count} x " if self.count > 1 else ""
        where = self.instance_type or "an unknown instance"
        line = (
            f"{stripe}{self.volume.volume_type} {fmt_number(self.volume.size_gib)} GiB on {where}: "
            f"{fmt_number(self.expected_iops)} IOPS ({self.iops_bound_by}-bound), "
            f"{fmt_number(self.expected_mibps)} MiB/s ({self.mibps_bound_by}-bound)"
        )
        if (self.sustained_iops, self.sustained_mibps) != (self.expected_iops, self.expected_mibps):
            line += (
                f"; sustained {fmt_number(self.sustained_iops)} IOPS ({self.sustained_iops_bound_by}-bound), "
                f"{fmt_number(self.sustained_mibps)} MiB/s ({self.sustained_mibps_bound_by}-bound)"
            )
        return line

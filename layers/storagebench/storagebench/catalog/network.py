"""Network ceilings: an instance type's network bandwidth, and what it caps of storage reached over it.

EBS has its own bandwidth per instance (``catalog.envelope``); everything else the client reaches
over its network interface: EFS, FSx for Lustre, an NFS or gateway share, a volume exported by a
topology's nodes (NVMe/TCP). For those the ceiling is min(what the storage could deliver, what the
client's network carries). AWS's figure holds for inbound and outbound traffic each, so the
comparison is per direction. ``up to`` sizes run at their baseline once their network I/O credits
are spent (best effort, 5-60 minutes): ``expected_*`` uses the burst, ``sustained_*`` the baseline,
as the EBS envelope does.

Pure functions over the bundled catalog; the only numbers here are unit conversions.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from storagebench.catalog.envelope import BoundBy, mb_to_mib
from storagebench.catalog.loader import instance_type as catalog_instance_type

__all__ = [
    "MB_PER_GBIT",
    "NetworkEnvelope",
    "NetworkLimits",
    "StorageSide",
    "network_envelope",
    "network_limits",
]

MB_PER_GBIT = 125.0
"""1 Gbps = 10^9 bit/s = 125 MB/s (10^6 bytes)."""


def _fmt(value: float) -> str:
    if value >= 100 or abs(value - round(value)) < 0.05:
        return f"{value:,.0f}"
    return f"{value:,.2f}".rstrip("0").rstrip(".")


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class NetworkLimits(_Frozen):
    """One instance type's network bandwidth, each way: Gbps as AWS publishes it, and in MB/s, MiB/s."""

    instance_type: str
    baseline_gbps: float
    burst_gbps: float
    source: str

    @property
    def baseline_mbps(self) -> float:
        return self.baseline_gbps * MB_PER_GBIT

    @property
    def burst_mbps(self) -> float:
        return self.burst_gbps * MB_PER_GBIT

    @property
    def baseline_mibps(self) -> float:
        return mb_to_mib(self.baseline_mbps)

    @property
    def burst_mibps(self) -> float:
        return mb_to_mib(self.burst_mbps)

    @property
    def bursts(self) -> bool:
        return self.burst_gbps > self.baseline_gbps

    def describe(self) -> str:
        """``r5b.24xlarge network 25 Gbps (3,125 MB/s, 2,980 MiB/s each way)``, with the burst if any."""
        line = (
            f"{self.instance_type} network {_fmt(self.baseline_gbps)} Gbps "
            f"({_fmt(self.baseline_mbps)} MB/s, {_fmt(self.baseline_mibps)} MiB/s each way"
        )
        if self.bursts:
            line += (
                f" baseline; {_fmt(self.burst_gbps)} Gbps, {_fmt(self.burst_mbps)} MB/s, "
                f"{_fmt(self.burst_mibps)} MiB/s burst on network credits"
            )
        return line + ")"


def network_limits(instance_type: str) -> NetworkLimits | None:
    """An instance type's network bandwidth, or None when the catalog does not know the type."""
    spec = catalog_instance_type(instance_type)
    if spec is None:
        return None
    return NetworkLimits(
        instance_type=instance_type,
        baseline_gbps=spec.network_baseline_gbps,
        burst_gbps=spec.network_burst_gbps,
        source=spec.network_source,
    )


class StorageSide(_Frozen):
    """What the storage could deliver to its clients, each way, before the clients' network.

    ``mibps`` / ``iops`` None: the catalog has no figure. ``basis`` says what sets them
    (``5 controller r5b.24xlarge: io2 4,000 MiB/s each, capped by their network 2,980``).
    """

    mibps: float | None
    iops: float | None = None
    basis: str


class NetworkEnvelope(_Frozen):
    """Storage reached over the clients' network: expected = min(storage, the clients' network).

    ``*_bound_by`` is ``volume`` when the storage sets the ceiling, ``network`` when the clients'
    network does, ``unknown-instance`` when the client type is not in the catalog. The network caps
    bytes, not operations, so ``expected_iops`` is the storage's figure (None: none in the catalog).
    """

    instance_type: str | None
    clients: int
    network: NetworkLimits | None
    storage: StorageSide
    expected_iops: float | None
    expected_mibps: float | None
    iops_bound_by: BoundBy
    mibps_bound_by: BoundBy
    sustained_iops: float | None
    sustained_mibps: float | None
    sustained_iops_bound_by: BoundBy
    sustained_mibps_bound_by: BoundBy
    notes: list[str]

    @property
    def network_bound(self) -> bool:
        """The clients' network caps below what the storage could deliver (sustained or burst)."""
        return "network" in (self.mibps_bound_by, self.sustained_mibps_bound_by)

    def client_mibps(self, sustained: bool) -> float | None:
        if self.network is None:
            return None
        per_client = self.network.baseline_mibps if sustained else self.network.burst_mibps
        return per_client * self.clients

    def ceiling_mibps(self, io_bytes: float | None, sustained: bool) -> tuple[float | None, BoundBy]:
        """The MiB/s ceiling at an average I/O size: the storage's IOPS x the I/O size, its MiB/s and
        the clients' network, whichever is lowest (None: nothing known)."""
        storage = self.storage.mibps
        if self.storage.iops is not None and io_bytes:
            by_iops = self.storage.iops * io_bytes / 2**20
            storage = by_iops if storage is None else min(storage, by_iops)
        return _min_bound(storage, self.client_mibps(sustained), self.network is not None)

    def describe(self) -> str:
        where = self.instance_type or "an unknown instance"
        clients = f"{self.clients} x " if self.clients > 1 else ""
        storage = f"{_fmt(self.storage.mibps)} MiB/s" if self.storage.mibps is not None else "an unknown rate"
        expected = "unknown" if self.expected_mibps is None else f"{_fmt(self.expected_mibps)} MiB/s"
        line = (
            f"over the network of {clients}{where}: {expected} ({_words(self.mibps_bound_by)}-bound); "
            f"storage {storage} ({self.storage.basis})"
        )
        if self.network is not None:
            line += f"; {self.network.describe()}"
        if self.sustained_mibps is not None and self.sustained_mibps != self.expected_mibps:
            bound = _words(self.sustained_mibps_bound_by)
            line += f"; sustained {_fmt(self.sustained_mibps)} MiB/s ({bound}-bound)"
        return line

    def warning(self, config_id: str) -> str | None:
        """What the dry run and validate say when the clients' network caps below the storage."""
        if not self.network_bound or self.network is None or self.storage.mibps is None:
            return None
        net = self.network
        clients = f"{self.clients} x " if self.clients > 1 else ""
        speeds = (
            f"{_fmt(net.baseline_gbps)} Gbps ({_fmt(net.baseline_mbps * self.clients)} MB/s, "
            f"{_fmt(net.baseline_mibps * self.clients)} MiB/s each way"
        )
        if net.bursts:
            speeds += (
                f" baseline; {_fmt(net.burst_gbps)} Gbps, {_fmt(net.burst_mbps * self.clients)} MB/s, "
                f"{_fmt(net.burst_mibps * self.clients)} MiB/s burst"
            )
        return (
            f"{config_id}: client {clients}{net.instance_type} network {speeds}) caps below what its "
            f"storage could deliver, {_fmt(self.storage.mibps)} MiB/s ({self.storage.basis}): results "
            "will be instance-bound: network"
        )


def _words(bound: BoundBy) -> str:
    """``volume`` reads ``storage`` here: EFS, FSx or a set of nodes, not one volume."""
    return "storage" if bound == "volume" else bound


def _min_bound(storage: float | None, network: float | None, known: bool) -> tuple[float | None, BoundBy]:
    if not known:
        return storage, "unknown-instance"
    if network is not None and (storage is None or network < storage):
        return network, "network"
    return storage, "volume"


def network_envelope(instance_type: str | None, storage: StorageSide, clients: int = 1) -> NetworkEnvelope:
    """The ceiling of storage reached over ``clients`` instances' network (their bandwidth adds up)."""
    if clients < 1:
        raise ValueError(f"clients must be at least 1, got {clients}")
    limits = network_limits(instance_type) if instance_type else None
    notes: list[str] = []
    if limits is None:
        notes.append(
            f"instance {instance_type!r} is not in the catalog: no network cap applied"
            if instance_type
            else "no instance given: no network cap applied"
        )
    elif limits.bursts:
        notes.append(
            f"{instance_type} bursts to {_fmt(limits.burst_gbps)} Gbps on network I/O credits (best effort, "
            f"5-60 min), then falls to {_fmt(limits.baseline_gbps)} Gbps"
        )
    known = limits is not None
    burst = None if limits is None else limits.burst_mibps * clients
    base = None if limits is None else limits.baseline_mibps * clients
    expected_mibps, by = _min_bound(storage.mibps, burst, known)
    sustained_mibps, s_by = _min_bound(storage.mibps, base, known)
    iops_by: BoundBy = "volume" if known else "unknown-instance"
    return NetworkEnvelope(
        instance_type=instance_type,
        clients=clients,
        network=limits,
        storage=storage,
        expected_iops=storage.iops,
        expected_mibps=expected_mibps,
        iops_bound_by=iops_by,
        mibps_bound_by=by,
        sustained_iops=storage.iops,
        sustained_mibps=sustained_mibps,
        sustained_iops_bound_by=iops_by,
        sustained_mibps_bound_by=s_by,
        notes=notes,
    )

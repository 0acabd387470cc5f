"""A config's targets as its clients reach them: the one place that decides each target's ceiling.

A target reached over the clients' network (EFS, FSx for Lustre, an NFS or gateway share: kinds
whose ``network_storage`` answers; a ``local`` directory of a config with ``nodes``, which the
nodes serve, such as an NVMe/TCP volume striped across controllers) is capped by
min(what the storage could deliver, the clients' network): ``catalog.network``. The others keep
their kind's own envelope (EBS: the volume and the instance's EBS limits). Validate, the dry run
and the report's delivery labels all read the ceiling from here, so they cannot disagree.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from storagebench.catalog.envelope import TargetEnvelope, volume_envelope
from storagebench.catalog.network import NetworkEnvelope, StorageSide, network_envelope, network_limits
from storagebench.kinds.registry import kind_of
from storagebench.request.model import Config, EbsTarget, NodeGroup, Target

__all__ = ["NetworkCheck", "network_checks", "node_storage", "storage_side", "target_ceiling"]


def _fmt(value: float) -> str:
    return f"{value:,.0f}"


def _group_side(group: NodeGroup) -> tuple[float | None, float | None, str]:
    """(MiB/s, IOPS, words) one node of the group can serve: its targets' catalog envelope on the
    node's type, capped by the node's network. Targets without catalog rates (instance store) leave
    the node's network as the only bound known."""
    if not group.targets:
        return 0.0, 0.0, f"{group.count} {group.role} {group.instance_type}: no storage"
    storage: float | None = 0.0
    iops: float | None = 0.0
    described: list[str] = []
    for target in group.targets:
        envelope = kind_of(target).envelope(target, group.instance_type)
        if envelope is None or envelope.expected_mibps is None:
            storage = iops = None
            described.append(f"{target.kind} (rate not in the catalog: at most the node's network)")
            continue
        if storage is not None:
            storage += envelope.expected_mibps
        if iops is not None:
            iops = None if envelope.expected_iops is None else iops + envelope.expected_iops
        described.append(f"{target.kind} {_fmt(envelope.expected_mibps)} MiB/s")
    network = network_limits(group.instance_type)
    words = f"{group.count} {group.role} {group.instance_type}: " + " + ".join(described)
    if network is None:
        return storage, iops, words + ", network not in the catalog"
    words += f", network {_fmt(network.baseline_mibps)} MiB/s each"
    if storage is None or network.baseline_mibps < storage:
        return network.baseline_mibps, iops, words
    return storage, iops, words


def _shared_cap(group: NodeGroup) -> tuple[float, float, str] | None:
    """A group whose nodes share Multi-Attach volumes serves no more than the volumes themselves:
    (MiB/s, IOPS, words) of the shared volumes once plus each node's own, or None without any."""
    shared = [t for t in group.targets if isinstance(t, EbsTarget) and t.multi_attach]
    if not shared:
        return None
    mibps = iops = 0.0
    for volume_target in shared:
        volume = volume_envelope(
            volume_target.type, volume_target.size_gib, volume_target.iops, volume_target.throughput_mibps
        )
        mibps += volume.baseline_mibps * volume_target.count
        iops += volume.baseline_iops * volume_target.count
    words = f"shared Multi-Attach volumes {_fmt(mibps)} MiB/s, {_fmt(iops)} IOPS in all"
    for target in group.targets:
        if kind_of(target).shared_by_nodes(target):
            continue
        envelope = kind_of(target).envelope(target, group.instance_type)
        if envelope is None or envelope.expected_mibps is None or envelope.expected_iops is None:
            return None  # a node's own target without rates: the cap is unknown
        mibps += envelope.expected_mibps * group.count
        iops += envelope.expected_iops * group.count
    return mibps, iops, words


def node_storage(config: Config) -> StorageSide:
    """What a config's nodes together can serve its clients: per node min(its storage, its network),
    and a group sharing Multi-Attach volumes no more than those volumes deliver once."""
    total: float | None = 0.0
    iops: float | None = 0.0
    parts: list[str] = []
    for group in config.nodes:
        mibps, group_iops, words = _group_side(group)
        group_mibps = None if mibps is None else mibps * group.count
        group_total_iops = None if group_iops is None else group_iops * group.count
        cap = _shared_cap(group)
        if cap is not None:
            words += f"; {cap[2]}"
            group_mibps = cap[0] if group_mibps is None else min(group_mibps, cap[0])
            group_total_iops = cap[1] if group_total_iops is None else min(group_total_iops, cap[1])
        parts.append(words)
        total = None if total is None or group_mibps is None else total + group_mibps
        iops = None if iops is None or group_total_iops is None else iops + group_total_iops
    if not any(group.targets for group in config.nodes):
        # Nodes that declare no storage serve from somewhere the request does not say (a root
        # volume, a file): their rate is unknown, not 0 MiB/s.
        return StorageSide(mibps=None, basis="; ".join(parts) + ": no node declares a storage target")
    return StorageSide(mibps=total, iops=iops or None, basis="; ".join(parts))


def storage_side(config: Config, target: Target) -> StorageSide | None:
    """What the storage behind ``target`` could deliver over the network; None when the target is not
    reached over the clients' network (EBS, instance store, a directory of a config without nodes)."""
    side = kind_of(target).network_storage(target, config.clients)
    if side is not None:
        return side
    if target.kind == "local" and config.nodes:
        return node_storage(config)
    return None


def target_ceiling(config: Config, target: Target) -> TargetEnvelope | NetworkEnvelope | None:
    """The ceiling a saturating workload on ``target`` is held to (None: the catalog has none)."""
    side = storage_side(config, target)
    if side is None:
        return kind_of(target).envelope(target, config.instance_type)
    return network_envelope(config.instance_type, side, config.clients)


class NetworkCheck(BaseModel):
    """A target reached over the clients' network, before launch: its ceiling and, when the clients'
    network caps below the storage, the warning."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    config_id: str
    target_id: str
    client: str = Field(description="the clients' instance type")
    client_baseline_gbps: float | None = Field(description="each way; None: type not in the catalog")
    client_burst_gbps: float | None
    ceiling: str = Field(description="the envelope in words (storage, network, which binds)")
    warning: str | None = Field(description="set when the clients' network caps below the storage")


def network_checks(config: Config) -> list[NetworkCheck]:
    """One check per target of ``config`` reached over the clients' network."""
    checks: list[NetworkCheck] = []
    for target in config.targets:
        side = storage_side(config, target)
        if side is None:
            continue
        envelope = network_envelope(config.instance_type, side, config.clients)
        net = envelope.network
        checks.append(
            NetworkCheck(
                config_id=config.id,
                target_id=str(target.id),
                client=config.instance_type,
                client_baseline_gbps=None if net is None else net.baseline_gbps,
                client_burst_gbps=None if net is None else net.burst_gbps,
                ceiling=f"{config.id}/{target.id}: {envelope.describe()}",
                warning=envelope.warning(config.id),
            )
        )
    return checks

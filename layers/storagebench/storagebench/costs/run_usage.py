"""What a run used, as plain numbers ``costs.run_cost`` prices: per config its instances', volumes',
file systems' and gateway's seconds (``ConfigUsage``, from a config and how long it ran:
``usage_for_config``), and Lambda's invocations (``LambdaUsage``). ``costs.run_cost`` re-exports
these names.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from storagebench.catalog.images import operating_system
from storagebench.core.clock import parse_iso
from storagebench.costs.monthly import ROOT_TARGET_ID
from storagebench.kinds import kind_of
from storagebench.kinds.base import EbsVolumeBill, InstanceBill
from storagebench.prices.spot import SpotCharge
from storagebench.request.model import Config, EfsTarget, FsxLustreTarget, RootVolume


@dataclass(frozen=True)
class VolumeUsage:
    """One EBS volume (root or a stripe member) and how long it existed."""

    volume_type: str
    size_gib: float
    seconds: float
    iops: int | None = None
    throughput_mibps: float | None = None
    target_id: str = ROOT_TARGET_ID
    member: int | None = None


@dataclass(frozen=True)
class FileSystemUsage:
    """One EFS or FSx for Lustre file system: the target as requested and how long it existed.

    ``stored_gib`` is EFS's data stored (None: the target's ``storage_gib_hint``); FSx bills its
    capacity. ``read_gb`` / ``written_gb`` are EFS Elastic bytes moved (GB, as AWS bills them).
    """

    target: EfsTarget | FsxLustreTarget
    seconds: float
    stored_gib: float | None = None
    read_gb: float = 0.0
    written_gb: float = 0.0


@dataclass(frozen=True)
class GatewayUsage:
    """A File Gateway appliance instance and how long it ran (its disks are :class:`VolumeUsage`)."""

    target_id: str
    instance_type: str
    seconds: float


@dataclass(frozen=True)
class ConfigUsage:
    config_id: str
    instance_type: str
    instance_seconds: float
    volumes: Sequence[VolumeUsage] = ()
    file_systems: Sequence[FileSystemUsage] = ()
    gateways: Sequence[GatewayUsage] = ()
    operating_system: str = "Linux"
    ebs_optimized: bool = False  # launched EBS-optimized where that is optional (a fee)
    spot: SpotCharge | None = None  # a Spot instance: what it paid (None: priced on-demand)


@dataclass(frozen=True)
class LambdaUsage:
    """One function's share of the run: ``invocations`` x ``memory_mb`` x ``avg_duration_ms``."""

    function: str
    invocations: int
    memory_mb: int
    avg_duration_ms: float
    architecture: Literal["x86_64", "arm64"] = "x86_64"


def seconds_between(start: str, end: str) -> float:
    """Seconds from one ISO timestamp to another (e.g. resources.launched_at to the cleanup time)."""
    delta = (parse_iso(end) - parse_iso(start)).total_seconds()
    if delta < 0:
        raise ValueError(f"{end} is before {start}")
    return delta


def usage_for_config(
    config: Config,
    seconds: float,
    *,
    file_system_seconds: float | None = None,
    efs_stored_gib: Mapping[str, float] | None = None,
    efs_transfer_gb: Mapping[str, tuple[float, float]] | None = None,
) -> ConfigUsage:
    """A config's usage when everything lived ``seconds`` (file systems: ``file_system_seconds``).

    ``efs_stored_gib`` and ``efs_transfer_gb`` ((read, written) GB) are per EFS target id.
    """
    volumes = [_root_usage(config.root_volume, seconds)]
    file_systems: list[FileSystemUsage] = []
    gateways: list[GatewayUsage] = []
    fs_seconds = seconds if file_system_seconds is None else file_system_seconds
    for target in config.targets:
        for item in kind_of(target).bill(target, config.instance_type).items:
            if isinstance(item, InstanceBill):
                gateways.append(GatewayUsage(item.target_id, item.instance_type, seconds))
            elif isinstance(item, EbsVolumeBill):
                volumes.append(_volume_usage(item, seconds))
            else:
                tid = str(item.target.id)
                read, written = (efs_transfer_gb or {}).get(tid, (0.0, 0.0))
                file_systems.append(
                    FileSystemUsage(
                        target=item.target,
                        seconds=fs_seconds,
                        stored_gib=(efs_stored_gib or {}).get(tid),
                        read_gb=read,
                        written_gb=written,
                    )
                )
    return ConfigUsage(
        config_id=config.id,
        instance_type=config.instance_type,
        instance_seconds=seconds,
        volumes=volumes,
        file_systems=file_systems,
        gateways=gateways,
        operating_system=operating_system(config.image),
        ebs_optimized=bool(config.launch_ebs_optimized),
    )


def other_machine_usages(config: Config, seconds: float) -> list[ConfigUsage]:
    """The config's other machines for ``seconds`` each (they live as long as the config): every
    extra client with its root volume (the shared targets are the primary's usage), every node with
    its root and data volumes; on-demand, as multi-machine configs are bought."""
    usages: list[ConfigUsage] = []
    client_root = _root_usage(config.root_volume, seconds)
    for _ in range(1, config.clients):
        usages.append(
            ConfigUsage(
                config_id=config.id,
                instance_type=config.instance_type,
                instance_seconds=seconds,
                volumes=[client_root],
                operating_system=operating_system(config.image),
                ebs_optimized=bool(config.launch_ebs_optimized),
            )
        )
    for group in config.nodes:
        volumes = [_root_usage(group.root_volume, seconds)]
        shared: list[VolumeUsage] = []  # Multi-Attach volumes: one for the group, on its first node
        for target in group.targets:
            for item in kind_of(target).bill(target, group.instance_type).items:
                if isinstance(item, EbsVolumeBill):
                    usage = _volume_usage(item, seconds, prefix=f"{group.role}:")
                    (shared if kind_of(target).shared_by_nodes(target) else volumes).append(usage)
        usages += [
            ConfigUsage(
                config_id=config.id,
                instance_type=group.instance_type,
                instance_seconds=seconds,
                volumes=volumes + (shared if index == 0 else []),
                operating_system=operating_system(group.image),
                ebs_optimized=bool(group.launch_ebs_optimized),
            )
            for index in range(group.count)
        ]
    return usages


def _volume_usage(item: EbsVolumeBill, seconds: float, prefix: str = "") -> VolumeUsage:
    """A billed data volume for ``seconds`` (``prefix``: a node's ``<role>:``)."""
    return VolumeUsage(
        volume_type=item.volume_type,
        size_gib=item.size_gib,
        seconds=seconds,
        iops=item.iops,
        throughput_mibps=item.throughput_mibps,
        target_id=f"{prefix}{item.target_id}",
        member=item.member,
    )


def _root_usage(root: RootVolume, seconds: float) -> VolumeUsage:
    return VolumeUsage(
        volume_type=root.type,
        size_gib=root.size_gib,
        seconds=seconds,
        iops=root.iops,
        throughput_mibps=root.throughput_mibps,
    )

"""EBS volumes attached to the config's instance: one, or several striped (RAID0) or side by side (jbod)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Literal

from storagebench.catalog.envelope import TargetEnvelope, volume_envelope
from storagebench.catalog.loader import ebs_volume_type
from storagebench.core.errors import NotYetConsistentError
from storagebench.core.numbers import num
from storagebench.core.state import LaunchVolume, Resources
from storagebench.kinds.base import GIB_PER_TIB, MIB, Bill, EbsVolumeBill, Initialisation, Rates, StorageKind
from storagebench.protocol.plan import TargetSpec
from storagebench.protocol.sample_layout import PASSES, sample_layout
from storagebench.request.model import EbsTarget
from storagebench.workloads.profile import TargetContext

DD_START_S = 0.01  # fork + exec of one dd of the cold-read check, its summary written


def disk_spec(target: EbsTarget) -> TargetSpec:
    """What the agent does with the target's devices, on AWS and on emulated volumes alike."""
    spec: TargetSpec = {
        "id": str(target.id),
        "kind": "ebs",
        "filesystem": target.filesystem,
        "count": target.count,
        "layout": target.layout,
        "prepare": target.prepare,
    }
    if target.mount_options:
        spec["mount_options"] = target.mount_options
    if target.raid_chunk_kib:
        spec["raid_chunk_kib"] = target.raid_chunk_kib
    return spec


class Ebs(StorageKind[EbsTarget]):
    name = "ebs"
    prewarmed = True

    def option_key(self, target: EbsTarget) -> str:
        parts = [f"ebs:{target.type}:{target.size_gib}GiB"]
        if target.iops:
            parts.append(f"{target.iops}iops")
        if target.throughput_mibps:
            parts.append(f"{target.throughput_mibps}MiBps")
        if target.count > 1:
            parts.append(f"x{target.count}{target.layout}")
        parts.append(target.filesystem)
        if target.multi_attach:
            parts.append("multi-attach")
        return ":".join(parts)

    def report_text(self, target: EbsTarget) -> tuple[str, str]:
        text = f"{target.type} {target.size_gib:,} GiB"
        detail = text
        try:
            envelope = volume_envelope(target.type, target.size_gib, target.iops, target.throughput_mibps)
        except (ValueError, KeyError):
            envelope = None
        if envelope is not None:
            detail = envelope.describe()
            if target.type in ("gp3", "io1", "io2"):
                text += f" · {num(envelope.baseline_iops)} IOPS"
                if target.type == "gp3":
                    text += f" · {num(envelope.baseline_mibps)} MiB/s"
            elif target.type == "gp2":
                text += f" · {num(envelope.baseline_iops)} IOPS"
                if envelope.burst_iops and envelope.burst_iops > envelope.baseline_iops:
                    text += f" (burst {num(envelope.burst_iops)})"
            elif target.type in ("st1", "sc1"):
                text += f" · {num(envelope.baseline_mibps)} MiB/s"
                if envelope.burst_mibps and envelope.burst_mibps > envelope.baseline_mibps:
                    text += f" (burst {num(envelope.burst_mibps)})"
        if target.count > 1:
            text = f"{target.count} x {text} {target.layout.upper()}"
            detail = f"{target.count} x ({detail}), {target.layout}"
        return f"{text} · {target.filesystem}", detail

    def preview_text(self, target: EbsTarget) -> str:
        return f"{self.name} {target.type}"

    def bill(self, target: EbsTarget, instance_type: str) -> Bill:
        return Bill(
            items=tuple(
                EbsVolumeBill(
                    target_id=str(target.id),
                    volume_type=target.type,
                    size_gib=target.size_gib,
                    iops=target.iops,
                    throughput_mibps=target.throughput_mibps,
                    member=member if target.count > 1 else None,
                )
                for member in range(target.count)
            )
        )

    def envelope(self, target: EbsTarget, instance_type: str) -> TargetEnvelope:
        return target.envelope(instance_type)

    def context(
        self, target: EbsTarget, instance_type: str, mode: Literal["raw", "filesystem"]
    ) -> TargetContext:
        envelope = target.envelope(instance_type)
        media: Literal["ssd", "hdd"] = "hdd" if ebs_volume_type(target.type).media != "ssd" else "ssd"
        return TargetContext(
            mode=mode, media=media, expected_iops=envelope.expected_iops, devices=target.count
        )

    def rates(self, target: EbsTarget, instance_type: str) -> Rates:
        envelope = target.envelope(instance_type)
        return Rates(
            envelope.sustained_mibps,
            envelope.sustained_mibps,
            envelope.sustained_iops,
            envelope.volume.io_size_kib,
        )

    def bursts(self, target: EbsTarget) -> bool:
        envelope = volume_envelope(target.type, target.size_gib, target.iops, target.throughput_mibps)
        return envelope.burst_iops is not None

    def initialisation(self, target: EbsTarget) -> Initialisation:
        """AWS: empty volumes need no initialisation; volumes created from a snapshot (or copies:
        not something a request creates) fetch their blocks lazily, unless AWS initialises them at
        their Provisioned Rate for Volume Initialization."""
        if target.snapshot_id is None:
            return "none"
        return "provisioned-rate" if target.initialization_rate_mibps is not None else "read"

    def cold_read_seconds(
        self, target: EbsTarget, instance_type: str, sample_bytes: int, extents: int, block_bytes: int
    ) -> float:
        """Both passes of the check over every member (read at once) at the target's read rate, plus
        one dd start per extent and pass."""
        layout = sample_layout(target.size_gib * GIB_PER_TIB * MIB, sample_bytes, extents, block_bytes)
        per_volume = sum(count for _, count in layout) * block_bytes
        rate = self.rates(target, instance_type).mibps("read", block_bytes)
        read_s = len(PASSES) * per_volume * target.count / MIB / rate
        return read_s + len(PASSES) * len(layout) * DD_START_S

    def prewarm_seconds(
        self, target: EbsTarget, instance_type: str, block_bytes: int, notes: list[str]
    ) -> float:
        rate = self.rates(target, instance_type).mibps("read", block_bytes)
        if target.snapshot_id is not None:
            if target.initialization_rate_mibps is not None:
                rate = min(rate, target.initialization_rate_mibps * target.count)
            else:
                notes.append(
                    f"prewarm of {target.id}: restored from {target.snapshot_id} without a provisioned "
                    "initialization rate; its blocks come from S3 lazily and may read slower than estimated"
                )
        return target.size_gib * target.count * GIB_PER_TIB / rate

    def shared_by_nodes(self, target: EbsTarget) -> bool:
        return target.multi_attach

    def launch_volumes(self, target: EbsTarget, devices: Iterator[str]) -> list[LaunchVolume]:
        return [
            LaunchVolume(
                target_id=str(target.id),
                member=member,
                device_name=next(devices),
                volume_type=target.type,
                size_gib=target.size_gib,
                iops=target.iops,
                throughput_mibps=target.throughput_mibps,
                encrypted=target.encrypted,
                snapshot_id=target.snapshot_id,
                initialization_rate_mibps=target.initialization_rate_mibps,
                share_token=f"{target.id}/{member}" if target.multi_attach else None,
            )
            for member in range(target.count)
        ]

    def agent_spec(self, target: EbsTarget, resources: Resources, region: str) -> TargetSpec:
        target_id = str(target.id)
        members = sorted((v for v in resources.volumes if v.target_id == target_id), key=lambda v: v.member)
        if len(members) != target.count or any(v.volume_id is None for v in members):
            raise NotYetConsistentError(f"volumes of target {target_id} are not all attached yet")
        spec = disk_spec(target)
        spec["volume_ids"] = [str(v.volume_id) for v in members]
        spec["device_names"] = [v.device_name for v in members]
        spec["allow_destroy"] = target.allow_destroy
        spec["volume"] = {
            "type": target.type,
            "size_gib": target.size_gib,
            "iops": target.iops,
            "throughput_mibps": target.throughput_mibps,
        }
        return spec

    def local_spec(self, target: EbsTarget, emulate_ebs: Callable[[EbsTarget], TargetSpec]) -> TargetSpec:
        return emulate_ebs(target)

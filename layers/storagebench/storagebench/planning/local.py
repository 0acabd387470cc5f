"""Bind a config's targets to this machine: emulated EBS volumes and directories.

An EBS target becomes loop devices held to the volume type's envelope, one per volume, each
carrying the type's per-I/O service time (catalog ``latency``) for the agent's twin.
A RAID0 stripe needs the kernel's md driver; where the kernel has none (containers, some
sandboxes) the stripe is emulated as one device carrying the summed envelope (what RAID0
delivers when it scales perfectly) and the members' service time (striping adds rate, not
speed), and labelled so. Kinds that need AWS (EFS, FSx, NFS servers, instance store) cannot
be emulated and are refused with the reason.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from storagebench.catalog.envelope import emulation_latency, emulation_limits, volume_envelope
from storagebench.kinds import kind_of
from storagebench.kinds.ebs import disk_spec
from storagebench.protocol.plan import Emulation, EmulationLimits, TargetSpec
from storagebench.request.model import Config, EbsTarget

GIB = 1 << 30
XFS_MINIMUM = 320 << 20


class LocalTargetError(ValueError):
    """A target this machine cannot stand in for."""


@dataclass(frozen=True)
class LocalOptions:
    capacity_bytes: int = GIB  # of each emulated volume (sparse; pre-warm reads all of it)
    knee_seconds: float = 60.0  # when a full gp2/st1/sc1 bucket empties at full burst demand
    can_stripe: bool = Path("/proc/mdstat").exists()
    emulator: str = "auto"  # agent.emulate.EMULATORS: the EBS twin where it works, else the throttle
    # The compiled EBS twin this machine provides (local sessions fill it in where make setup
    # built it); None: twins run on the Python data path, labelled so in the manifest.
    twin_program: str | None = None
    # protocol.plan.CPU_WAKE: whether the agent keeps the CPUs awake while twins serve ("hold")
    cpu_wake: str = "hold"


def _summed(limits: EmulationLimits, count: int) -> EmulationLimits:
    """A perfect RAID0 stripe: every rate and every bucket times the member count."""
    summed = EmulationLimits(**limits)
    summed["iops"] = limits["iops"] * count
    summed["mibps"] = limits["mibps"] * count
    for key in ("burst_iops", "burst_mibps", "credit_capacity", "credit_refill_per_s"):
        value = limits.get(key)
        if isinstance(value, int | float):
            summed[key] = value * count
    return summed


def emulated_ebs(target: EbsTarget, options: LocalOptions) -> TargetSpec:
    envelope = volume_envelope(target.type, target.size_gib, target.iops, target.throughput_mibps)
    limits = emulation_limits(envelope, knee_seconds=options.knee_seconds)
    latency = emulation_latency(target.type)
    capacity = min(options.capacity_bytes, target.size_gib * GIB)
    if target.filesystem == "xfs":
        capacity = max(capacity, XFS_MINIMUM)  # mkfs.xfs refuses smaller devices
    one: Emulation = {
        "volume_type": target.type,
        "size_gib": float(target.size_gib),
        "capacity_bytes": capacity,
        "limits": limits,
        "latency": latency,
        "emulator": options.emulator,
    }
    if options.twin_program:
        one["twin_program"] = options.twin_program
    if options.cpu_wake != "hold":  # the default is left out: plans read as before
        one["cpu_wake"] = options.cpu_wake
    spec = disk_spec(target)
    if target.count > 1 and target.layout == "raid0" and not options.can_stripe:
        merged: Emulation = {
            "volume_type": f"{target.type}x{target.count}-raid0-summed",
            "size_gib": float(target.size_gib * target.count),
            "capacity_bytes": capacity * target.count,
            "limits": _summed(limits, target.count),
            "latency": latency,  # each I/O still lands on one member: same service time
            "emulator": options.emulator,
        }
        if options.twin_program:
            merged["twin_program"] = options.twin_program
        if options.cpu_wake != "hold":
            merged["cpu_wake"] = options.cpu_wake
        spec["emulate"] = [merged]
        spec["count"] = 1
    else:
        spec["emulate"] = [one] * target.count
    return spec


def local_targets(config: Config, options: LocalOptions | None = None) -> list[TargetSpec]:
    options = options or LocalOptions()
    specs: list[TargetSpec] = []
    for position, target in enumerate(config.targets):
        spec = kind_of(target).local_spec(target, lambda ebs: emulated_ebs(ebs, options))
        if spec is None:
            raise LocalTargetError(
                f"config {config.id}, targets[{position}] ({target.kind}): needs AWS and cannot be emulated "
                "on this machine; run it against a deployed stack, or use an ebs or local target locally"
            )
        specs.append(spec)
    return specs

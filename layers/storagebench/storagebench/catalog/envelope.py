"""Performance envelopes: what an EBS volume, a RAID0 stripe of them, and an instance should deliver.

Pure functions over the bundled catalog (``catalog.json``); every number comes from there, none is
hard-coded here except unit conversions; the envelopes themselves (the models, each describing
itself) are ``catalog.envelope_models``. Three layers:

- :func:`volume_envelope`: one volume, from its type, size and provisioned IOPS/throughput:
  baseline, burst, credit bucket (gp2 I/O credits, st1/sc1 throughput credits).
- :func:`instance_limits`: an instance type's EBS limits in MiB/s (AWS publishes MB/s) and IOPS.
- :func:`target_envelope`: ``count`` identical volumes striped with RAID0 (IOPS and MiB/s add up)
  capped by the instance. Two readings are given: ``expected_*`` for a short run (volume burst,
  instance maximum) and ``sustained_*`` for a long one (volume baseline, instance baseline; burstable
  instances reach their maximum only 30 minutes per 24 hours). Each says what bounds it, so a result
  that hits the instance limit rather than the volume limit can say so.

:func:`emulation_limits` turns a volume envelope into the ceilings of a loop-device emulation
(``storagebench.protocol.plan.EmulationLimits``), with the credit bucket scaled down in time;
:func:`emulation_latency` gives the emulation the volume type's per-I/O service time.
"""

from __future__ import annotations

from typing import Any

from storagebench.catalog.envelope_models import (
    BoundBy,
    CreditUnit,
    InstanceLimits,
    InstanceStoreDevices,
    TargetEnvelope,
    VolumeEnvelope,
    mb_to_mib,
)
from storagebench.catalog.envelope_models import fmt_number as _fmt
from storagebench.catalog.loader import ebs_volume_type
from storagebench.catalog.loader import instance_type as catalog_instance_type
from storagebench.catalog.models import EbsVolumeType, SizeTier
from storagebench.protocol.plan import EmulationLimits

__all__ = [
    "BoundBy",
    "CreditUnit",
    "InstanceLimits",
    "InstanceStoreDevices",
    "TargetEnvelope",
    "VolumeEnvelope",
    "credit_drain",
    "emulation_latency",
    "emulation_limits",
    "instance_limits",
    "mb_to_mib",
    "target_envelope",
    "volume_envelope",
]


_GIB_PER_TIB = 1024
_KIB_PER_MIB = 1024


# --- volumes ---------------------------------------------------------------------------------


def volume_envelope(
    volume_type: str,
    size_gib: float,
    iops: int | None = None,
    throughput_mibps: float | None = None,
) -> VolumeEnvelope:
    """The envelope of one EBS volume.

    Raises KeyError for an unknown volume type and ValueError for a configuration AWS would
    refuse (size out of range, IOPS or throughput out of range or above the per-GiB / per-IOPS
    ratio, IOPS missing for io1/io2, IOPS or throughput given for a type that does not take them).
    """
    spec = ebs_volume_type(volume_type)
    if not spec.size_gib.min <= size_gib <= spec.size_gib.max:
        raise ValueError(
            f"{volume_type} size must be {_fmt(spec.size_gib.min)}-{_fmt(spec.size_gib.max)} GiB, "
            f"got {_fmt(size_gib)}"
        )
    if iops is not None and spec.iops is None:
        raise ValueError(f"{volume_type} does not take provisioned IOPS")
    if throughput_mibps is not None and spec.throughput_mibps is None:
        raise ValueError(f"{volume_type} does not take provisioned throughput")
    if spec.gp2_burst is not None:
        return _gp2(volume_type, spec, size_gib)
    if spec.throughput_credits is not None:
        return _hdd(volume_type, spec, size_gib)
    if spec.iops is not None:
        return _provisioned(volume_type, spec, size_gib, iops, throughput_mibps)
    return _magnetic(volume_type, spec, size_gib)


def _need(value: float | None, what: str) -> float:
    if value is None:
        raise ValueError(f"catalog is missing {what}")
    return value


def _size_tier(tiers: list[SizeTier], size_gib: float) -> SizeTier:
    """The first tier whose inclusive bound covers the size (EBS sizes are whole GiB)."""
    for tier in tiers:
        if tier.up_to_gib is None or size_gib <= tier.up_to_gib:
            return tier
    raise ValueError(f"no size tier covers {size_gib} GiB")


def _gp2(volume_type: str, spec: EbsVolumeType, size_gib: float) -> VolumeEnvelope:
    burst = spec.gp2_burst
    assert burst is not None
    per_gib = _need(spec.baseline_iops_per_gib, f"{volume_type}.baseline_iops_per_gib")
    floor = _need(spec.baseline_iops_min, f"{volume_type}.baseline_iops_min")
    io_mib = spec.io_size_kib / _KIB_PER_MIB
    baseline_iops = min(spec.max_iops, max(floor, per_gib * size_gib))
    tier = _size_tier(_need_tiers(spec, volume_type), size_gib)
    # Without credits IOPS fall to baseline, so throughput is also capped at baseline IOPS x the
    # largest I/O (100 GiB: 300 x 256 KiB = 75 MiB/s), besides the size tier.
    baseline_mibps = min(tier.value, baseline_iops * io_mib, spec.max_mibps)
    notes: list[str] = []
    if size_gib < burst.no_burst_from_gib and baseline_iops < burst.burst_iops:
        burst_iops = float(burst.burst_iops)
        tier_burst = tier.burst_value if tier.burst_value is not None else tier.value
        burst_mibps = min(tier_burst, burst_iops * io_mib, burst.burst_mibps)
        burst_seconds = burst.credit_capacity / (burst_iops - baseline_iops)
        notes.append(
            f"I/O credit bucket of {_fmt(burst.credit_capacity)} credits starts full and refills at the "
            f"baseline ({_fmt(baseline_iops)} credits/s); burst lasts ~{_fmt(burst_seconds)} s at "
            f"{_fmt(burst_iops)} IOPS, then the volume falls to its baseline"
        )
        if baseline_mibps < burst_mibps:
            notes.append(
                f"throughput {_fmt(burst_mibps)} MiB/s only while credits last, "
                f"{_fmt(baseline_mibps)} MiB/s after"
            )
        return VolumeEnvelope(
            volume_type=volume_type,
            size_gib=size_gib,
            provisioned_iops=None,
            provisioned_mibps=None,
            baseline_iops=baseline_iops,
            baseline_mibps=baseline_mibps,
            burst_iops=burst_iops,
            burst_mibps=burst_mibps,
            burst_seconds=burst_seconds,
            credit_capacity=burst.credit_capacity,
            credit_refill_per_s=baseline_iops,
            credit_unit="io",
            io_size_kib=spec.io_size_kib,
            notes=notes,
        )
    notes.append(f"baseline {_fmt(baseline_iops)} IOPS is at or above the burst level: no credits, no burst")
    return _steady(volume_type, spec, size_gib, iops=baseline_iops, mibps=baseline_mibps, notes=notes)


def _need_tiers(spec: EbsVolumeType, volume_type: str) -> list[SizeTier]:
    if not spec.mibps_by_size:
        raise ValueError(f"catalog is missing {volume_type}.mibps_by_size")
    return spec.mibps_by_size


def _hdd(volume_type: str, spec: EbsVolumeType, size_gib: float) -> VolumeEnvelope:
    credits = spec.throughput_credits
    assert credits is not None
    size_tib = size_gib / _GIB_PER_TIB
    io_mib = spec.io_size_kib / _KIB_PER_MIB
    baseline_mibps = min(credits.max_mibps, credits.baseline_mibps_per_tib * size_tib)
    burst_mibps = min(credits.max_mibps, credits.burst_mibps_per_tib * size_tib)
    # Every I/O up to the I/O size costs a full credit: random small I/O is capped at MiB/s / 1 MiB.
    baseline_iops = min(spec.max_iops, baseline_mibps / io_mib)
    notes = [
        f"IOPS counted as {spec.io_size_kib} KiB I/O: each smaller random I/O costs a full "
        f"{spec.io_size_kib} KiB credit; sequential I/O merges"
    ]
    if burst_mibps <= baseline_mibps:
        notes.append("baseline throughput reaches the burst level: no credits, no burst")
        return _steady(volume_type, spec, size_gib, iops=baseline_iops, mibps=baseline_mibps, notes=notes)
    capacity = credits.bucket_mib_per_tib * size_tib
    burst_seconds = capacity / (burst_mibps - baseline_mibps)
    notes.append(
        f"throughput credit bucket of {_fmt(capacity)} MiB (1 TiB per TiB of size) refills at "
        f"{_fmt(baseline_mibps)} MiB/s; full burst lasts ~{_fmt(burst_seconds)} s"
    )
    return VolumeEnvelope(
        volume_type=volume_type,
        size_gib=size_gib,
        provisioned_iops=None,
        provisioned_mibps=None,
        baseline_iops=baseline_iops,
        baseline_mibps=baseline_mibps,
        burst_iops=min(spec.max_iops, burst_mibps / io_mib),
        burst_mibps=burst_mibps,
        burst_seconds=burst_seconds,
        credit_capacity=capacity,
        credit_refill_per_s=baseline_mibps,
        credit_unit="mib",
        io_size_kib=spec.io_size_kib,
        notes=notes,
    )


def _provisioned(
    volume_type: str,
    spec: EbsVolumeType,
    size_gib: float,
    iops: int | None,
    throughput_mibps: float | None,
) -> VolumeEnvelope:
    rule = spec.iops
    assert rule is not None
    provisioned_iops = iops if iops is not None else rule.default
    if provisioned_iops is None:
        raise ValueError(f"{volume_type} requires provisioned IOPS ({rule.min:,}-{rule.max:,})")
    if not rule.min <= provisioned_iops <= rule.max:
        raise ValueError(f"{volume_type} IOPS must be {rule.min:,}-{rule.max:,}, got {provisioned_iops:,}")
    if rule.max_per_gib is not None:
        # gp3's included IOPS come with any size; the ratio only limits what is provisioned above.
        allowed = max(spec.included_iops or 0, rule.max_per_gib * size_gib)
        if provisioned_iops > allowed:
            raise ValueError(
                f"{volume_type} {_fmt(size_gib)} GiB allows at most {_fmt(allowed)} IOPS "
                f"({_fmt(rule.max_per_gib)} per GiB), got {provisioned_iops:,}"
            )
    notes: list[str] = []
    provisioned_mibps: float | None = None
    tput = spec.throughput_mibps
    if tput is not None:
        provisioned_mibps = throughput_mibps if throughput_mibps is not None else tput.default
        if provisioned_mibps is None:
            raise ValueError(f"{volume_type} requires provisioned throughput")
        if not tput.min <= provisioned_mibps <= tput.max:
            raise ValueError(
                f"{volume_type} throughput must be {_fmt(tput.min)}-{_fmt(tput.max)} MiB/s, "
                f"got {_fmt(provisioned_mibps)}"
            )
        if tput.max_per_iops is not None:
            allowed_mibps = max(tput.default or tput.min, provisioned_iops * tput.max_per_iops)
            if provisioned_mibps > allowed_mibps:
                raise ValueError(
                    f"{volume_type} throughput {_fmt(provisioned_mibps)} MiB/s needs at least "
                    f"{_fmt(provisioned_mibps / tput.max_per_iops)} IOPS ({tput.max_per_iops} MiB/s per IOPS)"
                )
        mibps = provisioned_mibps
    else:
        mibps = _piops_mibps(spec, provisioned_iops)
        notes.append(f"throughput follows provisioned IOPS: {_fmt(mibps)} MiB/s at {provisioned_iops:,} IOPS")
    if spec.non_nitro_max_iops is not None and provisioned_iops > spec.non_nitro_max_iops:
        notes.append(f"above {spec.non_nitro_max_iops:,} IOPS only on Nitro instances")
    return _steady(
        volume_type,
        spec,
        size_gib,
        iops=float(provisioned_iops),
        mibps=mibps,
        notes=notes,
        provisioned_iops=provisioned_iops,
        provisioned_mibps=provisioned_mibps,
    )


def _piops_mibps(spec: EbsVolumeType, iops: int) -> float:
    """io1/io2 throughput from provisioned IOPS, per the catalog's rule."""
    per_iops = _need(spec.mibps_per_iops, "mibps_per_iops")
    mibps = iops * per_iops
    if spec.mibps_per_iops_cap is not None:
        mibps = min(mibps, spec.mibps_per_iops_cap)
    if spec.high_iops_from is not None and spec.high_iops_io_kib is not None and iops > spec.high_iops_from:
        mibps = max(mibps, iops * spec.high_iops_io_kib / _KIB_PER_MIB)
    return min(mibps, spec.max_mibps)


def _magnetic(volume_type: str, spec: EbsVolumeType, size_gib: float) -> VolumeEnvelope:
    baseline_iops = _need(spec.included_iops, f"{volume_type}.included_iops")
    baseline_mibps = _need(spec.included_mibps, f"{volume_type}.included_mibps")
    return VolumeEnvelope(
        volume_type=volume_type,
        size_gib=size_gib,
        provisioned_iops=None,
        provisioned_mibps=None,
        baseline_iops=baseline_iops,
        baseline_mibps=baseline_mibps,
        burst_iops=float(spec.max_iops),
        burst_mibps=spec.max_mibps,
        burst_seconds=None,
        credit_capacity=None,
        credit_refill_per_s=None,
        credit_unit=None,
        io_size_kib=spec.io_size_kib,
        notes=[
            f"previous generation: about {_fmt(baseline_iops)} IOPS on average, bursts up to "
            f"{_fmt(spec.max_iops)} IOPS / {_fmt(spec.max_mibps)} MiB/s; AWS publishes no credit model, "
            "so burst duration is unknown"
        ],
    )


def _steady(
    volume_type: str,
    spec: EbsVolumeType,
    size_gib: float,
    *,
    iops: float,
    mibps: float,
    notes: list[str],
    provisioned_iops: int | None = None,
    provisioned_mibps: float | None = None,
) -> VolumeEnvelope:
    return VolumeEnvelope(
        volume_type=volume_type,
        size_gib=size_gib,
        provisioned_iops=provisioned_iops,
        provisioned_mibps=provisioned_mibps,
        baseline_iops=iops,
        baseline_mibps=mibps,
        burst_iops=None,
        burst_mibps=None,
        burst_seconds=None,
        credit_capacity=None,
        credit_refill_per_s=None,
        credit_unit=None,
        io_size_kib=spec.io_size_kib,
        notes=notes,
    )


# --- instances -------------------------------------------------------------------------------


def instance_limits(instance_type: str) -> InstanceLimits | None:
    """An instance type's EBS limits, or None when the catalog does not know the type."""
    spec = catalog_instance_type(instance_type)
    if spec is None:
        return None
    store = None
    if spec.instance_store is not None:
        store = InstanceStoreDevices(
            count=spec.instance_store.devices,
            device_gib=spec.instance_store.device_gib,
            media=spec.instance_store.media,
        )
    return InstanceLimits(
        instance_type=instance_type,
        nitro=spec.nitro,
        arch=spec.arch,
        vcpus=spec.vcpus,
        memory_gib=spec.memory_gib,
        baseline_mbps=spec.ebs_baseline_mbps,
        max_mbps=spec.ebs_max_mbps,
        baseline_mibps=mb_to_mib(spec.ebs_baseline_mbps),
        max_mibps=mb_to_mib(spec.ebs_max_mbps),
        baseline_iops=spec.ebs_baseline_iops,
        max_iops=spec.ebs_max_iops,
        burst_minutes_per_day=spec.ebs_burst_minutes_per_day,
        ebs_optimized_by_default=spec.ebs_optimized_by_default,
        instance_store=store,
    )


# --- targets ---------------------------------------------------------------------------------


def _bound(volume_side: float, instance_side: float | None) -> tuple[float, BoundBy]:
    if instance_side is None:
        return volume_side, "unknown-instance"
    if instance_side < volume_side:
        return instance_side, "instance"
    return volume_side, "volume"


def target_envelope(
    instance_type: str | None,
    volume_type: str,
    size_gib: float,
    iops: int | None,
    throughput_mibps: float | None,
    count: int = 1,
) -> TargetEnvelope:
    """``count`` identical volumes (RAID0 sums IOPS and MiB/s) capped by the instance's EBS limits."""
    if count < 1:
        raise ValueError(f"count must be at least 1, got {count}")
    volume = volume_envelope(volume_type, size_gib, iops, throughput_mibps)
    limits = instance_limits(instance_type) if instance_type else None
    notes: list[str] = []
    member_base_iops, member_base_mibps = volume.baseline_iops, volume.baseline_mibps
    member_burst_iops = volume.burst_iops if volume.bursts else None
    member_burst_mibps = volume.burst_mibps if volume.bursts else None
    if limits is not None and not limits.nitro:
        spec = ebs_volume_type(volume_type)
        if spec.non_nitro_max_iops is not None and member_base_iops > spec.non_nitro_max_iops:
            notes.append(
                f"{instance_type} is not Nitro: {volume_type} capped at {spec.non_nitro_max_iops:,} IOPS"
            )
            member_base_iops = float(spec.non_nitro_max_iops)
        if spec.non_nitro_max_mibps is not None and member_base_mibps > spec.non_nitro_max_mibps:
            cap = _fmt(spec.non_nitro_max_mibps)
            notes.append(f"{instance_type} is not Nitro: {volume_type} capped at {cap} MiB/s")
            member_base_mibps = spec.non_nitro_max_mibps
        if volume_type == "io2" and (size_gib > 16384 or (iops or 0) > 64000):
            notes.append(f"io2 above 16 TiB or 64,000 IOPS cannot attach to {instance_type} (needs Nitro)")
    if limits is not None and not limits.ebs_optimized_by_default:
        notes.append(f"{instance_type} reaches these EBS limits only when launched EBS-optimized")
    if limits is None:
        notes.append(
            f"instance {instance_type!r} is not in the catalog: no instance cap applied"
            if instance_type
            else "no instance given: no instance cap applied"
        )

    stripe_base_iops = member_base_iops * count
    stripe_base_mibps = member_base_mibps * count
    stripe_burst_iops = member_burst_iops * count if member_burst_iops is not None else None
    stripe_burst_mibps = member_burst_mibps * count if member_burst_mibps is not None else None
    if count > 1:
        notes.append(f"RAID0 of {count}: IOPS and MiB/s of the members add up")

    short_iops = max(stripe_base_iops, stripe_burst_iops or 0.0)
    short_mibps = max(stripe_base_mibps, stripe_burst_mibps or 0.0)
    expected_iops, iops_by = _bound(short_iops, limits.max_iops if limits else None)
    expected_mibps, mibps_by = _bound(short_mibps, limits.max_mibps if limits else None)
    sustained_iops, s_iops_by = _bound(stripe_base_iops, limits.baseline_iops if limits else None)
    sustained_mibps, s_mibps_by = _bound(stripe_base_mibps, limits.baseline_mibps if limits else None)
    if limits is not None and limits.burst_minutes_per_day:
        notes.append(
            f"{instance_type} reaches its EBS maximum only {limits.burst_minutes_per_day} min per 24 h; "
            f"after that it falls to {_fmt(limits.baseline_mibps)} MiB/s / {limits.baseline_iops:,} IOPS"
        )
    if volume.bursts and volume.burst_seconds is not None:
        notes.append(
            f"the volume burst lasts ~{_fmt(volume.burst_seconds)} s; sustained figures use its baseline"
        )

    return TargetEnvelope(
        instance_type=instance_type,
        count=count,
        volume=volume,
        instance=limits,
        stripe_baseline_iops=stripe_base_iops,
        stripe_baseline_mibps=stripe_base_mibps,
        stripe_burst_iops=stripe_burst_iops,
        stripe_burst_mibps=stripe_burst_mibps,
        expected_iops=expected_iops,
        expected_mibps=expected_mibps,
        iops_bound_by=iops_by,
        mibps_bound_by=mibps_by,
        sustained_iops=sustained_iops,
        sustained_mibps=sustained_mibps,
        sustained_iops_bound_by=s_iops_by,
        sustained_mibps_bound_by=s_mibps_by,
        notes=notes,
    )


# --- the credit bucket under a load -----------------------------------------------------------


def credit_drain(
    volume: VolumeEnvelope, demand: float, seconds: float, balance: float | None = None
) -> tuple[float, float | None]:
    """The credit bucket after ``seconds`` of ``demand`` on one volume, from ``balance`` (default:
    full, as a new volume starts): ``(credits left, seconds into the period it emptied or None)``.

    ``demand`` is in the bucket's unit per second: I/O credits (one per I/O of up to
    ``io_size_kib``) for gp2, MiB for st1/sc1. While credits last the volume serves up to its burst
    and the bucket refills at the baseline, so it drains at ``min(demand, burst) - baseline`` and
    a full bucket under full demand lasts ``burst_seconds`` (5.4 M / (3,000 - 750) = 2,400 s for
    250 GiB of gp2). At or below the baseline it refills, up to its capacity. A volume without a
    bucket returns ``(0, None)``: it has nothing to run out of.
    """
    if seconds < 0 or demand < 0:
        raise ValueError(f"seconds and demand must be non-negative, got {seconds} and {demand}")
    capacity, refill = volume.credit_capacity, volume.credit_refill_per_s
    burst = volume.burst_iops if volume.credit_unit == "io" else volume.burst_mibps
    if capacity is None or refill is None or burst is None or not volume.bursts:
        return 0.0, None
    held = capacity if balance is None else min(max(balance, 0.0), capacity)
    net = min(demand, burst) - refill
    if net <= 0:
        return min(capacity, held - net * seconds), None
    if held <= net * seconds:
        return 0.0, held / net
    return held - net * seconds, None


# --- emulation -------------------------------------------------------------------------------


def emulation_limits(
    env: VolumeEnvelope,
    knee_seconds: float = 60.0,
    io_size_kib: int | None = None,
) -> EmulationLimits:
    """Ceilings for a loop-device emulation of one volume (combined read + write).

    ``iops`` / ``mibps`` are the volume's baseline. A volume with a credit bucket keeps its burst
    and baseline *rates* but its bucket is scaled down in *time*: a real gp2 bucket (5.4 M credits)
    lasts ``env.burst_seconds`` (2,000 s at 100 GiB) at full burst demand, far longer than a local
    test should take, so the emulated bucket holds just enough for the knee to arrive after
    ``knee_seconds``:

    - gp2 below 1,000 GiB: ``credit_capacity = knee_seconds x (burst_iops - baseline_iops)`` I/O
      credits, refilling at ``baseline_iops`` per second (``credit_unit`` ``io``). The emulator
      spends one credit per I/O and refills continuously, so at full burst demand the balance
      drains at ``burst - baseline`` per second and empties after exactly ``knee_seconds``.
    - st1/sc1 below the size where baseline reaches burst: the same in MiB
      (``knee_seconds x (burst_mibps - baseline_mibps)``, refill ``baseline_mibps``, unit ``mib``).
    - every other volume: no bucket, baseline ceilings only.

    The time compression factor is ``env.burst_seconds / knee_seconds``; results from an emulation
    show the shape of the knee, not its real position in time. ``io_size_kib`` overrides the
    largest I/O the emulation counts as one operation (default: the volume type's).
    """
    if knee_seconds <= 0:
        raise ValueError(f"knee_seconds must be positive, got {knee_seconds}")
    limits: EmulationLimits = {
        "iops": env.baseline_iops,
        "mibps": env.baseline_mibps,
        "io_size_kib": io_size_kib if io_size_kib is not None else env.io_size_kib,
    }
    if env.credit_unit == "io" and env.burst_iops is not None and env.burst_iops > env.baseline_iops:
        limits["burst_iops"] = env.burst_iops
        limits["burst_mibps"] = env.burst_mibps if env.burst_mibps is not None else env.baseline_mibps
        limits["credit_capacity"] = knee_seconds * (env.burst_iops - env.baseline_iops)
        limits["credit_refill_per_s"] = env.baseline_iops
        limits["credit_unit"] = "io"
    elif env.credit_unit == "mib" and env.burst_mibps is not None and env.burst_mibps > env.baseline_mibps:
        limits["burst_mibps"] = env.burst_mibps
        limits["burst_iops"] = env.burst_iops if env.burst_iops is not None else env.baseline_iops
        limits["credit_capacity"] = knee_seconds * (env.burst_mibps - env.baseline_mibps)
        limits["credit_refill_per_s"] = env.baseline_mibps
        limits["credit_unit"] = "mib"
    return limits


def emulation_latency(volume_type: str) -> dict[str, Any]:
    """The per-I/O service time of an emulated volume: the catalog's modes and their source.

    ``{"modes": [{"weight", "p50_ms", "p99_ms"}, ...], "source": id}``, the plan's ``latency``
    (read by the agent's twin). It is the QD1 service time of one small I/O, so it is the same
    for one volume and for a RAID0 stripe of them: striping adds rate, not speed. Raises
    ValueError when the catalog holds no latency for the type.
    """
    spec = ebs_volume_type(volume_type)
    if spec.latency is None:
        raise ValueError(
            f"EBS volume type {volume_type!r} has no latency in the catalog (ebs.{volume_type}.latency); "
            "an emulation needs its modes (p50_ms, p99_ms per mode) and their source"
        )
    return {
        "modes": [mode.model_dump(include={"weight", "p50_ms", "p99_ms"}) for mode in spec.latency.modes],
        "source": spec.latency.source,
    }

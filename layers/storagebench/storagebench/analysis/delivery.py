"""Delivered vs provisioned: did the storage give what was paid for, and what was the limit?

Field study 4 found Provisioned IOPS volumes delivering about 2x their throughput SLA on
sequential reads, and the AWS limits stack: a volume's ceiling only binds when the instance's
EBS bandwidth is higher. A result is therefore judged against the expected ceiling, which
says what set it ("volume", "instance", "network": the client's network below storage reached
over it, or the volume's figure with the instance's limit unknown). Only saturating workloads
(intent "iops" or "throughput") are judged; a latency probe at queue depth 1 is meant to stay far
below the ceiling.

Plain numbers in, so this stays independent of the catalog; ``check_envelope`` accepts any
object shaped like the catalog's ``TargetEnvelope``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Literal, Protocol

from pydantic import BaseModel, ConfigDict

from storagebench.results.records import ResultRecord

__all__ = [
    "DELIVERED_AT",
    "INSTANCE_BOUND",
    "NETWORK_BOUND",
    "OVER_DELIVERED_ABOVE",
    "SATURATING_INTENTS",
    "BoundBy",
    "Delivery",
    "EnvelopeLike",
    "bound_label",
    "check_delivery",
    "check_envelope",
    "combined_rate",
    "ebs_bound",
]

BoundBy = Literal["volume", "instance", "network", "unknown-instance"]
Bound = Literal["volume", "instance", "network", "neither"]
Status = Literal["delivered", "over-delivered", "under-delivered", "not-applicable"]

SATURATING_INTENTS = frozenset({"iops", "throughput"})
"""Workload intents that drive the storage to its ceiling; only these are held to it."""
DELIVERED_AT = 0.9
"""At or above this share of the ceiling a saturating workload counts as delivered (AWS
designs gp2/gp3 to give 90 % of provisioned performance 99 % of the time)."""
OVER_DELIVERED_ABOVE = 1.1
INSTANCE_BOUND = "instance-bound"
"""The record label of a delivered result the instance's EBS limit held."""
NETWORK_BOUND = "instance-bound:network"
"""The record label of a delivered result the client's network held (storage reached over it)."""


def bound_label(delivery: Delivery) -> str | None:
    """The record label saying the instance, not the storage, set a delivered result's ceiling."""
    if delivery.status != "delivered":
        return None
    return {"instance": INSTANCE_BOUND, "network": NETWORK_BOUND}.get(delivery.bound)


class EnvelopeLike(Protocol):
    """What ``check_envelope`` reads from the catalog's ``TargetEnvelope`` (read-only)."""

    @property
    def expected_iops(self) -> float | None: ...
    @property
    def expected_mibps(self) -> float | None: ...
    @property
    def iops_bound_by(self) -> str: ...
    @property
    def mibps_bound_by(self) -> str: ...


class Delivery(BaseModel):
    """Measured against expected, which limit held, and what to tell the reader."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    measured: float
    expected: float | None
    ratio: float | None
    bound: Bound
    status: Status
    warnings: list[str]


def check_delivery(
    measured: float,
    expected: float | None,
    bound_by: str,
    intent: str,
    *,
    unit: str = "",
    delivered_at: float = DELIVERED_AT,
    over_delivered_above: float = OVER_DELIVERED_ABOVE,
) -> Delivery:
    """Judge ``measured`` (IOPS or MiB/s, read + write combined) against the expected ceiling.

    ``bound_by`` names what sets ``expected``: "volume", "instance" (the instance's EBS limit is
    lower than the volume's), "network" (the client's network is lower than what the storage it
    reaches over it could deliver) or "unknown-instance" (the volume's figure; instance unknown).
    """
    if not math.isfinite(measured) or measured < 0:
        raise ValueError(f"measured must be finite and non-negative, got {measured!r}")
    if bound_by not in ("volume", "instance", "network", "unknown-instance"):
        raise ValueError(f"bound_by must be volume, instance, network or unknown-instance, got {bound_by!r}")
    suffix = f" {unit}" if unit else ""
    if expected is None or not math.isfinite(expected) or expected <= 0:
        return Delivery(
            measured=measured,
            expected=expected,
            ratio=None,
            bound="neither",
            status="not-applicable",
            warnings=["no expected ceiling to compare with"],
        )
    ratio = measured / expected
    if intent not in SATURATING_INTENTS:
        return Delivery(
            measured=measured,
            expected=expected,
            ratio=ratio,
            bound="neither",
            status="not-applicable",
            warnings=[f"{intent!r} workloads are not meant to reach the ceiling; not judged against it"],
        )
    figures = f"{measured:,.0f}{suffix} of {expected:,.0f}{suffix} expected ({ratio:.0%})"
    warnings: list[str] = []
    if ratio > over_delivered_above:
        warnings.append(
            f"over-delivered: {figures}; the ceiling did not bind (burst, cache or merged sequential "
            "I/O?), so do not size or price on this figure"
        )
        return Delivery(
            measured=measured,
            expected=expected,
            ratio=ratio,
            bound="neither",
            status="over-delivered",
            warnings=warnings,
        )
    if ratio < delivered_at:
        warnings.append(f"provisioned not delivered: {figures}")
        if bound_by == "unknown-instance":
            warnings.append("instance limit unknown: the shortfall may be the instance's, not the volume's")
        return Delivery(
            measured=measured,
            expected=expected,
            ratio=ratio,
            bound="neither",
            status="under-delivered",
            warnings=warnings,
        )
    bound: Bound = "network" if bound_by == "network" else "instance" if bound_by == "instance" else "volume"
    if bound == "instance":
        warnings.append(f"instance-bound: the instance's limit is below the volume's; {figures}")
    elif bound == "network":
        warnings.append(f"instance-bound: network: the client's network is below the storage's; {figures}")
    elif bound_by == "unknown-instance":
        warnings.append("instance limit unknown: assumed the volume's ceiling bound this result")
    return Delivery(
        measured=measured, expected=expected, ratio=ratio, bound=bound, status="delivered", warnings=warnings
    )


def check_envelope(
    measured: float,
    envelope: EnvelopeLike,
    metric: Literal["iops", "mibps"],
    intent: str,
) -> Delivery:
    """``check_delivery`` with the expectation and its bound read from a target envelope."""
    if metric == "iops":
        return check_delivery(measured, envelope.expected_iops, envelope.iops_bound_by, intent, unit="IOPS")
    return check_delivery(measured, envelope.expected_mibps, envelope.mibps_bound_by, intent, unit="MiB/s")


def combined_rate(records: Sequence[ResultRecord], metric: Literal["iops", "bw_mibps"]) -> float | None:
    """Device-level rate of one repetition: the sum over its directions and job groups.

    Limits apply to reads plus writes together, so a 25 % read mix is judged on the total.
    Refuses records from different measurements or repetitions, and a "mixed" total next to
    per-direction records (it would be counted twice). None when no record has the metric.
    """
    if not records:
        return None

    def ident(r: ResultRecord) -> tuple[object, ...]:
        return (r.config_id, r.target_id, r.workload, r.variant, r.phase, r.repetition)

    if any(ident(r) != ident(records[0]) for r in records):
        raise ValueError("records must share config, target, workload, variant, phase and repetition")
    directions = {r.direction for r in records}
    if "mixed" in directions and len(directions) > 1:
        raise ValueError("a 'mixed' total and per-direction records would be counted twice")
    values = [v for v in ((r.iops if metric == "iops" else r.bw_mibps) for r in records) if v is not None]
    return math.fsum(values) if values else None


EBS_BOUND_FROM = 0.5
"""Share of a phase's runtime a limit must have bound, by EBS's own count, to be named its bound."""


def ebs_bound(records: Sequence[ResultRecord]) -> tuple[str, float] | None:
    """What EBS itself says held a saturating phase back: the limit whose exceeded-time counter
    covers the largest share of the runtime (``volume-iops``, ``volume-throughput``,
    ``instance-iops``, ``instance-throughput``), or ``unthrottled`` with the largest share when
    none reached ``EBS_BOUND_FROM``. None without EBS statistics (emulated or non-Nitro volumes).
    """
    views = [r for r in records if r.volume is not None and r.volume.source == "nvme-log-page"]
    runtime = max((r.runtime_s for r in views), default=0.0)
    if not views or runtime <= 0:
        return None
    shares: dict[str, float] = {}
    for name in ("volume_iops", "volume_throughput", "instance_iops", "instance_throughput"):
        seconds = [getattr(r.volume, f"{name}_bound_s") for r in views]
        known = [x for x in seconds if x is not None]
        if known:
            shares[name.replace("_", "-")] = min(1.0, max(known) / runtime)
    if not shares:
        return None
    limit, share = max(shares.items(), key=lambda item: item[1])
    return (limit, share) if share >= EBS_BOUND_FROM else ("unthrottled", share)

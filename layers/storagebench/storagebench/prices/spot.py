"""What a Spot instance paid: the Spot price history of its type and zone over its lifetime.

EC2 bills a Spot instance the Spot price in effect for each second it runs (Linux: per second,
60 s minimum, as on-demand). The price changes now and then, so what an instance paid is the
time-weighted price over its life: each price from its change (or the launch) to the next change
(or the end). :class:`SpotPriceHistory` is the port (``adapters.aws.spot_prices`` reads
DescribeSpotPriceHistory); :func:`paid` does the weighting, and refuses a history that does not
say what the price was when the instance started (it would otherwise guess).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol

from pydantic import BaseModel, ConfigDict, Field

from storagebench.core.clock import iso

__all__ = [
    "LINUX",
    "SpotCharge",
    "SpotPriceHistory",
    "SpotPricePoint",
    "SpotPriceUnavailable",
    "SpotSegment",
    "paid",
]

LINUX = "Linux/UNIX"
"""The product description of Linux Spot prices (VPC instances; EC2-Classic is retired)."""


@dataclass(frozen=True)
class SpotPricePoint:
    """A price change: from ``at`` on, the type costs ``usd_per_hour`` in the zone."""

    at: datetime
    usd_per_hour: float

    def __post_init__(self) -> None:
        if self.at.tzinfo is None:
            raise ValueError(f"Spot price time {self.at!r} has no time zone")
        if not math.isfinite(self.usd_per_hour) or self.usd_per_hour < 0:
            raise ValueError(f"Spot price must be a non-negative number, got {self.usd_per_hour!r}")


class SpotPriceUnavailable(LookupError):  # noqa: N818 - reads as what happened
    """No Spot price covers the start of the instance's life (the message says which type, zone, time)."""


class SpotPriceHistory(Protocol):
    def history(
        self, instance_type: str, zone: str, start: datetime, end: datetime, product: str = LINUX
    ) -> list[SpotPricePoint]:
        """Every price change of the type in the zone within [start, end], and the last one before
        ``start`` (the price in effect when the instance started), oldest first."""


class SpotSegment(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    start: str
    end: str
    usd_per_hour: float = Field(ge=0)


class SpotCharge(BaseModel):
    """What one Spot instance paid over [start, end], price change by price change."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    instance_type: str
    zone: str
    start: str
    end: str
    seconds: float = Field(ge=0)
    usd: float = Field(ge=0, description="sum over the segments of price x duration (before any minimum)")
    average_usd_per_hour: float = Field(ge=0, description="usd over the hours: the time-weighted price")
    segments: list[SpotSegment]
    as_of: str = Field(description="date of the price in effect at the end")

    def describe(self) -> str:
        changes = len(self.segments) - 1
        over = "one price" if changes == 0 else f"{changes} price change(s), time-weighted"
        return f"Spot in {self.zone}, {over}, price history {self.start} to {self.end}"


def paid(
    points: Sequence[SpotPricePoint], instance_type: str, zone: str, start: datetime, end: datetime
) -> SpotCharge:
    """The time-weighted Spot price over [start, end] from a history (any order)."""
    if end < start:
        raise ValueError(f"the instance's end {iso(end)} is before its start {iso(start)}")
    ordered = sorted(points, key=lambda p: p.at)
    before = [p for p in ordered if p.at <= start]
    if not before:
        first = f"; the first price found is from {iso(ordered[0].at)}" if ordered else ""
        raise SpotPriceUnavailable(
            f"no Spot price of {instance_type} in {zone} is known for {iso(start)}, when the instance "
            f"started{first}"
        )
    changes = [before[-1], *(p for p in ordered if start < p.at < end)]
    segments: list[SpotSegment] = []
    total = 0.0
    for index, point in enumerate(changes):
        begin = max(point.at, start)
        finish = changes[index + 1].at if index + 1 < len(changes) else end
        total += point.usd_per_hour * (finish - begin).total_seconds() / 3600
        segments.append(SpotSegment(start=iso(begin), end=iso(finish), usd_per_hour=point.usd_per_hour))
    seconds = (end - start).total_seconds()
    average = total / (seconds / 3600) if seconds > 0 else changes[-1].usd_per_hour
    return SpotCharge(
        instance_type=instance_type,
        zone=zone,
        start=iso(start),
        end=iso(end),
        seconds=seconds,
        usd=total,
        average_usd_per_hour=average,
        segments=segments,
        as_of=iso(changes[-1].at)[:10],
    )

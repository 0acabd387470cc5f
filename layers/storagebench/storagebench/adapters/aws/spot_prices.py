"""``SpotPriceHistory`` on EC2's DescribeSpotPriceHistory: the Spot prices an instance ran under.

One query per instance: its type, its zone, its product (Linux/UNIX, also under the "(Amazon VPC)"
name older accounts report), from its launch to its end. EC2 answers the price changes in that
window and the last change before it (the price in effect at the launch); when an endpoint leaves
that one out, a second query looks back :data:`LOOKBACK` for it. Entries of other zones or products
are dropped here too, so an endpoint that ignores a parameter (moto ignores AvailabilityZone and
answers a synthetic price) cannot price an instance with another zone's history.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from storagebench.adapters.aws.errors import aws_call
from storagebench.adapters.aws.settings import AwsSettings
from storagebench.core.errors import ProvisioningError
from storagebench.prices.spot import LINUX, SpotPricePoint

__all__ = ["LOOKBACK", "Ec2SpotPriceHistory"]

LOOKBACK = timedelta(days=30)
"""How far before a launch to look for the price in effect then (EC2 keeps 90 days)."""


class Ec2SpotPriceHistory:
    def __init__(self, ec2: Any) -> None:
        self.ec2 = ec2

    @classmethod
    def from_settings(cls, settings: AwsSettings, region: str | None = None) -> Ec2SpotPriceHistory:
        return cls(settings.client("ec2", region))

    def history(
        self, instance_type: str, zone: str, start: datetime, end: datetime, product: str = LINUX
    ) -> list[SpotPricePoint]:
        points = self._query(instance_type, zone, start, end, product)
        if not any(p.at <= start for p in points):
            earlier = self._query(instance_type, zone, start - LOOKBACK, start, product)
            before = [p for p in earlier if p.at <= start]
            if before:
                points.append(max(before, key=lambda p: p.at))
        return sorted(set(points), key=lambda p: p.at)

    def _query(
        self, instance_type: str, zone: str, start: datetime, end: datetime, product: str
    ) -> list[SpotPricePoint]:
        products = (product, f"{product} (Amazon VPC)")
        with aws_call(f"read the Spot price history of {instance_type} in {zone}", ProvisioningError):
            pages = self.ec2.get_paginator("describe_spot_price_history").paginate(
                InstanceTypes=[instance_type],
                ProductDescriptions=list(products),
                AvailabilityZone=zone,
                StartTime=start,
                EndTime=end,
            )
            entries = [e for page in pages for e in page.get("SpotPriceHistory", [])]
        return [
            SpotPricePoint(at=_utc(e["Timestamp"]), usd_per_hour=float(e["SpotPrice"]))
            for e in entries
            if e.get("AvailabilityZone") == zone
            and e.get("InstanceType") == instance_type
            and e.get("ProductDescription") in products
        ]


def _utc(moment: datetime) -> datetime:
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)

"""The bundled, dated price snapshot and the ``PriceBook`` that reads it.

``snapshot.json`` (next to this module) holds, per region, every price ``PriceBook`` asks for,
each with its unit, a Price List identifier (usage type, SKU where known) and, where no primary
source was at hand, ``unverified: true`` with a note. Its ``coverage`` names the regions it
holds; ``storagebench prices refresh --region R`` (AWS credentials needed) rebuilds it from the
Price List API with ``adapters.aws.pricing.build_snapshot``, which writes this same structure.

``SnapshotPriceBook`` is for offline and local use: every ``Price`` it returns says
``source="snapshot"`` and carries the snapshot's date, and an unverified value says so in its
description. A region or product the snapshot lacks raises ``PriceNotFound`` naming the product,
the region and the refresh command.
"""

from __future__ import annotations

import itertools
from functools import cache
from pathlib import Path
from typing import Literal, overload

from pydantic import BaseModel, ConfigDict, Field, model_validator

from storagebench.prices.models import Price, PriceNotFound, PriceTier
from storagebench.prices.products import PriceKey, TierKey, checked_label

__all__ = [
    "SNAPSHOT_PATH",
    "MissingPrice",
    "RegionPrices",
    "Snapshot",
    "SnapshotPriceBook",
    "SnapshotRate",
    "iter_rates",
    "load_snapshot",
    "merge_snapshots",
    "refresh_hint",
]

SNAPSHOT_PATH = Path(__file__).with_name("snapshot.json")


def refresh_hint(region: str) -> str:
    return (
        f"read it from the AWS Price List API with `storagebench prices refresh --region {region}` "
        "(needs AWS credentials allowed pricing:GetProducts)"
    )


class SnapshotRate(BaseModel):
    """One price (or one tier of a tiered price) as the snapshot stores it."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    usd: float = Field(ge=0)
    unit: str
    begin: float = Field(default=0, ge=0, description="tiers: first unit of the tier (inclusive)")
    end: float | None = Field(default=None, description="tiers: end of the tier (exclusive), None = no end")
    usagetype: str | None = Field(
        default=None,
        description="as the Price List reports it; seed entries carry the documented base usage "
        "type (no region prefix)",
    )
    group: str | None = Field(
        default=None, description="Price List 'group' attribute, where that identifies it"
    )
    sku: str | None = None
    rate_code: str | None = None
    description: str | None = None
    api_unit: str | None = Field(default=None, description="the listed unit, when the price was converted")
    api_usd: float | None = Field(default=None, description="the listed price, when it was converted")
    source: str | None = Field(default=None, description="a key of the snapshot's 'sources'")
    unverified: bool = False
    note: str | None = None

    @model_validator(mode="after")
    def _tier_order(self) -> SnapshotRate:
        if self.end is not None and self.end <= self.begin:
            raise ValueError(f"tier end {self.end} is not after its begin {self.begin}")
        if self.unverified and not self.note:
            raise ValueError("an unverified price needs a note saying why")
        return self


class MissingPrice(BaseModel):
    """A price a refresh could not read (the book raises PriceNotFound with this reason)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    product: str
    key: str
    reason: str


class RegionPrices(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    as_of: str | None = Field(
        default=None, description="date of this region's prices (default: the snapshot's)"
    )
    ec2_instance_hour: dict[str, SnapshotRate] = Field(default_factory=dict)
    ec2_os_instance_hour: dict[str, SnapshotRate] = Field(
        default_factory=dict, description="keys: <operating system>:<instance type>, e.g. RHEL:m5.large"
    )
    ec2_ebs_optimized_hour: dict[str, SnapshotRate] = Field(default_factory=dict)
    ebs_storage: dict[str, SnapshotRate] = Field(default_factory=dict)
    ebs_iops: dict[str, list[SnapshotRate]] = Field(default_factory=dict)
    ebs_throughput: dict[str, list[SnapshotRate]] = Field(default_factory=dict)
    efs_storage: dict[Literal["standard", "one_zone"], SnapshotRate] = Field(default_factory=dict)
    efs_provisioned_throughput: SnapshotRate | None = None
    efs_elastic_transfer: dict[Literal["read", "write"], SnapshotRate] = Field(default_factory=dict)
    fsx_lustre_storage: dict[str, SnapshotRate] = Field(
        default_factory=dict, description="keys: SCRATCH_1, SCRATCH_2, PERSISTENT_1/50, PERSISTENT_2/125 ..."
    )
    stepfunctions_transition: SnapshotRate | None = None
    lambda_gb_second: dict[Literal["x86_64", "arm64"], SnapshotRate] = Field(default_factory=dict)
    lambda_request: SnapshotRate | None = None
    missing: list[MissingPrice] = Field(default_factory=list)
    unseeded: dict[str, str] = Field(
        default_factory=dict,
        description="product -> why the bundled seed holds none of its prices (a refresh reads them)",
    )

    @model_validator(mode="after")
    def _tiers(self) -> RegionPrices:
        for family, tiers_by_type in (("ebs_iops", self.ebs_iops), ("ebs_throughput", self.ebs_throughput)):
            for volume_type, tiers in tiers_by_type.items():
                for before, after in itertools.pairwise(tiers):
                    if before.end != after.begin:
                        raise ValueError(f"{family}.{volume_type}: tiers are not contiguous")
                if tiers and tiers[-1].end is not None:
                    raise ValueError(f"{family}.{volume_type}: the last tier must have no end")
        return self

    def unverified(self) -> list[str]:
        """Every entry marked unverified, as ``family.key``."""
        return sorted({label for label, rate in iter_rates(self) if rate.unverified})


class Coverage(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    regions: list[str]
    note: str | None = None


class Snapshot(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    snapshot_version: str
    as_of: str = Field(description="ISO date the prices were published or read")
    source: str
    sources: dict[str, str] = Field(default_factory=dict)
    coverage: Coverage
    regions: dict[str, RegionPrices]

    @model_validator(mode="after")
    def _coverage(self) -> Snapshot:
        if sorted(self.coverage.regions) != sorted(self.regions):
            raise ValueError(
                f"coverage.regions {sorted(self.coverage.regions)} differs from the regions held "
                f"{sorted(self.regions)}"
            )
        for region, prices in self.regions.items():
            for label, rate in iter_rates(prices):
                if rate.source is not None and rate.source not in self.sources:
                    raise ValueError(f"{region} {label}: source {rate.source!r} is not in 'sources'")
        return self


def iter_rates(prices: RegionPrices) -> list[tuple[str, SnapshotRate]]:
    """Every price of a region as ``(family.key, rate)``, tiers one by one, in field order."""
    rates: list[tuple[str, SnapshotRate]] = []
    for name in type(prices).model_fields:
        if name == "unseeded":
            continue  # reasons, not rates
        value = getattr(prices, name)
        if isinstance(value, SnapshotRate):
            rates.append((name, value))
        elif isinstance(value, dict):
            for key, item in value.items():
                for rate in item if isinstance(item, list) else [item]:
                    rates.append((f"{name}.{key}", rate))
    return rates


@cache
def _bundled() -> Snapshot:
    return Snapshot.model_validate_json(SNAPSHOT_PATH.read_text(encoding="utf-8"))


def load_snapshot(path: Path | None = None) -> Snapshot:
    """The bundled snapshot (read once per process), or the snapshot file at ``path``."""
    if path is None:
        return _bundled()
    return Snapshot.model_validate_json(path.read_text(encoding="utf-8"))


def merge_snapshots(base: Snapshot, update: Snapshot) -> Snapshot:
    """``base`` with ``update``'s regions replacing (or joining) its own: refreshing one region
    keeps the others. Each region keeps its own date; the snapshot's date is the oldest."""
    regions: dict[str, RegionPrices] = {}
    for snapshot in (base, update):
        for region, prices in snapshot.regions.items():
            regions[region] = prices if prices.as_of else prices.model_copy(update={"as_of": snapshot.as_of})
    dates = sorted(prices.as_of or update.as_of for prices in regions.values())
    return Snapshot(
        snapshot_version=update.snapshot_version,
        as_of=dates[0] if dates else update.as_of,
        source=f"{update.source}; regions not refreshed kept from snapshot {base.snapshot_version}"
        if set(base.regions) - set(update.regions)
        else update.source,
        sources={**base.sources, **update.sources},
        coverage=Coverage(regions=sorted(regions), note=update.coverage.note),
        regions=dict(sorted(regions.items())),
    )


class SnapshotPriceBook:
    """``PriceBook`` from the dated snapshot (``source="snapshot"``)."""

    def __init__(self, region: str, snapshot: Snapshot | None = None) -> None:
        self.region = region
        self.snapshot = snapshot if snapshot is not None else load_snapshot()
        self._prices = self.snapshot.regions.get(region)

    @property
    def as_of(self) -> str:
        if self._prices is not None and self._prices.as_of:
            return self._prices.as_of
        return self.snapshot.as_of

    # ----------------------------------------------------------------------------- lookup

    def _not_found(self, product: str, name: str | None = None) -> PriceNotFound:
        """The snapshot lacks the region or the product: say so and how to read it."""
        held = ", ".join(self.snapshot.coverage.regions) or "none"
        if self._prices is None:
            reason = f"the price snapshot ({self.snapshot.snapshot_version}) covers only: {held}"
        else:
            missing = next((m for m in self._prices.missing if m.product == product), None)
            unseeded = self._prices.unseeded.get(name or "")
            reason = missing.reason if missing else unseeded or "not in the price snapshot"
            reason = f"{reason} (snapshot {self.snapshot.snapshot_version}, as of {self.as_of})"
        return PriceNotFound(
            f"no price for {product} in {self.region}: {reason}; {refresh_hint(self.region)}"
        )

    def _bad_argument(self, product: str, exc: PriceNotFound) -> PriceNotFound:
        """An argument no price list could answer (unknown volume type, tier): no refresh hint."""
        return PriceNotFound(f"no price for {product} in {self.region}: {exc}")

    def _region(self, product: str) -> RegionPrices:
        if self._prices is None:
            raise self._not_found(product)
        return self._prices

    def _price(self, rate: SnapshotRate) -> Price:
        description = rate.description
        if rate.unverified:
            flag = f"UNVERIFIED: {rate.note}"
            description = f"{description} [{flag}]" if description else flag
        return Price(
            usd=rate.usd,
            unit=rate.unit,
            region=self.region,
            source="snapshot",
            as_of=self.as_of,
            sku=rate.sku,
            description=description,
            unverified=rate.note if rate.unverified else None,
        )

    def _tiers(self, rates: list[SnapshotRate]) -> list[PriceTier]:
        return [PriceTier(begin=r.begin, end=r.end, price=self._price(r)) for r in rates]

    # ----------------------------------------------------------------------------- PriceBook

    @overload
    def price(self, key: TierKey) -> list[PriceTier]: ...

    @overload
    def price(self, key: PriceKey) -> Price: ...

    def price(self, key: PriceKey | TierKey) -> Price | list[PriceTier]:
        spec, dimensions = key.spec, key.dimensions
        try:
            spec.check(*dimensions)
        except PriceNotFound as exc:
            raise self._bad_argument(checked_label(key), exc) from None
        prices = self._region(checked_label(key))
        if not spec.charged(*dimensions):
            return []
        held = getattr(prices, spec.name)
        found = held if spec.snapshot_key is None else held.get(spec.snapshot_key(*dimensions))
        if found is None:
            raise self._not_found(key.label(), spec.name)
        if isinstance(key, TierKey):
            return self._tiers(found)
        return self._price(found)

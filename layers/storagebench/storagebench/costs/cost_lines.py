"""The monthly cost of a config as traced lines: each :class:`CostComponent` carries the price it
used (its source and date), :class:`ConfigCost` sums them by category, target and role, and
:class:`DurationCost` prorates them to any number of hours. How the lines are priced is in
:mod:`storagebench.costs.monthly` (instances, launches) and :mod:`storagebench.costs.storage_prices`
(EBS, EFS, FSx for Lustre); this module only holds, formats and totals them.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from decimal import Decimal
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, computed_field

from storagebench.kinds.file_gateway import GATEWAY_CACHE, GATEWAY_ROOT
from storagebench.prices.models import HOURS_PER_MONTH, PriceSource

__all__ = [
    "ROOT_TARGET_ID",
    "Category",
    "ConfigCost",
    "CostComponent",
    "DurationComponent",
    "DurationCost",
    "combine_sources",
    "cost_delta_pct",
    "costs_by_id",
    "fmt_rate",
    "fmt_usd",
    "is_gateway_component",
    "is_storage_under_test",
    "num_text",
    "oldest_date",
    "unverified_prices",
]

ROOT_TARGET_ID = "root"
"""``target_id`` of the root volume's components."""

Category = Literal["compute", "storage"]


def fmt_usd(value: float) -> str:
    """An amount, to the cent: $1,234.56 (sub-cent amounts as :func:`fmt_rate`)."""
    if value != 0 and abs(value) < 0.01:
        return fmt_rate(value)
    return f"${value:,.2f}"


def fmt_rate(value: float) -> str:
    """A unit price, never rounded: $0.125, $0.0455, $0.0000166667 (shortest exact decimal)."""
    text = format(Decimal(repr(float(value))), "f")
    whole, _, frac = text.partition(".")
    return f"${int(whole):,}.{frac.rstrip('0').ljust(2, '0')}"


def num_text(value: float) -> str:
    return f"{value:,.0f}" if abs(value - round(value)) < 1e-9 else f"{value:,.2f}"


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class CostComponent(_Frozen):
    """One priced line: quantity x unit price per month, with the price's provenance."""

    name: Literal[
        "instance",
        "node-instance",
        "gateway-instance",
        "licence",
        "ebs-optimized",
        "ebs-storage",
        "ebs-iops",
        "ebs-throughput",
        "efs-storage",
        "efs-throughput",
        "fsx-storage",
    ]
    target_id: str | None = Field(
        description="None for the instance; 'root' for the root volume; '<role>:<target>' for a node's"
    )
    member: int | None = Field(default=None, description="position in a RAID0/jbod set (count > 1)")
    node: str | None = Field(default=None, description="the node group's role; None for the config's clients")
    count: int = Field(
        default=1, ge=1, description="identical instances priced in this line (clients, nodes)"
    )
    category: Category
    quantity: float = Field(ge=0, description="billed units per month (hours, GB, IOPS, MiB/s)")
    unit: str
    unit_usd: float = Field(ge=0)
    monthly_usd: float = Field(ge=0)
    source: PriceSource
    as_of: str
    sku: str | None = None
    detail: str = Field(
        description="what was priced and how, e.g. 'io2 IOPS 32,000-64,000: 32,000 x $0.0455'"
    )
    unverified: str | None = Field(
        default=None, description="why its price has no primary source (the snapshot's note); None: verified"
    )


class DurationComponent(_Frozen):
    name: str
    target_id: str | None
    member: int | None
    detail: str
    usd: float
    node: str | None = None
    count: int = 1


class DurationCost(_Frozen):
    """A config kept for ``hours``: every monthly component prorated (monthly x hours / 730)."""

    config_id: str
    hours: float
    usd: float
    components: list[DurationComponent]
    price_source: str
    price_date: str | None
    unpriced: list[str]
    missing_prices: list[str]


def combine_sources(sources: Iterable[str]) -> str:
    """The one source used, "mixed" when several, "none" when nothing was priced."""
    distinct = sorted(set(sources))
    if not distinct:
        return "none"
    return distinct[0] if len(distinct) == 1 else "mixed"


class ConfigCost(_Frozen):
    """The monthly cost of one config, as a sum of traced components."""

    config_id: str
    instance_type: str
    region: str
    currency: Literal["USD"] = "USD"
    components: list[CostComponent]
    unpriced: list[str] = Field(
        default_factory=list, description="what the total leaves out by design, each with why"
    )
    missing_prices: list[str] = Field(
        default_factory=list,
        description="what could not be priced (a price the book lacks, a billed quantity the request "
        "does not give, such as EFS storage without storage_gib_hint): the total is a lower bound",
    )
    notes: list[str] = Field(default_factory=list)
    storage_in_instance_price: list[str] = Field(
        default_factory=list,
        description="targets paid inside instance-hours (instance store, `<role>:<id>` on nodes): the "
        "storage-only figure leaves them out, so it has no delta",
    )

    @computed_field  # type: ignore[prop-decorator]
    @property
    def monthly_usd(self) -> float:
        return math.fsum(c.monthly_usd for c in self.components)

    @computed_field  # type: ignore[prop-decorator]
    @property
    def price_source(self) -> str:
        return combine_sources(c.source for c in self.components)

    @computed_field  # type: ignore[prop-decorator]
    @property
    def price_date(self) -> str | None:
        """The oldest ``as_of`` of the prices used (ISO dates sort as text)."""
        return oldest_date(c.as_of for c in self.components)

    @computed_field  # type: ignore[prop-decorator]
    @property
    def complete(self) -> bool:
        """False when the book lacked a price (``missing_prices``): the total is then a lower bound."""
        return not self.missing_prices

    @property
    def compute_usd(self) -> float:
        return math.fsum(c.monthly_usd for c in self.components if c.category == "compute")

    @property
    def storage_usd(self) -> float:
        return math.fsum(c.monthly_usd for c in self.components if c.category == "storage")

    @property
    def storage_only_usd(self) -> float:
        """The storage under test alone: the targets' volumes, file systems and their IOPS and
        throughput charges, without instances and without the machines' root volumes (what field
        study 3 compared: EFS 1 TiB against FSx for Lustre 1.2 TiB, the client left out)."""
        return math.fsum(c.monthly_usd for c in self.components if is_storage_under_test(c))

    @property
    def gateway_usd(self) -> float:
        """The File Gateway part: appliance instance, root and cache volumes (0 without a gateway)."""
        return math.fsum(c.monthly_usd for c in self.components if is_gateway_component(c))

    @property
    def nodes_usd(self) -> float:
        """The node groups' part: their instances, licences, root and data volumes (0 without nodes)."""
        return math.fsum(c.monthly_usd for c in self.components if c.node is not None)

    @property
    def has_gateway(self) -> bool:
        return any(c.name == "gateway-instance" for c in self.components)

    def by_target(self) -> dict[str, float]:
        """Monthly USD per target id ('root' for the root volume); the instance is left out."""
        out: dict[str, float] = {}
        for c in self.components:
            if c.target_id is not None:
                out[c.target_id] = out.get(c.target_id, 0.0) + c.monthly_usd
        return out

    def for_hours(self, hours: float) -> DurationCost:
        """This config kept for ``hours`` (e.g. study 3's 24 hours): monthly x hours / 730."""
        if not math.isfinite(hours) or hours < 0:
            raise ValueError(f"hours must be a non-negative number, got {hours!r}")
        share = hours / HOURS_PER_MONTH
        components = [
            DurationComponent(
                name=c.name,
                target_id=c.target_id,
                member=c.member,
                detail=c.detail,
                usd=c.monthly_usd * share,
                node=c.node,
                count=c.count,
            )
            for c in self.components
        ]
        return DurationCost(
            config_id=self.config_id,
            hours=hours,
            usd=math.fsum(c.usd for c in components),
            components=components,
            price_source=self.price_source,
            price_date=self.price_date,
            unpriced=self.unpriced,
            missing_prices=self.missing_prices,
        )


# ----------------------------------------------------------------------------------- lookups


def is_storage_under_test(component: CostComponent) -> bool:
    """A storage line of a target: not an instance, not a client's or node's root volume
    (``root``, ``<role>:root``), not a File Gateway appliance's root disk (its cache disks are)."""
    if component.category != "storage":
        return False
    tid = component.target_id or ""
    if tid.rsplit(":", 1)[-1] == ROOT_TARGET_ID:
        return False
    return not ("/" in tid and tid.split("/", 1)[1].startswith(GATEWAY_ROOT))


def is_gateway_component(component: CostComponent) -> bool:
    if component.name == "gateway-instance":
        return True
    tid = component.target_id or ""
    return "/" in tid and tid.split("/", 1)[1].startswith((GATEWAY_ROOT, GATEWAY_CACHE))


def cost_delta_pct(cost: ConfigCost | float, baseline: ConfigCost | float) -> float | None:
    """(cost - baseline) / baseline x 100, monthly; None when the baseline costs nothing."""
    value = cost.monthly_usd if isinstance(cost, ConfigCost) else cost
    base = baseline.monthly_usd if isinstance(baseline, ConfigCost) else baseline
    if base == 0:
        return None
    return (value - base) / base * 100.0


def unverified_prices(costs: Mapping[str, ConfigCost]) -> list[str]:
    """Each price without a primary source once, with the configs it is in and why (as ``storagebench
    prices`` flags them): ``r3.4xlarge EBS-optimized fee ($0.10/Hrs) in magnetic, gp2: <note>``."""
    found: dict[tuple[str, str], list[str]] = {}
    for config_id, cost in costs.items():
        for c in cost.components:
            if c.unverified:
                what = c.detail.split(": ", 1)[0]
                key = (f"{what} ({fmt_rate(c.unit_usd)}/{c.unit})", c.unverified)
                found.setdefault(key, [])
                if config_id not in found[key]:
                    found[key].append(config_id)
    return [f"{what} in {_some(ids)}: {why}" for (what, why), ids in found.items()]


def _some(ids: list[str], shown: int = 3) -> str:
    more = f" and {len(ids) - shown} more" if len(ids) > shown else ""
    return ", ".join(ids[:shown]) + more


def oldest_date(dates: Iterable[str | None]) -> str | None:
    present = [d for d in dates if d]
    return min(present) if present else None


def costs_by_id(costs: Mapping[str, ConfigCost] | Iterable[ConfigCost]) -> dict[str, ConfigCost]:
    if isinstance(costs, Mapping):
        return dict(costs)
    return {c.config_id: c for c in costs}

"""What a config costs per month (and for any number of hours), component by component.

Pure: every number comes from a :class:`~storagebench.prices.book.PriceBook` and the catalog's
rules; nothing is launched and nothing is priced from memory. Each component carries the price it
used (its source and date), so a total can always be traced back and re-checked.

What is priced, per config (a month is 730 hours, as AWS's calculator converts):

- the instance: on-demand Linux hours x 730;
- the root volume and every data volume (each member of a RAID0 / jbod set on its own, because
  io2's IOPS tiers apply per volume): storage GB-month x size; provisioned IOPS by tier of the
  IOPS count (io1 one flat tier, io2 three tiers, gp3 only above its 3,000 included IOPS);
  gp3 throughput above the 125 MiB/s included;
- EFS: storage from ``storage_gib_hint`` (said when missing: EFS bills what is stored); in
  provisioned mode the throughput above what the stored data includes (the catalog's 50 MiB/s per
  TiB); Elastic throughput is usage-priced per GB transferred and noted, not guessed;
- FSx for Lustre: capacity x the deployment type's (and throughput tier's) GB-month price;
- a File Gateway: its appliance instance's hours and its root and cache volumes, priced like any
  instance and EBS volume (as field study 1 priced its gateways); ``gateway_usd`` is that part alone,
  the figure gateways are compared by (the config's instance is then the NFS client).

A config's node groups (servers, controllers) are priced the same way per node, times their count,
each line carrying its ``node`` role; several clients multiply the client's instance and root
volume while the shared targets they drive are priced once.

Instance-store targets are included in the instance price. NFS and local targets are outside the
config's bill (a File Gateway, a filer, a directory): they are listed in ``unpriced``, except a local
path ``backed_by`` the config's own targets (a file system its hook builds on them), priced as them.
A price the book lacks is listed in ``missing_prices`` and the total is then a lower bound
(``complete`` False).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping
from decimal import Decimal
from typing import Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, computed_field

from storagebench.catalog import ebs_volume_type, instance_type, load_catalog
from storagebench.catalog.images import operating_system
from storagebench.kinds import Bill, kind_of
from storagebench.kinds.base import EbsVolumeBill, EfsBill, InstanceBill
from storagebench.kinds.file_gateway import GATEWAY_CACHE, GATEWAY_ROOT
from storagebench.prices.book import PriceBook
from storagebench.prices.models import HOURS_PER_MONTH, Price, PriceNotFound, PriceSource, PriceTier
from storagebench.prices.products import PriceKey, TierKey
from storagebench.request.model import (
    BenchmarkRequest,
    Config,
    EfsTarget,
    FsxLustreTarget,
    NodeGroup,
)

__all__ = [
    "HOURS_PER_MONTH",
    "ROOT_TARGET_ID",
    "ConfigCost",
    "CostComponent",
    "DurationComponent",
    "DurationCost",
    "PriceLookup",
    "asking",
    "combine_sources",
    "cost_delta_pct",
    "cost_for",
    "costs_by_id",
    "ebs_volume_components",
    "efs_components",
    "fmt_rate",
    "fmt_usd",
    "fsx_lustre_components",
    "is_storage_under_test",
    "monthly_cost",
    "oldest_date",
    "price_bill",
    "price_request",
    "unverified_prices",
]

ROOT_TARGET_ID = "root"
"""``target_id`` of the root volume's components."""
_GIB_PER_TIB = 1024

Category = Literal["compute", "storage"]
Surcharge = Literal["licence", "ebs-optimized"]
T = TypeVar("T")


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


def _num(value: float) -> str:
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


class PriceLookup:
    """Asks the book; a missing price is recorded (named) in ``missing`` instead of aborting the estimate."""

    def __init__(self) -> None:
        self.missing: list[str] = []

    def unknown(self, message: str) -> None:
        """A billed quantity the request does not give: like a missing price, the total is a lower bound."""
        if message not in self.missing:
            self.missing.append(message)

    def __call__(self, what: str, ask: Callable[[], T]) -> T | None:
        try:
            return ask()
        except PriceNotFound as exc:
            message = str(exc) or f"no price for {what}"
            if message not in self.missing:
                self.missing.append(message)
            return None


def asking(book: PriceBook, key: PriceKey) -> Callable[[], Price]:
    """The question ``PriceLookup`` asks, bound to its key (safe to build in a loop)."""
    return lambda: book.price(key)


def _component(
    name: str,
    price: Price,
    quantity: float,
    *,
    target_id: str | None,
    member: int | None,
    category: Category,
    detail: str,
) -> CostComponent:
    return CostComponent.model_validate(
        {
            "name": name,
            "target_id": target_id,
            "member": member,
            "category": category,
            "quantity": quantity,
            "unit": price.unit,
            "unit_usd": price.usd,
            "monthly_usd": quantity * price.usd,
            "source": price.source,
            "as_of": price.as_of,
            "sku": price.sku,
            "detail": detail,
            "unverified": price.unverified,
        }
    )


def _tier_units(quantity: float, tiers: list[PriceTier]) -> list[tuple[PriceTier, float]]:
    """How many of ``quantity`` units fall in each tier (tiers of the count, [begin, end))."""
    out: list[tuple[PriceTier, float]] = []
    for tier in sorted(tiers, key=lambda t: t.begin):
        top = quantity if tier.end is None else min(quantity, tier.end)
        units = top - tier.begin
        if units > 0:
            out.append((tier, units))
    return out


def _tier_label(tier: PriceTier, tiers: list[PriceTier]) -> str:
    if len(tiers) == 1 and tier.begin == 0 and tier.end is None:
        return ""
    if tier.end is None:
        return f" above {_num(tier.begin)}"
    return f" {_num(tier.begin)}-{_num(tier.end)}"


def ebs_volume_components(
    book: PriceBook,
    volume_type: str,
    size_gib: float,
    iops: int | None,
    throughput_mibps: float | None,
    *,
    target_id: str,
    member: int | None = None,
    ask: PriceLookup | None = None,
) -> tuple[list[CostComponent], list[str]]:
    """Monthly components of one EBS volume, and notes (usage-priced extras).

    IOPS are priced only for types that take them, above what the type includes (gp3: 3,000),
    by tier of this volume's IOPS count; throughput only where provisionable, above the included
    125 MiB/s (gp3). Defaults come from the catalog (gp3 without iops is 3,000 IOPS).
    """
    asker = ask or PriceLookup()
    spec = ebs_volume_type(volume_type)
    where = f"{target_id}" + (f"[{member}]" if member is not None else "")
    components: list[CostComponent] = []
    notes: list[str] = []
    storage = asker(f"EBS {volume_type} storage", lambda: book.price(PriceKey("ebs_storage", (volume_type,))))
    if storage is not None:
        components.append(
            _component(
                "ebs-storage",
                storage,
                size_gib,
                target_id=target_id,
                member=member,
                category="storage",
                detail=(
                    f"{where}: {volume_type} {_num(size_gib)} GiB x {fmt_rate(storage.usd)}/{storage.unit}"
                ),
            )
        )
    if spec.iops is not None:
        effective = iops if iops is not None else spec.iops.default
        included = spec.included_iops or 0
        if effective is not None and effective > included:
            tiers = asker(
                f"EBS {volume_type} provisioned IOPS", lambda: book.price(TierKey("ebs_iops", (volume_type,)))
            )
            for tier, units in _tier_units(effective, tiers or []):
                label = _tier_label(tier, tiers or [])
                components.append(
                    _component(
                        "ebs-iops",
                        tier.price,
                        units,
                        target_id=target_id,
                        member=member,
                        category="storage",
                        detail=(
                            f"{where}: {volume_type} IOPS{label}: {_num(units)} of {_num(effective)} "
                            f"x {fmt_rate(tier.price.usd)}/{tier.price.unit}"
                        ),
                    )
                )
    rule = spec.throughput_mibps
    if rule is not None:
        effective_tp = throughput_mibps if throughput_mibps is not None else rule.default
        included_tp = spec.included_mibps or 0
        if effective_tp is not None and effective_tp > included_tp:
            tp_tiers = asker(
                f"EBS {volume_type} provisioned throughput",
                lambda: book.price(TierKey("ebs_throughput", (volume_type,))),
            )
            for tier, units in _tier_units(effective_tp, tp_tiers or []):
                components.append(
                    _component(
                        "ebs-throughput",
                        tier.price,
                        units,
                        target_id=target_id,
                        member=member,
                        category="storage",
                        detail=(
                            f"{where}: {volume_type} throughput above {_num(tier.begin)} MiB/s: "
                            f"{_num(units)} of {_num(effective_tp)} "
                            f"x {fmt_rate(tier.price.usd)}/{tier.price.unit}"
                        ),
                    )
                )
    if volume_type == "standard":
        notes.append(
            f"{where}: magnetic (standard) volumes also bill I/O requests per million: usage-priced, "
            "not in the monthly figure"
        )
    return components, notes


def efs_components(
    book: PriceBook, target: EfsTarget, *, stored_gib: float | None = None, ask: PriceLookup | None = None
) -> tuple[list[CostComponent], list[str], list[str]]:
    """Monthly EFS components, notes, and what is left unpriced (storage without a size hint).

    ``stored_gib`` overrides the target's ``storage_gib_hint`` (a run's measured average).
    """
    asker = ask or PriceLookup()
    tid = str(target.id)
    components: list[CostComponent] = []
    notes: list[str] = []
    unpriced: list[str] = []
    stored = stored_gib if stored_gib is not None else target.storage_gib_hint
    rules = load_catalog().efs
    storage_class = "One Zone" if target.one_zone else "Standard"
    if stored is None:
        # Not "left out by design" (unpriced) but billed and unknown: the total is a lower bound.
        asker.unknown(
            f"{tid}: EFS {storage_class} storage not priced: EFS bills the data stored and the request "
            "gives no storage_gib_hint"
        )
    else:
        price = asker(
            f"EFS {storage_class} storage", lambda: book.price(PriceKey("efs_storage", (target.one_zone,)))
        )
        if price is not None:
            components.append(
                _component(
                    "efs-storage",
                    price,
                    stored,
                    target_id=tid,
                    member=None,
                    category="storage",
                    detail=(
                        f"{tid}: EFS {storage_class} {_num(stored)} GiB stored "
                        f"x {fmt_rate(price.usd)}/{price.unit}"
                    ),
                )
            )
    if target.throughput_mode == "provisioned":
        provisioned = float(target.provisioned_throughput_mibps or 0)
        included = (stored or 0) / _GIB_PER_TIB * rules.baseline_mibps_per_tib
        billed = max(0.0, provisioned - included)
        if stored is None:
            notes.append(
                f"{tid}: without storage_gib_hint no throughput is counted as included by stored data: "
                "the provisioned-throughput charge is an upper bound"
            )
        if billed > 0:
            price = asker(
                "EFS provisioned throughput", lambda: book.price(PriceKey("efs_provisioned_throughput"))
            )
            if price is not None:
                components.append(
                    _component(
                        "efs-throughput",
                        price,
                        billed,
                        target_id=tid,
                        member=None,
                        category="storage",
                        detail=(
                            f"{tid}: EFS provisioned {_num(provisioned)} MiB/s less {_num(included)} MiB/s "
                            f"included by {_num(stored or 0)} GiB stored "
                            f"({_num(rules.baseline_mibps_per_tib)} MiB/s per TiB): {_num(billed)} "
                            f"x {fmt_rate(price.usd)}/{price.unit}"
                        ),
                    )
                )
        else:
            notes.append(
                f"{tid}: provisioned {_num(provisioned)} MiB/s is within the {_num(included)} MiB/s the "
                "stored data includes: no throughput charge"
            )
    elif target.throughput_mode == "elastic":
        read = asker("EFS Elastic reads", lambda: book.price(PriceKey("efs_elastic_transfer", ("read",))))
        write = asker("EFS Elastic writes", lambda: book.price(PriceKey("efs_elastic_transfer", ("write",))))
        rates = (
            f" ({fmt_rate(read.usd)}/{read.unit} read, {fmt_rate(write.usd)}/{write.unit} written)"
            if read is not None and write is not None
            else ""
        )
        unpriced.append(
            f"{tid}: EFS Elastic throughput is usage-priced per GB transferred{rates}: "
            "not in the monthly figure (a run's cost counts the bytes it moved)"
        )
    else:
        notes.append(
            f"{tid}: EFS bursting throughput is included in the storage price "
            f"({_num(rules.baseline_mibps_per_tib)} MiB/s per TiB stored baseline, bursts to at least "
            f"{_num(rules.burst_floor_mibps)} MiB/s)"
        )
    return components, notes, unpriced


def fsx_lustre_components(
    book: PriceBook, target: FsxLustreTarget, *, ask: PriceLookup | None = None
) -> list[CostComponent]:
    """FSx for Lustre: capacity x the deployment type's (and throughput tier's) GB-month price."""
    asker = ask or PriceLookup()
    tid = str(target.id)
    tier = f" {target.per_unit_storage_throughput} MB/s/TiB" if target.per_unit_storage_throughput else ""
    price = asker(
        f"FSx for Lustre {target.deployment_type}{tier} storage",
        lambda: book.price(
            PriceKey("fsx_lustre_storage", (target.deployment_type, target.per_unit_storage_throughput))
        ),
    )
    if price is None:
        return []
    return [
        _component(
            "fsx-storage",
            price,
            target.storage_capacity_gib,
            target_id=tid,
            member=None,
            category="storage",
            detail=(
                f"{tid}: FSx for Lustre {target.deployment_type}{tier} "
                f"{_num(target.storage_capacity_gib)} GiB "
                f"x {fmt_rate(price.usd)}/{price.unit}"
            ),
        )
    ]


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


def _instance_hours(
    book: PriceBook, kind: str, asker: PriceLookup, name: str, *, target_id: str | None, label: str
) -> list[CostComponent]:
    """A month of on-demand hours of one instance type (none when the book lacks its price)."""
    hourly = asker(f"EC2 {kind} on-demand", lambda: book.price(PriceKey("ec2_instance_hour", (kind,))))
    if hourly is None:
        return []
    detail = f"{label}: {HOURS_PER_MONTH} h x {fmt_rate(hourly.usd)}/{hourly.unit} (on-demand Linux)"
    return [
        _component(
            name,
            hourly,
            HOURS_PER_MONTH,
            target_id=target_id,
            member=None,
            category="compute",
            detail=detail,
        )
    ]


def launch_surcharges(
    book: PriceBook, instance: str, operating_system: str, ebs_optimized: bool, asker: PriceLookup
) -> list[tuple[Surcharge, Price, str]]:
    """What a launch adds per hour to the Linux instance price: the image's licence (RHEL: its
    instance-hour minus Linux's) and the EBS optimisation fee where it is optional.

    Returns ``(component name, hourly price, what it is)``; a price the book lacks is named in
    ``asker.missing`` and left out, like every other price.
    """
    extras: list[tuple[Surcharge, Price, str]] = []
    if operating_system != "Linux":
        with_os = asker(
            f"EC2 {instance} on-demand {operating_system}",
            asking(book, PriceKey("ec2_os_instance_hour", (instance, operating_system))),
        )
        linux = asker(f"EC2 {instance} on-demand", asking(book, PriceKey("ec2_instance_hour", (instance,))))
        if with_os is not None and linux is not None:
            licence = with_os.model_copy(
                update={
                    "usd": max(0.0, with_os.usd - linux.usd),
                    "sku": None,
                    "description": f"{operating_system} instance-hour minus Linux instance-hour",
                }
            )
            extras.append(("licence", licence, f"{operating_system} licence"))
    if ebs_optimized:
        fee = asker(
            f"EC2 {instance} EBS-optimized fee", asking(book, PriceKey("ec2_ebs_optimized_hour", (instance,)))
        )
        if fee is not None:
            extras.append(("ebs-optimized", fee, "EBS-optimized fee"))
    return extras


def price_bill(
    book: PriceBook, bill: Bill, *, ask: PriceLookup | None = None
) -> tuple[list[CostComponent], list[str], list[str]]:
    """A target's resources priced for a month: (components, notes, what is not priced)."""
    asker = ask or PriceLookup()
    components: list[CostComponent] = []
    notes: list[str] = []
    unpriced: list[str] = []
    for item in bill.items:
        if isinstance(item, EbsVolumeBill):
            parts, extra = ebs_volume_components(
                book,
                item.volume_type,
                item.size_gib,
                item.iops,
                item.throughput_mibps,
                target_id=item.target_id,
                member=item.member,
                ask=asker,
            )
            components += parts
            notes += extra if not item.member else []  # a stripe's notes once, with its first volume
        elif isinstance(item, InstanceBill):
            components += _instance_hours(
                book, item.instance_type, asker, item.name, target_id=item.target_id, label=item.label
            )
        elif isinstance(item, EfsBill):
            parts, extra, left_out = efs_components(book, item.target, ask=asker)
            components += parts
            notes += extra
            unpriced += left_out
        else:
            components += fsx_lustre_components(book, item.target, ask=asker)
    return components, notes + list(bill.notes), unpriced + list(bill.unpriced)


# ----------------------------------------------------------------------------------- configs


def _times(components: list[CostComponent], count: int, node: str | None) -> list[CostComponent]:
    """``count`` identical machines' lines: quantities and totals multiplied, said in the detail."""
    if count == 1 and node is None:
        return components
    return [
        c.model_copy(
            update={
                "quantity": c.quantity * count,
                "monthly_usd": c.monthly_usd * count,
                "count": count,
                "node": node,
                "detail": f"{count} x {c.detail}" if count > 1 else c.detail,
            }
        )
        for c in components
    ]


def _machine_components(
    book: PriceBook,
    asker: PriceLookup,
    machine: Config | NodeGroup,
    *,
    instance_name: Literal["instance", "node-instance"],
    prefix: str,
) -> tuple[list[CostComponent], list[CostComponent], list[str], list[str]]:
    """One machine of a config, a client or a node: (its instance lines, its targets' lines, notes,
    unpriced). Target ids get ``prefix`` (a node's ``<role>:``)."""
    instance = machine.instance_type
    label = instance if isinstance(machine, Config) else f"{machine.role} {instance}"
    components = _instance_hours(book, instance, asker, instance_name, target_id=None, label=label)
    notes: list[str] = []
    unpriced: list[str] = []
    system = operating_system(machine.image)
    optimized = bool(machine.launch_ebs_optimized)
    for name, hourly, what in launch_surcharges(book, instance, system, optimized, asker):
        rated = f"{HOURS_PER_MONTH} h x {fmt_rate(hourly.usd)}/{hourly.unit}"
        components.append(
            _component(
                name,
                hourly,
                HOURS_PER_MONTH,
                target_id=None,
                member=None,
                category="compute",
                detail=f"{instance} {what}: {rated}",
            )
        )
    spec = instance_type(instance)
    if (
        isinstance(machine, Config)
        and spec is not None
        and not spec.ebs_optimized_by_default
        and not optimized
    ):
        notes.append(
            f"{instance} launched without EBS optimisation (ebs_optimized false): its EBS "
            "traffic shares the network, the catalog's EBS limits do not apply"
        )
    if machine.image not in load_catalog().images:
        notes.append(
            f"image {machine.image}: priced as Linux; an AMI with a licence charge (RHEL, SUSE, Windows) "
            "costs more than shown"
        )
    root = machine.root_volume
    parts, extra = ebs_volume_components(
        book,
        root.type,
        root.size_gib,
        root.iops,
        root.throughput_mibps,
        target_id=f"{prefix}{ROOT_TARGET_ID}",
        ask=asker,
    )
    components += parts
    notes += extra
    targets: list[CostComponent] = []
    served_by = [g.role for g in machine.nodes] if isinstance(machine, Config) else []
    for target in machine.targets:
        bill = kind_of(target).bill(target, instance)
        parts, extra, left_out = price_bill(book, bill, ask=asker)
        targets += [
            p.model_copy(update={"target_id": f"{prefix}{p.target_id}", "detail": f"{prefix}{p.detail}"})
            for p in parts
        ]
        notes += extra
        if served_by and target.kind == "local":  # what backs the path is the nodes, priced with them
            notes.append(
                f"{target.id}: {getattr(target, 'path', '')} is served by the {', '.join(served_by)} nodes"
            )
        else:
            unpriced += left_out
    return components, targets, notes, unpriced


def monthly_cost(config: Config, book: PriceBook) -> ConfigCost:
    """The config's monthly cost: its client instance(s), root volume(s) and targets, and every node
    of its node groups with theirs (see the module docstring). Several clients share the config's
    targets (the model allows only shared kinds then), so those are priced once."""
    asker = PriceLookup()
    machine, targets, notes, unpriced = _machine_components(
        book, asker, config, instance_name="instance", prefix=""
    )
    components = _times(machine, config.clients, None) + targets
    if config.clients > 1:
        notes.append(
            f"{config.clients} clients: each client's instance and root volume, the shared targets once"
        )
    for group in config.nodes:
        machine, targets, extra, left_out = _machine_components(
            book, asker, group, instance_name="node-instance", prefix=f"{group.role}:"
        )
        shared = {f"{group.role}:{t.id}" for t in group.targets if kind_of(t).shared_by_nodes(t)}
        own = [c for c in targets if c.target_id not in shared]
        components += _times(machine + own, group.count, group.role)
        components += _times([c for c in targets if c.target_id in shared], 1, group.role)
        if shared:
            extra.append(
                f"{', '.join(sorted(shared))}: Multi-Attach, one volume attached to all {group.count} "
                "nodes, priced once"
            )
        notes += [f"{group.role} nodes: {note}" for note in extra]
        unpriced += [f"{group.role} nodes: {item}" for item in left_out]
    in_instances = [t.id for t in config.targets if kind_of(t).in_instance_price]
    in_instances += [
        f"{g.role}:{t.id}" for g in config.nodes for t in g.targets if kind_of(t).in_instance_price
    ]
    return ConfigCost(
        config_id=config.id,
        instance_type=config.instance_type,
        region=book.region,
        components=components,
        unpriced=unpriced,
        missing_prices=asker.missing,
        notes=notes,
        storage_in_instance_price=in_instances,
    )


def cost_for(config: Config, book: PriceBook, hours: float) -> DurationCost:
    """The config kept for ``hours``: its monthly cost prorated (monthly x hours / 730)."""
    return monthly_cost(config, book).for_hours(hours)


def price_request(request: BenchmarkRequest, book: PriceBook) -> dict[str, ConfigCost]:
    """Every config of a request priced, in request order, keyed by config id."""
    return {config.id: monthly_cost(config, book) for config in request.configs}


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

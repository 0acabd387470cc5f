"""Storage priced for a month: EBS volumes (storage, IOPS and throughput by tier), EFS (stored
data, provisioned throughput above the included baseline) and FSx for Lustre capacity, each a list
of :class:`~storagebench.costs.cost_lines.CostComponent`. A price the book lacks is named in the
:class:`PriceLookup`'s ``missing`` instead of aborting the estimate.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from storagebench.catalog import ebs_volume_type, load_catalog
from storagebench.costs.cost_lines import Category, CostComponent, fmt_rate
from storagebench.costs.cost_lines import num_text as _num
from storagebench.prices.book import PriceBook
from storagebench.prices.models import Price, PriceNotFound, PriceTier
from storagebench.prices.products import PriceKey, TierKey
from storagebench.request.model import EfsTarget, FsxLustreTarget

__all__ = [
    "PriceLookup",
    "asking",
    "ebs_volume_components",
    "efs_components",
    "fsx_lustre_components",
    "priced_component",
]

_GIB_PER_TIB = 1024

T = TypeVar("T")


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


def priced_component(
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
            priced_component(
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
                    priced_component(
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
                    priced_component(
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
                priced_component(
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
                    priced_component(
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
        priced_component(
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

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

from typing import Literal

from storagebench.catalog import instance_type, load_catalog
from storagebench.catalog.images import operating_system
from storagebench.costs.cost_lines import (
    ROOT_TARGET_ID,
    ConfigCost,
    CostComponent,
    DurationComponent,
    DurationCost,
    combine_sources,
    cost_delta_pct,
    costs_by_id,
    fmt_rate,
    fmt_usd,
    is_storage_under_test,
    oldest_date,
    unverified_prices,
)
from storagebench.costs.storage_prices import (
    PriceLookup,
    asking,
    ebs_volume_components,
    efs_components,
    fsx_lustre_components,
)
from storagebench.costs.storage_prices import priced_component as _component
from storagebench.kinds import Bill, kind_of
from storagebench.kinds.base import EbsVolumeBill, EfsBill, InstanceBill
from storagebench.prices.book import PriceBook
from storagebench.prices.models import HOURS_PER_MONTH, Price
from storagebench.prices.products import PriceKey
from storagebench.request.model import BenchmarkRequest, Config, NodeGroup

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


Surcharge = Literal["licence", "ebs-optimized"]


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

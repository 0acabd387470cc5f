"""AWS Price List Query API (``pricing:GetProducts``) results -> rates. Pure: no boto3, no I/O.

GetProducts answers a service code and a list of TERM_MATCH filters with ``PriceList``: one
JSON document per product (a *string* on the wire and in boto3)::

    {"product": {"sku": "...", "productFamily": "...", "attributes": {"usagetype": ..., ...}},
     "serviceCode": "...", "publicationDate": "...",
     "terms": {"OnDemand": {"<sku>.<offerTermCode>": {"priceDimensions": {"<rateCode>": {
         "pricePerUnit": {"USD": "0.0650000000"}, "unit": "IOPS-Mo",
         "beginRange": "0", "endRange": "Inf", "description": "..."}}}},
               "Reserved": {...}}}

Only ``OnDemand`` terms are read. A product's price dimensions are its tiers, from
``beginRange`` (inclusive) to ``endRange`` (exclusive; ``"Inf"`` = no end).

Two things every caller must know about usage types:

* Usage types outside us-east-1 carry a region prefix (``USE2-EBS:VolumeP-IOPS.io2``,
  ``APS1-EBS:VolumeUsage.piops``, ``CAN1-...``, ``EU-...``); EC2's own us-east-1 usage types have
  none (``EBS:VolumeP-IOPS.io2``) while other services' us-east-1 usage types may
  (``USE1-StateTransition``). So queries never filter on ``usagetype`` (the value would depend on
  the region's prefix); they filter on attributes that are the same in every region
  (``regionCode``, ``productFamily``, ``group``, ``volumeApiName``, ...) and the selection here
  compares ``base_usage_type`` (the prefix removed) with the documented usage type.
* The gp3 throughput product is priced per ``GiBps-mo``; the cost model works in MiB/s, so its
  price is divided by 1,024 (``$40.96`` per GiBps-month = ``$0.04`` per MiBps-month).

Each ``*_query`` function (``prices.queries``, re-exported here) documents the filters of one
product and why; each selector takes the
products a query returned and picks the rate(s) the ``PriceBook`` asks for, raising
``PriceNotFound`` when nothing matches and ``PriceListError`` when the data is malformed or
ambiguous. The filters marked *unverified* below (EFS Elastic throughput, FSx for Lustre
attributes) follow public third-party code, not an AWS document; a refresh that cannot match
them says so instead of guessing.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from storagebench.prices.models import PriceNotFound
from storagebench.prices.pricelist_documents import (
    PriceDimension,
    PriceListError,
    Product,
    base_usage_type,
    parse_price_list,
    parse_product,
)
from storagebench.prices.queries import (
    Query,
    ebs_iops_query,
    ebs_storage_query,
    ebs_throughput_query,
    ec2_ebs_optimized_query,
    ec2_instance_query,
    ec2_os_instance_query,
    efs_query,
    fsx_lustre_query,
    lambda_query,
    stepfunctions_query,
)

__all__ = [
    "EBS_IOPS_USAGE",
    "EBS_STORAGE_USAGE",
    "EBS_VOLUME_TYPES",
    "FSX_DEPLOYMENT_TYPES",
    "GP3_INCLUDED_IOPS",
    "GP3_INCLUDED_MIBPS",
    "IO2_TIERS",
    "MIB_PER_GIB",
    "PriceDimension",
    "PriceListError",
    "Product",
    "Query",
    "Rate",
    "base_usage_type",
    "canonical_unit",
    "check_volume_type",
    "ebs_iops",
    "ebs_iops_query",
    "ebs_optimized_hour",
    "ebs_storage",
    "ebs_storage_query",
    "ebs_throughput",
    "ebs_throughput_query",
    "ec2_ebs_optimized_query",
    "ec2_instance_query",
    "ec2_os_instance_query",
    "efs_elastic_transfer",
    "efs_provisioned_throughput",
    "efs_query",
    "efs_storage",
    "fsx_key",
    "fsx_lustre_query",
    "fsx_lustre_storage",
    "instance_hour",
    "lambda_gb_second",
    "lambda_query",
    "lambda_request",
    "os_instance_hour",
    "parse_price_list",
    "parse_product",
    "stepfunctions_query",
    "stepfunctions_transition",
]

MIB_PER_GIB = 1024
GP3_INCLUDED_IOPS = 3000
GP3_INCLUDED_MIBPS = 125

EBS_VOLUME_TYPES = ("gp2", "gp3", "io1", "io2", "st1", "sc1", "standard")
# Storage usage types (EBS User Guide / Cost and Usage Report); io1 keeps its pre-io2 name.
EBS_STORAGE_USAGE = {
    "gp2": "EBS:VolumeUsage.gp2",
    "gp3": "EBS:VolumeUsage.gp3",
    "io1": "EBS:VolumeUsage.piops",
    "io2": "EBS:VolumeUsage.io2",
    "st1": "EBS:VolumeUsage.st1",
    "sc1": "EBS:VolumeUsage.sc1",
    "standard": "EBS:VolumeUsage",
}
# Provisioned IOPS usage types; gp2, st1, sc1 and standard have no IOPS charge.
EBS_IOPS_USAGE = {
    "io1": ("EBS:VolumeP-IOPS.piops",),
    "io2": ("EBS:VolumeP-IOPS.io2", "EBS:VolumeP-IOPS.io2.tier2", "EBS:VolumeP-IOPS.io2.tier3"),
    "gp3": ("EBS:VolumeP-IOPS.gp3",),
}
GP3_THROUGHPUT_USAGE = "EBS:VolumeP-Throughput.gp3"
# io2 IOPS tiers per volume (EBS pricing): to 32,000; 32,001 to 64,000; above 64,000. The Price
# List may list each tier as its own usage type priced 0-Inf; then these bounds place them.
IO2_TIERS: dict[str, tuple[float, float | None]] = {
    "EBS:VolumeP-IOPS.io2": (0, 32000),
    "EBS:VolumeP-IOPS.io2.tier2": (32000, 64000),
    "EBS:VolumeP-IOPS.io2.tier3": (64000, None),
}

EFS_STANDARD_USAGE = "TimedStorage-ByteHrs"
EFS_ONE_ZONE_USAGE = "TimedStorage-Z-ByteHrs"
EFS_PROVISIONED_USAGE = "ProvisionedTP-MiBpsHrs"

FSX_DEPLOYMENT_TYPES: dict[str, tuple[int, ...]] = {
    "SCRATCH_1": (),
    "SCRATCH_2": (),
    "PERSISTENT_1": (50, 100, 200),
    "PERSISTENT_2": (125, 250, 500, 1000),
}

LAMBDA_DURATION_GROUP = {"x86_64": "AWS-Lambda-Duration", "arm64": "AWS-Lambda-Duration-ARM"}
LAMBDA_REQUEST_GROUP = "AWS-Lambda-Requests"
STATES_TRANSITION_USAGE = "StateTransition"


# Price List unit spellings -> the units ``Price.unit`` uses.
_UNITS = {
    "hrs": "Hrs",
    "hours": "Hrs",
    "gb-mo": "GB-Mo",
    "gb-month": "GB-Mo",  # io2 storage is listed with the long spelling
    "iops-mo": "IOPS-Mo",
    "mibps-mo": "MiBps-Mo",
    "gibps-mo": "GiBps-mo",
    "gb": "GB",
    "request": "Request",
    "requests": "Request",
    "lambda-gb-second": "GB-Second",
    "gb-second": "GB-Second",
    "gb-seconds": "GB-Second",
    "transition": "Transition",
    "transitions": "Transition",
    "statetransition": "Transition",
    "statetransitions": "Transition",
    "state transitions": "Transition",
}


# --------------------------------------------------------------------------------- rates


@dataclass(frozen=True)
class Rate:
    """A price as the PriceBook needs it, with where it came from in the Price List."""

    usd: float
    unit: str
    begin: float = 0
    end: float | None = None
    sku: str | None = None
    usagetype: str | None = None
    rate_code: str | None = None
    description: str | None = None
    api_unit: str | None = None  # set when the listed unit was converted
    api_usd: float | None = None


def canonical_unit(raw: str) -> str:
    """The Price List's unit in ``Price.unit``'s spelling (unknown units are returned as listed)."""
    return _UNITS.get(raw.strip().lower(), raw.strip())


def _unit(dimension: PriceDimension, expected: Sequence[str], what: str) -> str:
    unit = canonical_unit(dimension.unit)
    if unit not in expected:
        raise PriceListError(f"{what}: unit {dimension.unit!r}, expected {' or '.join(expected)}")
    return unit


def _rate(product: Product, dimension: PriceDimension, unit: str, **changes: Any) -> Rate:
    values: dict[str, Any] = {
        "usd": dimension.usd,
        "unit": unit,
        "begin": dimension.begin,
        "end": dimension.end,
        "sku": product.sku,
        "usagetype": product.usagetype or None,
        "rate_code": dimension.rate_code,
        "description": dimension.description or None,
    }
    values.update(changes)
    return Rate(**values)


def _first_paid(product: Product, what: str) -> PriceDimension:
    """The price of a single-price product: its lowest tier that is not free (a free-tier
    dimension priced 0 comes first in some services; volume discounts come after)."""
    if not product.dimensions:
        raise PriceListError(f"{what}: product {product.sku} has no on-demand price")
    return next((d for d in product.dimensions if d.usd > 0), product.dimensions[0])


def _regional(products: Iterable[Product]) -> list[Product]:
    """Products of an AWS Region (not a Local Zone or Wavelength Zone), with on-demand prices."""
    return [
        p for p in products if p.dimensions and p.attributes.get("locationType", "AWS Region") == "AWS Region"
    ]


def _one(matches: list[Product], what: str, returned: int) -> Product:
    if not matches:
        raise PriceNotFound(f"{what}: none of the {returned} product(s) the Price List returned matches")
    prices = {_first_paid(p, what).usd for p in matches}
    if len(prices) > 1:
        skus = ", ".join(f"{p.sku} ({p.usagetype}) ${_first_paid(p, what).usd}" for p in matches)
        raise PriceListError(f"{what}: {len(matches)} products match with different prices: {skus}")
    return sorted(matches, key=lambda p: p.sku)[0]


def _single(product: Product, what: str, units: Sequence[str]) -> Rate:
    dimension = _first_paid(product, what)
    return _rate(product, dimension, _unit(dimension, units, what), begin=0, end=None)


def check_volume_type(volume_type: str, what: str | None = None) -> None:
    """``PriceNotFound`` naming the known EBS volume types when ``volume_type`` is none of them."""
    if volume_type not in EBS_STORAGE_USAGE:
        reason = f"unknown EBS volume type {volume_type!r} (known: {', '.join(EBS_VOLUME_TYPES)})"
        raise PriceNotFound(f"{what}: {reason}" if what else reason)


def instance_hour(products: Sequence[Product], instance_type: str) -> Rate:
    """On-demand Linux per hour: the ``BoxUsage:<type>`` product (dedicated and host usage excluded)."""
    return os_instance_hour(products, instance_type, "Linux")


def os_instance_hour(products: Sequence[Product], instance_type: str, operating_system: str) -> Rate:
    """On-demand per hour for an operating system: its ``BoxUsage:<type>`` product (older Linux
    lists leave ``operatingSystem`` empty)."""
    what = f"EC2 {instance_type} on-demand {operating_system}"
    accepted = ("", "Linux") if operating_system == "Linux" else (operating_system,)
    matches = [
        p
        for p in _regional(products)
        if p.attribute("instanceType") == instance_type
        and p.base_usage_type.startswith("BoxUsage:")
        and p.attribute("operatingSystem") in accepted
    ]
    return _single(_one(matches, what, len(products)), what, ("Hrs",))


def ebs_optimized_hour(products: Sequence[Product], instance_type: str) -> Rate:
    """The hourly fee for launching a type EBS-optimized where that is optional."""
    what = f"EC2 {instance_type} EBS-optimized fee"
    matches = [p for p in _regional(products) if p.base_usage_type == f"EBSOptimized:{instance_type}"]
    return _single(_one(matches, what, len(products)), what, ("Hrs",))


def ebs_storage(products: Sequence[Product], volume_type: str) -> Rate:
    """Per GB-month; matched on ``volumeApiName`` (older lists without it: on the usage type)."""
    what = f"EBS {volume_type} storage"
    check_volume_type(volume_type, what)

    def matches(p: Product) -> bool:
        api_name = p.attribute("volumeApiName")
        if api_name:
            return api_name == volume_type
        return p.base_usage_type == EBS_STORAGE_USAGE[volume_type]

    found = [p for p in _regional(products) if p.product_family == "Storage" and matches(p)]
    return _single(_one(found, what, len(products)), what, ("GB-Mo",))


def _io2_tiers(matched: list[Product], what: str) -> list[Rate]:
    pairs = [(p, d) for p in matched for d in p.dimensions]
    stated = any(d.begin > 0 or d.end is not None for _, d in pairs)
    rates: list[Rate] = []
    for product, dimension in pairs:
        unit = _unit(dimension, ("IOPS-Mo",), what)
        if stated:  # the list states the tier ranges itself
            rates.append(_rate(product, dimension, unit))
        else:  # one usage type per tier, each listed 0-Inf: place them by the documented tiers
            begin, end = IO2_TIERS[product.base_usage_type]
            rates.append(_rate(product, dimension, unit, begin=begin, end=end))
    rates.sort(key=lambda r: r.begin)
    bounds = [(r.begin, r.end) for r in rates]
    contiguous = all(a.end == b.begin for a, b in itertools.pairwise(rates))
    if not rates or rates[0].begin != 0 or rates[-1].end is not None or not contiguous:
        raise PriceListError(f"{what}: tiers do not cover 0 to no end without gaps: {bounds}")
    return rates


def ebs_iops(products: Sequence[Product], volume_type: str) -> list[Rate]:
    """Per provisioned IOPS-month, by tier of the IOPS count.

    io1: one tier. io2: three tiers, from beginRange/endRange when the list states them, else
    from the tier usage types (``.io2``, ``.io2.tier2``, ``.io2.tier3``). gp3: one tier
    starting at the 3,000 IOPS every gp3 volume includes. gp2, st1, sc1, standard: no IOPS
    charge, an empty list.
    """
    what = f"EBS {volume_type} provisioned IOPS"
    check_volume_type(volume_type, what)
    usage_types = EBS_IOPS_USAGE.get(volume_type)
    if usage_types is None:
        return []
    matched = [
        p
        for p in _regional(products)
        if p.base_usage_type in usage_types and p.attribute("group") in ("", "EBS IOPS")
    ]
    if not matched:
        raise PriceNotFound(
            f"{what}: none of the {len(products)} product(s) the Price List returned has usage type "
            + " or ".join(usage_types)
        )
    if volume_type == "io2":
        return _io2_tiers(matched, what)
    product = _one(matched, what, len(products))
    dimension = _first_paid(product, what)
    unit = _unit(dimension, ("IOPS-Mo",), what)
    if volume_type == "gp3":
        return [_rate(product, dimension, unit, begin=max(dimension.begin, GP3_INCLUDED_IOPS), end=None)]
    return [_rate(product, dimension, unit, begin=0, end=None)]


def ebs_throughput(products: Sequence[Product], volume_type: str) -> list[Rate]:
    """gp3: per MiB/s-month above the 125 MiB/s included. The list prices it per GiBps-month;
    it is converted here (price / 1,024). Other volume types: no throughput charge, ``[]``."""
    what = f"EBS {volume_type} provisioned throughput"
    check_volume_type(volume_type, what)
    if volume_type != "gp3":
        return []
    matched = [p for p in _regional(products) if p.base_usage_type == GP3_THROUGHPUT_USAGE]
    product = _one(matched, what, len(products))
    dimension = _first_paid(product, what)
    unit = _unit(dimension, ("GiBps-mo", "MiBps-Mo"), what)
    if unit == "GiBps-mo":
        return [
            _rate(
                product,
                dimension,
                "MiBps-Mo",
                usd=dimension.usd / MIB_PER_GIB,
                begin=max(dimension.begin * MIB_PER_GIB, GP3_INCLUDED_MIBPS),
                end=None,
                api_unit=dimension.unit,
                api_usd=dimension.usd,
            )
        ]
    return [_rate(product, dimension, unit, begin=max(dimension.begin, GP3_INCLUDED_MIBPS), end=None)]


def efs_storage(products: Sequence[Product], one_zone: bool) -> Rate:
    """EFS Standard (``TimedStorage-ByteHrs``) or One Zone (``TimedStorage-Z-ByteHrs``) per GB-month."""
    usage = EFS_ONE_ZONE_USAGE if one_zone else EFS_STANDARD_USAGE
    what = f"EFS {'One Zone' if one_zone else 'Standard'} storage"
    matched = [p for p in _regional(products) if p.base_usage_type == usage]
    return _single(_one(matched, what, len(products)), what, ("GB-Mo",))


def efs_provisioned_throughput(products: Sequence[Product]) -> Rate:
    """Per MiB/s-month (``ProvisionedTP-MiBpsHrs``). EFS provisions in MiB/s
    (``ProvisionedThroughputInMibps``) though its pricing page writes MB/s, so both spellings
    of the unit are read as MiBps-Mo."""
    what = "EFS provisioned throughput"
    matched = [p for p in _regional(products) if p.base_usage_type == EFS_PROVISIONED_USAGE]
    product = _one(matched, what, len(products))
    dimension = _first_paid(product, what)
    if dimension.unit.strip().lower() in ("mbps-mo", "mb/s-mo"):
        return _rate(product, dimension, "MiBps-Mo", begin=0, end=None, api_unit=dimension.unit)
    return _rate(product, dimension, _unit(dimension, ("MiBps-Mo",), what), begin=0, end=None)


def efs_elastic_transfer(products: Sequence[Product], direction: Literal["read", "write"]) -> Rate:
    """Elastic throughput per GB transferred. Unverified matcher: no AWS document at hand names
    the usage type, so any product whose usage type (or throughput attribute) says "Elastic" and
    whose usage type or ``accessType`` says the direction, priced per GB, matches."""
    what = f"EFS Elastic throughput {direction}s"

    def matches(p: Product) -> bool:
        usage = p.base_usage_type.lower()
        label = " ".join([usage, p.attribute("throughputClass"), p.attribute("throughputMode")]).lower()
        said = " ".join([usage, p.attribute("accessType"), p.attribute("operation")]).lower()
        if "elastic" not in label or "infrequent" in label:
            return False
        return direction in said and all(canonical_unit(d.unit) == "GB" for d in p.dimensions)

    matched = [p for p in _regional(products) if matches(p)]
    return _single(_one(matched, what, len(products)), what, ("GB",))


def fsx_key(deployment_type: str, per_unit_throughput: int | None) -> str:
    """The snapshot key of an FSx for Lustre storage price: ``SCRATCH_2``, ``PERSISTENT_2/250``
    (scratch types have no throughput tiers: ``per_unit_throughput`` is ignored for them)."""
    deployment = deployment_type.upper()
    tiers = FSX_DEPLOYMENT_TYPES.get(deployment)
    if tiers is None:
        raise PriceNotFound(
            f"unknown FSx for Lustre deployment type {deployment_type!r} "
            f"(known: {', '.join(FSX_DEPLOYMENT_TYPES)})"
        )
    if not tiers:
        return deployment
    if per_unit_throughput not in tiers:
        raise PriceNotFound(
            f"{deployment} per-unit storage throughput {per_unit_throughput} is not one of "
            f"{', '.join(map(str, tiers))} MB/s/TiB"
        )
    return f"{deployment}/{per_unit_throughput}"


def _normal(text: str) -> str:
    return re.sub(r"[^A-Z0-9]+", "_", text.upper()).strip("_")


def fsx_lustre_storage(
    products: Sequence[Product], deployment_type: str, per_unit_throughput: int | None
) -> Rate:
    """SSD storage per GB-month by deployment type and, for persistent types, throughput tier.
    Unverified attribute names (``deploymentOption`` like ``Persistent_2``, ``throughputCapacity``
    like ``250``, ``storageType`` SSD): taken from third-party code, to be confirmed by a refresh."""
    key = fsx_key(deployment_type, per_unit_throughput)
    deployment, _, tier = key.partition("/")
    what = f"FSx for Lustre {key} storage"

    def matches(p: Product) -> bool:
        if p.product_family != "Storage" or "backup" in p.base_usage_type.lower():
            return False
        if p.attribute("storageType") and p.attribute("storageType").upper() != "SSD":
            return False
        if _normal(p.attribute("deploymentOption")) != deployment:
            return False
        if tier:
            digits = re.sub(r"[^0-9]", "", p.attribute("throughputCapacity"))
            return digits == tier
        return True

    matched = [p for p in _regional(products) if matches(p)]
    return _single(_one(matched, what, len(products)), what, ("GB-Mo",))


def stepfunctions_transition(products: Sequence[Product]) -> Rate:
    """Standard workflows, per state transition (usage type ``StateTransition``; Express
    workflows are priced by request and duration under other usage types)."""
    what = "Step Functions standard state transition"
    matched = [p for p in _regional(products) if p.base_usage_type == STATES_TRANSITION_USAGE]
    return _single(_one(matched, what, len(products)), what, ("Transition",))


def lambda_gb_second(products: Sequence[Product], architecture: Literal["x86_64", "arm64"]) -> Rate:
    """Compute per GB-second (group ``AWS-Lambda-Duration`` or ``-ARM``): the first tier, since
    the monthly volume discounts start at billions of GB-seconds."""
    group = LAMBDA_DURATION_GROUP[architecture]
    what = f"Lambda {architecture} duration"
    matched = [p for p in _regional(products) if p.attribute("group") == group]
    return _single(_one(matched, what, len(products)), what, ("GB-Second",))


def lambda_request(products: Sequence[Product]) -> Rate:
    """Per request (group ``AWS-Lambda-Requests``; arm64 requests cost the same)."""
    what = "Lambda requests"
    matched = [p for p in _regional(products) if p.attribute("group") == LAMBDA_REQUEST_GROUP]
    return _single(_one(matched, what, len(products)), what, ("Request",))

"""The Price List's product documents (one JSON string per product in GetProducts' ``PriceList``)
parsed into ``Product``s with their OnDemand price dimensions (tiers); ``PriceListError`` when one
is malformed. ``prices.pricelist`` selects the rates from them and re-exports these names.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

# A usage type's region prefix: USE1-, USE2-, USW2-, EU-, EUC1-, APS1-, CAN1-, UGW1- ...
_REGION_PREFIX = re.compile(r"^[A-Z]{2,4}[0-9]?-")


class PriceListError(ValueError):
    """Price List data this module cannot use: malformed, in another currency, or ambiguous."""


@dataclass(frozen=True)
class PriceDimension:
    """One on-demand price dimension: a tier ``[begin, end)`` of the usage (``end`` None = no end)."""

    rate_code: str
    usd: float
    unit: str  # as listed
    begin: float
    end: float | None
    description: str


@dataclass(frozen=True)
class Product:
    sku: str
    service_code: str
    product_family: str
    attributes: Mapping[str, str]
    dimensions: tuple[PriceDimension, ...]  # on-demand only, ordered by begin
    publication_date: str | None = None

    @property
    def usagetype(self) -> str:
        return self.attributes.get("usagetype", "")

    @property
    def base_usage_type(self) -> str:
        return base_usage_type(self.usagetype)

    def attribute(self, name: str) -> str:
        return self.attributes.get(name, "")


def base_usage_type(usagetype: str) -> str:
    """The usage type without its region prefix: ``USE2-EBS:VolumeP-IOPS.io2`` -> ``EBS:VolumeP-IOPS.io2``."""
    return _REGION_PREFIX.sub("", usagetype, count=1)


def _number(raw: Any, what: str) -> float:
    try:
        value = float(raw)
    except (TypeError, ValueError):
        raise PriceListError(f"{what}: {raw!r} is not a number") from None
    if math.isnan(value) or value < 0:
        raise PriceListError(f"{what}: {raw!r} is not a non-negative number")
    return value


def _end(raw: Any, what: str) -> float | None:
    if raw is None or str(raw).strip().lower() in ("inf", ""):
        return None
    return _number(raw, what)


def _dimensions(terms: Mapping[str, Any], sku: str) -> tuple[PriceDimension, ...]:
    dimensions: list[PriceDimension] = []
    for term_code, term in sorted(terms.items()):
        for rate_code, dimension in sorted((term.get("priceDimensions") or {}).items()):
            what = f"{sku} {rate_code}"
            prices = dimension.get("pricePerUnit") or {}
            if "USD" not in prices:
                raise PriceListError(
                    f"{what}: no USD price (currencies {sorted(prices)}); only USD regions are supported"
                )
            dimensions.append(
                PriceDimension(
                    rate_code=str(dimension.get("rateCode") or rate_code or term_code),
                    usd=_number(prices["USD"], f"{what} pricePerUnit.USD"),
                    unit=str(dimension.get("unit", "")),
                    begin=_number(dimension.get("beginRange", "0"), f"{what} beginRange"),
                    end=_end(dimension.get("endRange"), f"{what} endRange"),
                    description=str(dimension.get("description", "")),
                )
            )
    return tuple(sorted(dimensions, key=lambda d: (d.begin, d.rate_code)))


def parse_product(item: str | Mapping[str, Any]) -> Product:
    """One ``PriceList`` entry (the JSON string boto3 returns, or the decoded document)."""
    if isinstance(item, str):
        try:
            document = json.loads(item)
        except json.JSONDecodeError as exc:
            raise PriceListError(f"a PriceList entry is not JSON: {exc}") from None
    else:
        document = item
    if not isinstance(document, Mapping) or not isinstance(document.get("product"), Mapping):
        raise PriceListError("a PriceList entry has no 'product' object")
    product = document["product"]
    attributes = {str(k): str(v) for k, v in (product.get("attributes") or {}).items()}
    sku = str(product.get("sku") or "")
    if not sku:
        raise PriceListError(
            f"a PriceList entry has no product.sku (usagetype {attributes.get('usagetype')!r})"
        )
    on_demand = (document.get("terms") or {}).get("OnDemand") or {}
    # The bulk offer files key terms by SKU first; GetProducts keys them by "<sku>.<term>".
    if sku in on_demand and isinstance(on_demand[sku], Mapping) and "priceDimensions" not in on_demand[sku]:
        on_demand = on_demand[sku]
    return Product(
        sku=sku,
        service_code=str(document.get("serviceCode") or attributes.get("servicecode", "")),
        product_family=str(product.get("productFamily", "")),
        attributes=attributes,
        dimensions=_dimensions(on_demand, sku),
        publication_date=document.get("publicationDate"),
    )


def parse_price_list(items: Iterable[str | Mapping[str, Any]]) -> list[Product]:
    """Every entry of one or more GetProducts pages, in order."""
    return [parse_product(item) for item in items]

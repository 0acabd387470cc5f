"""A request priced as one JSON document: ``storagebench cost --json`` and the API's dry run.

Monthly cost per config with its components, the delta against the baseline, the storage alone
(no instances, no root volumes) and its delta against the baseline's storage (and, for File
Gateway configs, the gateway's own monthly cost and delta against the baseline gateway) and, with ``hours``,
what keeping each config that long costs; every figure names its price source and date.
"""

from __future__ import annotations

from typing import Any

from storagebench.costs.cost_delta import monthly_cost_delta
from storagebench.costs.monthly import ConfigCost, combine_sources, oldest_date, price_request
from storagebench.prices.book import PriceBook
from storagebench.request.model import BenchmarkRequest


def _money(value: float) -> float:
    """Float noise off (927.8999999 -> 927.9), nothing a cent could notice."""
    return round(value, 6)


def cost_document(
    request: BenchmarkRequest, book: PriceBook, hours: float | None = None
) -> tuple[dict[str, Any], dict[str, ConfigCost]]:
    """The priced request (``storagebench cost --json``, the API's dry run) and each config's cost."""
    costs = price_request(request, book)
    baseline = costs[request.baseline_id]
    configs: list[dict[str, Any]] = []
    for config in request.configs:
        cost = costs[config.id]
        delta = monthly_cost_delta(cost, baseline)
        storage = monthly_cost_delta(cost, baseline, part="storage")
        entry: dict[str, Any] = {
            "id": config.id,
            "instance_type": config.instance_type,
            "monthly_usd": _money(cost.monthly_usd),
            "delta_monthly_pct": None if delta.pct is None else round(delta.pct, 4),
            "delta_monthly_reason": None if config.id == request.baseline_id else delta.reason,
            # The storage alone (targets' volumes and file systems, no instances, no root volumes):
            # what a study that prices storage, not machines, compares (field study 3).
            "storage_monthly_usd": _money(cost.storage_only_usd),
            "delta_storage_monthly_pct": None if storage.pct is None else round(storage.pct, 4),
            "delta_storage_monthly_reason": None if config.id == request.baseline_id else storage.reason,
            "storage_in_instance_price": list(cost.storage_in_instance_price),
            "price_source": cost.price_source,
            "price_date": cost.price_date,
            "complete": cost.complete,
            "components": [
                {
                    **c.model_dump(mode="json"),
                    "monthly_usd": _money(c.monthly_usd),
                }
                for c in cost.components
            ],
            "unpriced": cost.unpriced,
            "missing_prices": cost.missing_prices,
            "notes": cost.notes,
        }
        if cost.has_gateway and baseline.has_gateway:
            # Gateways compared as the study did: appliance instance and its disks, client left out.
            gateway_delta = monthly_cost_delta(cost, baseline, part="gateway")
            entry["gateway_monthly_usd"] = _money(cost.gateway_usd)
            entry["delta_gateway_monthly_pct"] = (
                None if gateway_delta.pct is None else round(gateway_delta.pct, 4)
            )
        if hours is not None:
            entry["hours_usd"] = _money(cost.for_hours(hours).usd)
        configs.append(entry)
    document: dict[str, Any] = {
        "suite": request.name,
        "region": book.region,
        "currency": "USD",
        "hours_per_month": 730,
        "baseline": request.baseline_id,
        "hours": hours,
        "price_source": combine_sources(c.source for cost in costs.values() for c in cost.components),
        "price_date": oldest_date(cost.price_date for cost in costs.values()),
        "complete": all(cost.complete for cost in costs.values()),
        "configs": configs,
    }
    return document, costs

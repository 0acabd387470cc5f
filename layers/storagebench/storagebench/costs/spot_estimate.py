"""Estimates where a config buys Spot: its instance at the bundled Spot price instead of on-demand.

A dry run, the Plan step's guardrails and ``storagebench cost`` price a config's instance with the
snapshot's Spot price (``prices.spot_snapshot``) when its purchase launches on Spot first (``spot``
and ``spot-then-on-demand``), every client of it; every other line (volumes, file systems,
surcharges, and node groups, which are always on-demand) is unchanged.
A type the snapshot lacks keeps its on-demand price, the upper bound of any Spot price, and the
estimate says so. Upper bounds stay on-demand on purpose: Spot never costs more, and an interrupted
config may be relaunched on-demand.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

from storagebench.costs.monthly import DurationComponent, DurationCost, combine_sources, fmt_rate
from storagebench.prices.models import Price
from storagebench.prices.spot_snapshot import spot_estimate, unknown_note
from storagebench.request.model import BenchmarkRequest
from storagebench.request.purchase import Purchase, effective_purchase, market_for

__all__ = ["InstanceEstimate", "instance_estimate", "request_estimates", "spot_notes", "with_spot"]


@dataclass(frozen=True)
class InstanceEstimate:
    """How a config's instance is estimated: at ``spot``, or on-demand (``note`` says why if Spot)."""

    config_id: str
    purchase: Purchase
    spot: Price | None
    note: str | None

    @property
    def spot_usd(self) -> float | None:
        return round(self.spot.usd, 6) if self.spot is not None else None


def instance_estimate(
    config_id: str, instance_type: str, purchase: Purchase, region: str
) -> InstanceEstimate:
    """The Spot price an estimate uses for the config's instance, if its first launch is on Spot."""
    if market_for(purchase, 0) != "spot":
        return InstanceEstimate(config_id, purchase, None, None)
    price = spot_estimate(region, instance_type)
    if price is None:
        note = f"{config_id}: {unknown_note(region, instance_type)}"
        return InstanceEstimate(config_id, purchase, None, note)
    return InstanceEstimate(config_id, purchase, price, None)


def request_estimates(
    request: BenchmarkRequest, stack_default: Purchase, region: str
) -> dict[str, InstanceEstimate]:
    """Every config's instance estimate, by config id (its purchase: its own, the request's, the stack's)."""
    return {
        c.id: instance_estimate(
            c.id,
            c.instance_type,
            effective_purchase(c.purchase, request.purchase, stack_default, machines=c.instance_count),
            region,
        )
        for c in request.configs
    }


def spot_notes(estimates: Iterable[InstanceEstimate]) -> list[str]:
    """What an estimate says about Spot: unknown prices, and the snapshot's date when one was used."""
    listed = list(estimates)
    notes = [e.note for e in listed if e.note]
    dates = sorted({e.spot.as_of for e in listed if e.spot is not None})
    if dates:
        count = sum(e.spot is not None for e in listed)
        notes.append(
            f"{count} config(s) estimated at the bundled Spot price (as of {', '.join(dates)}: the lowest "
            "across the region's zones); upper bounds price them on-demand: Spot never costs more, and "
            "an interrupted config may be relaunched on-demand"
        )
    return notes


def _times(count: int) -> str:
    return f"{count} x " if count > 1 else ""


def with_spot(cost: DurationCost, estimate: InstanceEstimate, instance_type: str) -> DurationCost:
    """``cost`` with its instance line at the Spot estimate (unchanged when the config is on-demand
    or its Spot price is unknown)."""
    spot = estimate.spot
    if spot is None:
        return cost
    components = [
        DurationComponent(
            name=c.name,
            target_id=c.target_id,
            member=c.member,
            detail=(
                f"{_times(c.count)}{instance_type}: {cost.hours:,.2f} h x {fmt_rate(spot.usd)}/{spot.unit} "
                "(Spot estimate, "
                f"{estimate.purchase}; {spot.description}, as of {spot.as_of})"
            ),
            usd=spot.usd * cost.hours * c.count,
            count=c.count,
        )
        if c.name == "instance"
        else c
        for c in cost.components
    ]
    dates = [d for d in (cost.price_date, spot.as_of) if d]
    return cost.model_copy(
        update={
            "components": components,
            "usd": math.fsum(c.usd for c in components),
            "price_source": combine_sources([cost.price_source, spot.source]),
            "price_date": min(dates) if dates else None,
        }
    )

"""A config's monthly cost against the baseline's, only when both figures are whole.

A total with a missing price (the book had no instance or volume price) is a lower bound: a
percentage against it reads as a fact ("+65 %") and is not one. The delta is then None and
``reason`` says which side lacks which price, for every output to show instead of a number.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict

from storagebench.costs.monthly import ConfigCost

Part = Literal["total", "gateway", "storage"]


class CostDelta(BaseModel):
    model_config = ConfigDict(frozen=True)

    pct: float | None
    reason: str | None  # set exactly when pct is None


def _lacking(cost: ConfigCost, role: str) -> str:
    """``the baseline gp3 has no price for EC2 c5.4xlarge ... (and 2 more)``: the first missing price
    by what it prices (its full text, with how to get it, is in ``missing_prices``)."""
    first = cost.missing_prices[0].split(":")[0].removeprefix("no price for ")
    more = f" (and {len(cost.missing_prices) - 1} more)" if len(cost.missing_prices) > 1 else ""
    return f"{role} {cost.config_id} has no price for {first}{more}"


def monthly_cost_delta(cost: ConfigCost, baseline: ConfigCost, part: Part = "total") -> CostDelta:
    """(cost - baseline) / baseline x 100 of the monthly total (or of the File Gateway part, or of
    the storage alone: ``ConfigCost.storage_only_usd``), or None with the reason when either side
    lacks a price or the baseline's part costs nothing."""
    reasons = []
    if baseline.missing_prices:
        reasons.append(_lacking(baseline, "the baseline"))
    if cost.missing_prices and cost.config_id != baseline.config_id:
        reasons.append(_lacking(cost, "config"))
    if reasons:
        return CostDelta(
            pct=None, reason=f"no delta: {'; '.join(reasons)}: a total missing a price is only a lower bound"
        )
    if part == "storage":
        bundled = [c for c in (baseline, cost) if c.storage_in_instance_price]
        if bundled:
            which = "; ".join(
                f"{c.config_id}'s {', '.join(c.storage_in_instance_price)} is instance store, paid "
                "inside its instance-hours"
                for c in bundled
            )
            return CostDelta(pct=None, reason=f"no storage-only delta: {which}")
    value, base = {
        "total": (cost.monthly_usd, baseline.monthly_usd),
        "gateway": (cost.gateway_usd, baseline.gateway_usd),
        "storage": (cost.storage_only_usd, baseline.storage_only_usd),
    }[part]
    if base == 0:
        what = "the storage of the baseline" if part == "storage" else "the baseline"
        return CostDelta(pct=None, reason=f"no delta: {what} {baseline.config_id} costs $0")
    return CostDelta(pct=(value - base) / base * 100.0, reason=None)

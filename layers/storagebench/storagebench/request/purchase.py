"""How a config's instances are bought: the ``purchase`` field and the market of each attempt.

``purchase`` is set per config, for the whole request, or by the stack (its DefaultPurchase
parameter); the nearest one wins, and on-demand is the default of the default:

- ``on-demand``: every attempt on-demand (what storagebench always did);
- ``spot``: every attempt on Spot, a relaunch after an interruption too;
- ``spot-then-on-demand``: the first attempt on Spot, every relaunch after an interruption
  on-demand, so an interrupted config finishes at most one interruption later.

The workflow asks :func:`market_for` at each launch with the number of interruptions the config
has had; the launch records the market the instance really got (``Resources.market``).
"""

from __future__ import annotations

from storagebench.core.launch import DEFAULT_PURCHASE, MARKETS, PURCHASES, Market, Purchase

__all__ = [
    "DEFAULT_PURCHASE",
    "MARKETS",
    "PURCHASES",
    "PURCHASE_DESCRIPTION",
    "Market",
    "Purchase",
    "effective_purchase",
    "market_for",
]

PURCHASE_DESCRIPTION = (
    "how the config's instances are bought: on-demand; spot (every launch on Spot, a relaunch after "
    "an interruption too); spot-then-on-demand (Spot first, on-demand after an interruption). A config's "
    "value wins over the request's, the request's over the stack's DefaultPurchase (on-demand unless "
    "the stack says otherwise). An interrupted config keeps its completed repetitions and is relaunched "
    "for the others; Spot is priced at the price paid (Spot price history of the instance's zone)"
)


def market_for(purchase: Purchase, interruptions: int) -> Market:
    """The market of a config's next launch, after ``interruptions`` Spot interruptions."""
    if purchase not in PURCHASES:
        raise ValueError(f"purchase {purchase!r}: allowed are {', '.join(PURCHASES)}")
    if interruptions < 0:
        raise ValueError(f"interruptions must be 0 or more, got {interruptions}")
    if purchase == "spot":
        return "spot"
    if purchase == "spot-then-on-demand":
        return "spot" if interruptions == 0 else "on-demand"
    return "on-demand"


def effective_purchase(
    config_purchase: Purchase | None,
    request_purchase: Purchase | None,
    stack_default: Purchase = DEFAULT_PURCHASE,
    *,
    machines: int = 1,
) -> Purchase:
    """The config's own purchase, else the request's, else the stack's default; on-demand for a
    config of several ``machines`` (nodes, clients), whose one interrupted machine would stop all
    (a config asking for Spot itself is refused by the request model)."""
    if machines > 1:
        return "on-demand"
    if config_purchase is not None:
        return config_purchase
    if request_purchase is not None:
        return request_purchase
    return stack_default

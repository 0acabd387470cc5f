"""Costs: what a config costs per month, what a run cost, and what each config buys against the baseline.

Pure functions over a :class:`storagebench.prices.book.PriceBook`; every figure carries the
source and date of the prices it used.
"""

from storagebench.costs.compare import Comparison, ConfigComparison, compare
from storagebench.costs.frontier import ParetoFrontier, pareto_frontier
from storagebench.costs.goals import Target, TargetResult, cheapest_meeting
from storagebench.costs.monthly import (
    ConfigCost,
    CostComponent,
    DurationCost,
    cost_delta_pct,
    cost_for,
    monthly_cost,
    price_request,
)
from storagebench.costs.run_cost import (
    ConfigTransitions,
    ConfigUsage,
    FileSystemUsage,
    LambdaUsage,
    RunCost,
    VolumeUsage,
    count_transitions,
    run_cost,
    transitions_from_states,
    usage_for_config,
)
from storagebench.costs.verdicts import verdict

__all__ = [
    "Comparison",
    "ConfigComparison",
    "ConfigCost",
    "ConfigTransitions",
    "ConfigUsage",
    "CostComponent",
    "DurationCost",
    "FileSystemUsage",
    "LambdaUsage",
    "ParetoFrontier",
    "RunCost",
    "Target",
    "TargetResult",
    "VolumeUsage",
    "cheapest_meeting",
    "compare",
    "cost_delta_pct",
    "cost_for",
    "count_transitions",
    "monthly_cost",
    "pareto_frontier",
    "price_request",
    "run_cost",
    "transitions_from_states",
    "usage_for_config",
    "verdict",
]

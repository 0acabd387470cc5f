"""A finished run's economics: what each config costs and buys against the baseline, and what the
run itself cost. Computed once at Finalize from what the store holds and stored with the run, so
``storagebench results``, the API and the report all quote the same figures and price date.

Measured inputs: each config's lifetime runs from its instance's launch (``resources.launched_at``)
to its last status write (Cleanup's; a config that never launched cost nothing); its file systems
are counted for the same span. Step Functions transitions are counted from each config's stored
path (a floor: retries are not stored). Lambda time is not measured by the workflow: it is
estimated at :data:`LAMBDA_MS_PER_INVOCATION` per invocation and said so in the notes (it is well
under 0.1 % of any run's cost).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from storagebench.core.clock import parse_iso
from storagebench.core.state import ConfigState
from storagebench.costs.compare import compare
from storagebench.costs.monthly import price_request
from storagebench.costs.run_cost import (
    ConfigUsage,
    LambdaUsage,
    RunCost,
    count_transitions,
    run_cost,
    transitions_from_state,
    usage_for_config,
)
from storagebench.prices.book import PriceBook
from storagebench.request.model import BenchmarkRequest
from storagebench.store.models import StoredConfig, decode_run

__all__ = [
    "LAMBDA_MB",
    "LAMBDA_MS_PER_INVOCATION",
    "RunEconomics",
    "config_lifetime_s",
    "economics_summary",
    "run_economics",
]

LAMBDA_MS_PER_INVOCATION = 300.0
"""Per step: local runs measure 2.0-2.5 s of orchestration per config over 7-8 invocations."""
MAX_VERDICT_CHARS = 500  # the run item stays small whatever a verdict says
LAMBDA_MB = 512  # template.yaml's Globals (Collect has 1,024 MB; the difference is noise here)


class RunEconomics(BaseModel):
    model_config = ConfigDict(extra="forbid")

    comparison: dict[str, Any] | None = Field(description="costs.compare.Comparison, as JSON")
    run_cost: dict[str, Any] | None = Field(description="costs.run_cost.RunCost, as JSON")
    notes: list[str] = Field(default_factory=list)


def _moment(text: Any) -> datetime | None:
    if not isinstance(text, str) or not text:
        return None
    try:
        return parse_iso(text)
    except ValueError:
        return None


def config_lifetime_s(config: StoredConfig, ended_at: str) -> float:
    """Seconds the config's resources existed: launch to the last status write (or the run's end)."""
    start = _moment(config.launched_at)
    if start is None:
        return 0.0  # never launched: nothing was billed
    end = _moment(config.updated_at) or _moment(ended_at)
    if end is None or end < start:
        return 0.0
    return (end - start).total_seconds()


def _states(configs: Iterable[StoredConfig], notes: list[str]) -> list[ConfigState]:
    states: list[ConfigState] = []
    for config in configs:
        if config.state is None:
            notes.append(f"config {config.config_id}: stored state unreadable, its transitions not counted")
        else:
            states.append(config.state)
    return states


def run_economics(
    request: BenchmarkRequest, stored: Mapping[str, Any], book: PriceBook, *, ended_at: str
) -> RunEconomics:
    """Costs, the comparison with the baseline and the run's cost, from a ``get_run`` document."""
    document = decode_run(stored)
    notes = list(document.notes)
    costs = price_request(request, book)
    comparison = compare(request, costs, document.records)
    items = {c.config_id: c for c in document.configs}
    usages: list[ConfigUsage] = []
    for config in request.configs:
        item = items.get(config.id)
        seconds = config_lifetime_s(item, ended_at) if item is not None else 0.0
        usages.append(usage_for_config(config, seconds))
    paths = [transitions_from_state(s) for s in _states(list(items.values()), notes)]
    transitions = count_transitions(paths)
    invocations = 2 + sum(
        1 + p.polls + p.failed_poll + (2 + p.agent_failed if p.reached_agent else 1) + 1 for p in paths
    )
    lambdas = [
        LambdaUsage(
            "workflow functions",
            invocations=invocations,
            memory_mb=LAMBDA_MB,
            avg_duration_ms=LAMBDA_MS_PER_INVOCATION,
            architecture="arm64",
        )
    ]
    cost: RunCost = run_cost(usages, book, transitions=transitions, lambdas=lambdas)
    notes += [
        "transitions counted from each config's stored path: retries are not stored, so a floor",
        f"Lambda time estimated at {LAMBDA_MS_PER_INVOCATION:g} ms x {invocations} invocations "
        f"at {LAMBDA_MB} MB, not measured",
    ]
    return RunEconomics(
        comparison=comparison.model_dump(mode="json"),
        run_cost=cost.model_dump(mode="json"),
        notes=notes,
    )


def economics_summary(economics: RunEconomics, artifact: str) -> dict[str, Any]:
    """What the run item keeps (small, bounded): per config its monthly cost, delta, price source,
    cost of this run and verdict; the run's cost; where the full comparison is."""
    comparison = economics.comparison or {}
    cost = economics.run_cost or {}
    by_config = cost.get("by_config") or {}
    return {
        "artifact": artifact,
        "baseline": comparison.get("baseline"),
        "run_cost_usd": cost.get("total_usd"),
        "orchestration_usd": cost.get("orchestration_usd"),
        "transitions": cost.get("transitions"),
        "price_source": cost.get("price_source"),
        "price_date": cost.get("price_date"),
        "configs": [
            {
                "id": c["config_id"],
                "monthly_usd": c["monthly_usd"],
                "delta_monthly_pct": c["delta_monthly_pct"],
                "cost_partial": c["cost_partial"],
                "price_source": c["price_source"],
                "price_date": c["price_date"],
                "run_usd": by_config.get(c["config_id"]),
                "verdict": c["verdict"][:MAX_VERDICT_CHARS],
            }
            for c in comparison.get("configs") or []
        ],
    }

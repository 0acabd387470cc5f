"""A finished run's economics: what each config costs and buys against the baseline, and what the
run itself cost. Computed once at Finalize from what the store holds and stored with the run, so
``storagebench results``, the API and the report all quote the same figures and price date.

Measured inputs: each config's lifetime runs from its instance's launch (``resources.launched_at``)
to its last status write (Cleanup's; a config that never launched cost nothing); its file systems
are counted for the same span. An instance EC2 launched on Spot (``resources.market``) is priced
at the Spot price it paid: its zone's Spot price history over that span, time-weighted; the
attempts a Spot interruption ended before a relaunch are priced the same way, each from its launch
to its interruption (``earlier_attempts``). Step
Functions transitions are counted from each config's stored path (a floor: retries are not
stored). Lambda time is not measured by the workflow: it is estimated at
:data:`LAMBDA_MS_PER_INVOCATION` per invocation and said so in the notes (it is well under 0.1 %
of any run's cost).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import replace
from datetime import datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from storagebench.core.clock import parse_iso
from storagebench.core.errors import WorkflowError
from storagebench.core.state import ConfigState
from storagebench.costs.compare import compare
from storagebench.costs.monthly import price_request
from storagebench.costs.run_cost import (
    ConfigUsage,
    LambdaUsage,
    RunCost,
    count_transitions,
    other_machine_usages,
    run_cost,
    transitions_from_state,
    usage_for_config,
)
from storagebench.prices.book import PriceBook
from storagebench.prices.spot import SpotCharge, SpotPriceHistory, SpotPriceUnavailable, paid
from storagebench.request.model import BenchmarkRequest, Config
from storagebench.store.models import StoredConfig, decode_run

__all__ = [
    "LAMBDA_MB",
    "LAMBDA_MS_PER_INVOCATION",
    "RunEconomics",
    "config_lifetime_s",
    "earlier_attempts",
    "economics_summary",
    "run_economics",
    "spot_charge",
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


def _charge(
    what: str,
    market: str | None,
    zone: str | None,
    span: tuple[datetime | None, datetime | None],
    instance_type: str,
    history: SpotPriceHistory | None,
    notes: list[str],
) -> SpotCharge | None:
    """What one instance paid when it ran on Spot; None for on-demand, or (with a note) when it
    cannot be priced so: it is then priced on-demand, the upper bound of any Spot price."""
    if market != "spot":
        return None
    start, end = span
    why: str | None = None
    if history is None:
        why = "no Spot price history here"
    elif zone is None:
        why = "its zone was not recorded"
    elif start is None or end is None or end < start:
        why = "its lifetime is unknown"
    if why is None and history is not None and zone and start and end:
        try:
            return paid(history.history(instance_type, zone, start, end), instance_type, zone, start, end)
        except (SpotPriceUnavailable, WorkflowError) as exc:
            why = str(exc)
    notes.append(f"{what} ran on Spot but {why}: its instance is priced on-demand, the upper bound")
    return None


def spot_charge(
    config: StoredConfig,
    instance_type: str,
    ended_at: str,
    history: SpotPriceHistory | None,
    notes: list[str],
) -> SpotCharge | None:
    """What the config's (last) instance paid when it ran on Spot (its stored market and zone), from
    the Spot price history over its lifetime; None for on-demand."""
    resources = config.state.resources if config.state is not None else None
    if resources is None:
        return None
    span = (_moment(config.launched_at), _moment(config.updated_at) or _moment(ended_at))
    what = f"config {config.config_id}"
    return _charge(what, resources.market, resources.availability_zone, span, instance_type, history, notes)


def earlier_attempts(
    request_config: Config, config: StoredConfig, history: SpotPriceHistory | None, notes: list[str]
) -> list[ConfigUsage]:
    """The config's attempts before a Spot interruption relaunched it, each from its launch to the
    interruption (EC2 stops billing a reclaimed instance then; its volumes go with it): the stored
    state holds only the last attempt's resources, its ``interruptions`` the earlier ones."""
    state = config.state
    if state is None:
        return []
    usages: list[ConfigUsage] = []
    for interruption in state.interruptions:
        if interruption.attempt >= state.item.attempt:
            continue  # the state's own attempt: priced from its resources
        start = _moment(interruption.launched_at)
        end = _moment(interruption.action_time) or _moment(interruption.noticed_at)
        if start is None or end is None or end < start:
            notes.append(
                f"config {config.config_id} attempt {interruption.attempt}: launch or interruption time "
                "unknown, its cost is not counted"
            )
            continue
        usage = usage_for_config(request_config, (end - start).total_seconds())
        what = f"config {config.config_id} attempt {interruption.attempt}"
        zone = interruption.availability_zone
        charge = _charge(what, interruption.market, zone, (start, end), usage.instance_type, history, notes)
        usages.append(replace(usage, spot=charge) if charge is not None else usage)
    return usages


def run_economics(
    request: BenchmarkRequest,
    stored: Mapping[str, Any],
    book: PriceBook,
    *,
    ended_at: str,
    spot_prices: SpotPriceHistory | None = None,
) -> RunEconomics:
    """Costs, the comparison with the baseline and the run's cost, from a ``get_run`` document;
    Spot instances at the price they paid (``spot_prices``: the region's Spot price history)."""
    document = decode_run(stored)
    notes = list(document.notes)
    costs = price_request(request, book)
    comparison = compare(request, costs, document.records)
    items = {c.config_id: c for c in document.configs}
    usages: list[ConfigUsage] = []
    for config in request.configs:
        item = items.get(config.id)
        seconds = config_lifetime_s(item, ended_at) if item is not None else 0.0
        usage = usage_for_config(config, seconds)
        if item is not None and seconds > 0:
            charge = spot_charge(item, config.instance_type, ended_at, spot_prices, notes)
            usage = replace(usage, spot=charge) if charge is not None else usage
        usages.append(usage)
        usages += other_machine_usages(config, seconds)  # nodes and extra clients, launched with it
        if item is not None:
            usages += earlier_attempts(config, item, spot_prices, notes)
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

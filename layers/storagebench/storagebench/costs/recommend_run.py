"""A stored run's recommendation: what ``costs.recommend`` needs, read from ``ResultsStore.get_run``'s
answer (the run item's request and economics, the results), for the CLI, the API and the report.

Monthly costs are the run's economics (Finalize priced them with the stack's price source and kept
them on the run item), so the answer quotes the figures ``results`` and the report quote. A run
whose costs were not computed is priced here from the bundled snapshot, and the answer says so.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from storagebench.costs.monthly import ConfigCost, price_request
from storagebench.costs.recommend import ConfigPrice, Recommendation, recommend
from storagebench.prices.snapshot import SnapshotPriceBook
from storagebench.request import BenchmarkRequest, RequestError, parse_request
from storagebench.request.requirements import parse_requirement
from storagebench.results.records import ResultRecord
from storagebench.store.models import StoredRun, decode_run, finite

__all__ = ["NoRequirementsError", "prices_from_costs", "recommend_stored_run", "stored_prices"]


class NoRequirementsError(ValueError):
    """Nothing to judge: none given, and the run's request has no ``requirements``."""


def stored_prices(configs: Any) -> dict[str, ConfigPrice]:
    """Prices from the run item's economics summary (``{id, monthly_usd, cost_partial}``) or a
    comparison's dump (``{config_id, ...}``); entries without a readable cost are left out."""
    prices: dict[str, ConfigPrice] = {}
    for entry in configs if isinstance(configs, list) else []:
        if not isinstance(entry, Mapping):
            continue
        config_id = entry.get("id") or entry.get("config_id")
        monthly = finite(entry.get("monthly_usd"))
        if isinstance(config_id, str) and monthly is not None:
            prices[config_id] = ConfigPrice(config_id, monthly, bool(entry.get("cost_partial")))
    return prices


def prices_from_costs(costs: Mapping[str, ConfigCost]) -> dict[str, ConfigPrice]:
    return {
        cid: ConfigPrice(cid, c.monthly_usd, bool(c.unpriced or c.missing_prices)) for cid, c in costs.items()
    }


def _request(run: StoredRun, notes: list[str]) -> BenchmarkRequest | None:
    if run.request is None:
        notes.append("the run holds no request: workloads are those its results name")
        return None
    try:
        return parse_request(dict(run.request))
    except RequestError as exc:
        notes.append(f"the stored request does not validate today ({exc.errors[0]}): read without it")
        return None


def _snapshot_prices(request: BenchmarkRequest | None, notes: list[str]) -> dict[str, ConfigPrice]:
    if request is None:
        notes.append("the run stored no costs and holds no request to price: configs are unranked")
        return {}
    try:
        book = SnapshotPriceBook(request.region)
        costs = price_request(request, book)
    except (LookupError, ValueError) as exc:
        notes.append(f"the run stored no costs and they could not be priced here ({exc})")
        return {}
    notes.append(f"the run stored no costs: priced here from the bundled price snapshot (as of {book.as_of})")
    return prices_from_costs(costs)


def _config_ids(
    request: BenchmarkRequest | None, run: StoredRun, records: Sequence[ResultRecord]
) -> list[str]:
    found = [c.id for c in request.configs] if request is not None else []
    for cid in [*run.configs, *(r.config_id for r in records)]:
        if cid not in found:
            found.append(cid)
    return found


def recommend_stored_run(stored: Mapping[str, Any], requirements: Sequence[str] = ()) -> Recommendation:
    """The recommendation for a stored run, on ``requirements`` or else its request's.

    Raises :class:`NoRequirementsError` when there are none, and ``RequirementError`` for one that
    cannot be read or names a workload the run does not have."""
    document = decode_run(stored)
    notes = list(document.notes)
    request = _request(document.run, notes)
    texts = list(requirements) or (request.requirements if request is not None else [])
    run_name = document.run.run_id or "the run"
    if not texts:
        raise NoRequirementsError(
            f"{run_name}'s request has no requirements: give some, e.g. std-randread-4k:iops>=3500"
        )
    records = document.records
    if request is not None:
        workloads = [w.id for w in request.resolved_workloads()]
    else:
        workloads = list(dict.fromkeys(r.workload for r in records if r.phase != "prewarm"))
    parsed = [parse_requirement(t, workloads) for t in texts]
    economics = document.run.economics or {}
    prices = stored_prices(economics.get("configs"))
    if not prices:
        prices = _snapshot_prices(request, notes)
    ordered = [prices.get(cid, ConfigPrice(cid, None)) for cid in _config_ids(request, document.run, records)]
    status = document.run.status
    if status is not None and status != "SUCCEEDED":
        notes.append(f"the run is {status}: a config without results (yet) fails every requirement")
    answer = recommend(parsed, records, ordered, workloads=workloads, run_id=document.run.run_id)
    return answer.model_copy(update={"notes": [*answer.notes, *notes]})

"""What the report reads, made safe to walk: stored results to records, the stored request, each
config's stored state, the comparison (computed when the run stored none), the run cost, and the
words for each storage option. Anything malformed becomes a note, never an exception."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from storagebench.core.clock import parse_iso
from storagebench.costs.compare import compare
from storagebench.costs.monthly import ConfigCost, price_request
from storagebench.kinds import kind_of
from storagebench.prices.snapshot import SnapshotPriceBook
from storagebench.request import RequestError, parse_request
from storagebench.request.model import BenchmarkRequest, Config, Target
from storagebench.results.records import ResultRecord
from storagebench.store.models import PROBLEMS_SHOWN, StoredConfig, StoredRun, mapping

_STATUS_OF_COLLECT = {"ok": "succeeded", "partial": "partial", "failed": "failed"}


__all__ = ["PROBLEMS_SHOWN", "mapping"]  # re-exported for the report's modules


def read_request(
    request: BenchmarkRequest | None, run: StoredRun, notes: list[str]
) -> BenchmarkRequest | None:
    if request is not None:
        return request
    document = run.request
    if document is None:
        notes.append("the run holds no request: workloads are named by id and configs are not priced")
        return None
    try:
        return parse_request(dict(document))
    except RequestError as exc:
        first = str(exc).splitlines()[0] if str(exc) else "invalid"
        notes.append(f"the stored request does not validate ({first}): configs are not priced")
        return None


class ConfigState:
    """What the store says about one config: status, errors, collect problems, leftovers."""

    def __init__(self) -> None:
        self.status: str | None = None
        self.errors: list[str] = []
        self.problems: list[str] = []
        self.leftovers: list[str] = []
        self.records: int | None = None
        self.interruptions: list[str] = []  # Spot interruptions (Finalize's), one line each


def read_config_states(run: StoredRun, configs: Iterable[StoredConfig]) -> dict[str, ConfigState]:
    states: dict[str, ConfigState] = {}
    for config in configs:
        state = states.setdefault(config.config_id, ConfigState())
        state.errors = config.errors
        state.problems = config.collect_problems
        state.leftovers = config.leftovers
        if config.collected_records is not None:
            state.records = config.collected_records
        if config.collect_status in _STATUS_OF_COLLECT:
            state.status = _STATUS_OF_COLLECT[config.collect_status]
        elif state.errors:
            state.status = "failed"
        elif config.status:
            state.status = config.status.lower()
    for result in run.config_results:  # Finalize's verdict wins
        state = states.setdefault(result.config_id, ConfigState())
        state.status = result.status or state.status
        state.errors = result.errors or state.errors
        state.leftovers = result.leftovers or state.leftovers
        state.interruptions = result.interruptions
        if result.records is not None:
            state.records = result.records
    return states


def read_comparison(
    comparison: Mapping[str, Any] | None,
    request: BenchmarkRequest | None,
    records: list[ResultRecord],
    notes: list[str],
) -> tuple[Mapping[str, Any] | None, dict[str, ConfigCost]]:
    """The comparison as given, or computed from the request, the bundled prices and the records."""
    if comparison is not None:
        return comparison, {}
    if request is None:
        return None, {}
    try:
        book = SnapshotPriceBook(request.region)
        costs = price_request(request, book)
        computed = compare(request, costs, records)
    except (LookupError, ValueError) as exc:
        notes.append(f"the comparison with the baseline could not be computed: {exc}")
        return None, {}
    notes.append(
        f"costs priced here from the bundled price snapshot {book.snapshot.snapshot_version} "
        f"(as of {book.as_of}): the run did not store its comparison"
    )
    return computed.model_dump(mode="json"), costs


def target_text(target: Target) -> tuple[str, str]:
    """(short description, the catalog's envelope) of one request target."""
    return kind_of(target).report_text(target)


def storage_text(
    config: Config | None, config_id: str, options: Mapping[tuple[str, str], str]
) -> tuple[str, str]:
    if config is not None:
        texts = [target_text(t) for t in config.targets]
        return " + ".join(t for t, _ in texts), "; ".join(d for _, d in texts)
    stored = sorted({option for (cid, _), option in options.items() if cid == config_id})
    text = " + ".join(stored) or "unknown (no request stored)"
    return text, text


def seconds_between(start: Any, end: Any) -> float | None:
    try:
        a = parse_iso(str(start))
        b = parse_iso(str(end))
    except ValueError:
        return None
    delta = (b - a).total_seconds()
    return delta if delta >= 0 else None


def run_cost_by_config(run_cost: Mapping[str, Any] | None) -> tuple[dict[str, float], float | None]:
    """(USD per config, the run's total) of a ``RunCost`` dump: its ``by_config`` when the dump has
    one, else its components summed (``by_config`` is a method, not a field, of ``RunCost``)."""
    if run_cost is None:
        return {}, None
    by_config: dict[str, float] = {}
    total = 0.0
    for component in run_cost.get("components") or []:
        if not isinstance(component, Mapping) or not isinstance(component.get("usd"), int | float):
            continue
        total += float(component["usd"])
        if component.get("config_id") is not None:
            cid = str(component["config_id"])
            by_config[cid] = by_config.get(cid, 0.0) + float(component["usd"])
    given = run_cost.get("by_config")
    if isinstance(given, Mapping):
        by_config = {str(k): float(v) for k, v in given.items() if isinstance(v, int | float)}
    stated = run_cost.get("total_usd")
    return by_config, float(stated) if isinstance(stated, int | float) else total

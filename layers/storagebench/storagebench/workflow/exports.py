"""Collect's flat export: the config's rows as JSON Lines in the Athena table's partition.

Written after the records are stored, from what Collect validated, never from what the instance
wrote as such: the run, the config and its targets come from the workflow's own item and request;
a record naming another config or a target the config does not have is left out (and said); fio's
version is kept only when it reads as one. The price is the bundled snapshot's (Collect calls no
pricing API); ``price_source`` and ``price_date`` say so in every row.

A failed write is an ``ExportError`` on the config (its records stay stored): the run is then
partial, and the rows can be written again from the store (``storagebench results --format jsonl``).
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from storagebench.core.errors import WorkflowError
from storagebench.core.state import ErrorInfo, WorkItem
from storagebench.costs.monthly import monthly_cost
from storagebench.export.errors import ExportError
from storagebench.export.formats import jsonl_text
from storagebench.export.rows import Price, RunFacts, config_facts, rows_of
from storagebench.prices.models import PriceNotFound
from storagebench.request.model import Config
from storagebench.results.records import ResultRecord
from storagebench.store.models import StoredResult
from storagebench.workflow.artifact_keys import export_key
from storagebench.workflow.ports import Artifacts, snapshot_prices

log = logging.getLogger("storagebench.workflow.exports")

__all__ = ["EXPORT_CONTENT_TYPE", "EXPORT_ERROR", "ExportOutcome", "agent_fio_version", "export_config"]

EXPORT_CONTENT_TYPE = "application/x-ndjson"
EXPORT_ERROR = "ExportError"
"""The error name a failed export write leaves on the config (Collect counts it as ExportFailures)."""
# fio prints "fio-3.35" (distribution builds add a suffix: "fio-3.28-dirty", "fio-3.36+git")
_FIO_VERSION = re.compile(r"^fio-\d{1,3}(\.\d{1,4}){0,3}[A-Za-z0-9.+~_-]{0,24}$")


@dataclass(frozen=True)
class ExportOutcome:
    """What Collect's export did: where the rows went (None when not written), how many, and what
    it has to say (records left out, a missing price); ``error`` is set when the write failed."""

    key: str
    uri: str | None
    rows: int
    problems: list[str] = field(default_factory=list)
    error: ErrorInfo | None = None


def agent_fio_version(directory: Path) -> str | None:
    """fio's version as the agent's manifest recorded it (``system.fio_version``), when it reads as one."""
    try:
        manifest = json.loads((directory / "manifest.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    system = manifest.get("system") if isinstance(manifest, dict) else None
    version = system.get("fio_version") if isinstance(system, dict) else None
    return version if isinstance(version, str) and _FIO_VERSION.fullmatch(version) else None


def _price(config: Config, region: str, problems: list[str]) -> Price | None:
    try:
        cost = monthly_cost(config, snapshot_prices(region))
    except (PriceNotFound, KeyError, ValueError) as exc:
        problems.append(f"export: {config.id} has no monthly price in the rows: {type(exc).__name__}: {exc}")
        return None
    return Price(
        monthly_usd=cost.monthly_usd,
        partial=not cost.complete,
        source=cost.price_source,
        date=cost.price_date,
    )


def _trusted(
    item: WorkItem, config: Config, records: Iterable[ResultRecord], problems: list[str]
) -> list[ResultRecord]:
    targets = {t.id for t in config.targets}
    kept: list[ResultRecord] = []
    strays: list[str] = []
    for record in records:
        if record.config_id == item.config_id and record.target_id in targets:
            kept.append(record)
        else:
            strays.append(f"{record.config_id}/{record.target_id}")
    if strays:
        problems.append(
            f"export: {len(strays)} record(s) left out, naming a config or target this config does not have "
            f"({', '.join(sorted(set(strays))[:5])})"
        )
    return kept


def export_config(
    item: WorkItem,
    config: Config,
    records: Iterable[ResultRecord],
    labels: dict[str, dict[str, str]],
    region: str,
    artifacts: Artifacts,
) -> ExportOutcome:
    """Write the config's rows (records already stored; ``labels`` as stored, by target id)."""
    key = export_key(item)
    problems: list[str] = []
    facts = config_facts(config, _price(config, region, problems))
    results = [
        StoredResult(
            config_id=item.config_id,
            record=record,
            storage_option=labels.get(record.target_id, {}).get("storage_option"),
            record_key=None,
            labels=labels.get(record.target_id, {}),
        )
        for record in _trusted(item, config, records, problems)
    ]
    run = RunFacts(run_id=item.run_id, suite=item.suite, started_at=item.started_at)
    rows = rows_of(run, {item.config_id: facts}, results)
    if not rows:  # nothing measured: no file, so the table holds no empty partition
        return ExportOutcome(key=key, uri=None, rows=0, problems=problems)
    try:
        uri = artifacts.put_text(key, jsonl_text(rows), EXPORT_CONTENT_TYPE)
    except (WorkflowError, OSError, ExportError) as exc:
        log.error("export of %s/%s not written to %s", item.run_id, item.config_id, key, exc_info=True)
        cause = f"{key} not written ({len(rows)} rows; the records are stored): {type(exc).__name__}: {exc}"
        error = ErrorInfo(step="collect", error=EXPORT_ERROR, cause=cause)
        return ExportOutcome(key=key, uri=None, rows=0, problems=problems, error=error)
    return ExportOutcome(key=key, uri=uri, rows=len(rows), problems=problems)

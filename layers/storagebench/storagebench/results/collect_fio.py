"""fio phases into records: a single fio's ``fio.json`` cross-checked against its ``fio.txt``, a
multi-client run's per-client records and aggregates, and a latency-SLA search's answer probe.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from pathlib import Path, PurePosixPath
from typing import Any

from pydantic import ValidationError

from storagebench.results.clients.aggregate import (
    aggregate_clients,
    all_clients_disagreements,
    client_records,
)
from storagebench.results.clients.output import is_client_output, split_clients
from storagebench.results.collect_phase import Identity, PhaseDirOutsideError, PhaseError
from storagebench.results.errors import ParseError
from storagebench.results.fio import RECORD_PERCENTILES, aggregate_fio, summary_disagreements
from storagebench.results.records import ResultRecord, SlaProbe, SlaSearch

__all__ = ["SLA_NOT_MET", "fio_records", "search_records"]

SLA_NOT_MET = "sla-not-met"


def fio_records(
    directory: Path, relative: PurePosixPath, identity: Identity, clients: list[str] | None = None
) -> tuple[list[ResultRecord], list[str]]:
    json_path = directory / "fio.json"
    text_path = directory / "fio.txt"
    source = relative / "fio.json"
    if not json_path.is_file():
        raise PhaseError(f"{source} is missing")
    document = json_path.read_text(encoding="utf-8", errors="replace")
    if clients is not None or is_client_output(document):
        return _client_fio_records(document, relative, identity, clients)
    normal = text_path.read_text(encoding="utf-8", errors="replace") if text_path.is_file() else None
    raw = [str(source)] + ([str(relative / "fio.txt")] if normal is not None else [])
    results = aggregate_fio(document, normal_text=normal, source=source)
    if not results:
        raise PhaseError(f"{source}: no job did any I/O")
    notes: list[str] = []
    if normal is None:
        notes.append(f"{relative / 'fio.txt'} is missing: records not checked against fio's summary")
    else:
        try:
            disagreements = summary_disagreements(results, normal, relative / "fio.txt")
        except ParseError as exc:
            disagreements = [str(exc)]
        notes.extend(f"{relative / 'fio.txt'}: {line}" for line in disagreements)
    records = [result.to_record(**identity, raw=raw) for result in results]
    return records, notes


def _client_fio_records(
    document: str, relative: PurePosixPath, identity: Identity, clients: list[str] | None
) -> tuple[list[ResultRecord], list[str]]:
    """A multi-client fio phase: per-client records and the aggregates. fio's normal text of a
    client/server run is per client, so the check is against fio's "All clients" entry instead."""
    source = relative / "fio.json"
    results = aggregate_clients(split_clients(document, clients, source))
    records = client_records(results, **identity, raw=[str(source)])
    notes = [str(error) for error in results.errors]
    if not records:
        raise PhaseError("; ".join(notes) or f"{source}: no client did any I/O")
    if clients is None:
        notes.append(
            f"{source}: fio client/server output but the step names no clients: "
            "a client fio could not reach would go unnoticed"
        )
    notes.extend(f"{source}: {line}" for line in all_clients_disagreements(results))
    return records, notes


# --------------------------------------------------------------------------- latency-SLA search


def search_records(
    directory: Path, relative: PurePosixPath, search: Any, identity: Identity
) -> tuple[list[ResultRecord], list[str]]:
    """The answer probe's fio records (the lowest rate's when the SLA was never met, with no IOPS:
    there is no rate to report), each carrying the whole search."""
    if not isinstance(search, Mapping):
        raise PhaseError(f"search: expected an object, got {type(search).__name__}")
    answer = search.get("answer")
    try:
        sla = SlaSearch.model_validate(
            {
                **{k: v for k, v in search.items() if k != "answer"},
                "sustained_iops": answer.get("iops") if isinstance(answer, Mapping) else None,
                "answer_probe": answer.get("probe") if isinstance(answer, Mapping) else None,
            }
        )
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "(search)"
        raise PhaseError(f"search.{where}: {first['msg']} (got {first.get('input')!r})") from None
    number = sla.answer_probe if sla.met else sla.probes[0].probe
    if sla.met and (number is None or sla.sustained_iops is None):
        raise PhaseError("search: met, but no answer probe with its IOPS")
    chosen = [p for p in sla.probes if p.probe == number]
    if not chosen or not chosen[0].dir:
        raise PhaseError(f"search: probe {number} is not among the probes, or has no directory")
    probe_path = PurePosixPath(chosen[0].dir)
    if probe_path.is_absolute() or ".." in probe_path.parts:
        raise PhaseDirOutsideError(f"probe dir {chosen[0].dir!r} is not inside the phase directory")
    records, notes = fio_records(directory / probe_path, relative / probe_path, identity)
    notes.extend(_search_disagreements(records, sla, chosen[0]))
    return [
        record.model_copy(update={"sla": sla})
        if sla.met
        else record.model_copy(
            update={"sla": sla, "iops": None, "bw_mibps": None, "labels": [*record.labels, SLA_NOT_MET]}
        )
        for record in records
    ], notes


def _search_disagreements(records: list[ResultRecord], sla: SlaSearch, probe: SlaProbe) -> list[str]:
    """The agent judged its probe from the same fio.json: its percentile and I/O count must be the
    records' (the percentile when the record carries it), or the search is not what the files say."""
    field = next((name for name, pct in RECORD_PERCENTILES.items() if pct == sla.percentile), None)
    notes: list[str] = []
    ios = sum(record.ios or 0 for record in records)
    if probe.ios is not None and probe.ios != ios:
        notes.append(f"search probe {probe.probe}: the agent counted {probe.ios} I/Os, fio.json holds {ios}")
    values = [getattr(record.latency, field) for record in records if field and record.latency is not None]
    worst = max((v for v in values if v is not None), default=None)
    if worst is not None and not math.isclose(worst, probe.latency_us, rel_tol=0.01):
        notes.append(
            f"search probe {probe.probe}: the agent judged p{sla.percentile:g} {probe.latency_us:g} us, "
            f"fio.json gives {worst:g} us"
        )
    return notes

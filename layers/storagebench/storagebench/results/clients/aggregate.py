"""Per-client records and one aggregate per (group, direction) of a multi-client fio run.

The aggregate is computed as fio's "All clients" entry is (``client.c: handle_ts`` calls
``stat.c: sum_thread_stats`` on every client's entries, then ``add_ddir_status_json``):

* ``io_bytes`` and ``total_ios`` summed; ``runtime`` the longest (``if (dst->runtime[l] <
  src->runtime[l]) dst->runtime[l] = src->runtime[l]``);
* ``bw_bytes = 1000 * io_bytes / runtime`` and ``iops = 1000.0 * total_ios / runtime``: the
  clients' total I/O over the longest runtime, not a sum of the clients' own rates (the two agree
  when the clients ran equally long, as a time_based job does, and the former never overstates);
* latency: min of mins, max of maxes, mean and variance merged (``__sum_stat``), percentiles from
  the summed histograms (``io_u_plat``; fio prints them for "All clients" from 3.39 on, commit
  9e271031, and none before): here the json+ bins merged, walked as fio walks them.

Unlike fio's entry, which sums every group of every client into one, the aggregate here is per
fio group, as a single-client step's records are. A client that is missing or failed yields no
records and withholds the aggregate (an error names it); the other clients' records are kept.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from storagebench.results.clients.errors import (
    AggregateWithheldError,
    ClientError,
    ClientHistogramError,
    ClientJobError,
    Source,
)
from storagebench.results.clients.output import ClientDocument, ClientRun
from storagebench.results.clients.spread import ClientRate, client_spread
from storagebench.results.errors import FioJobError, ParseError
from storagebench.results.fio import (
    RECORD_PERCENTILES,
    FioGroupResult,
    JobDirection,
    aggregate_parts,
    parse_fio_jobs,
)
from storagebench.results.records import ClientSpread, Direction, ResultRecord, VariantValue


@dataclass(frozen=True)
class ClientResult:
    """One client's FioGroupResults, as a single-client step's would be."""

    client: ClientDocument
    parts: list[JobDirection]
    results: list[FioGroupResult]


@dataclass(frozen=True)
class ClientAggregate:
    """The clients' sum in one (group, direction), with their spread."""

    result: FioGroupResult
    spread: ClientSpread


@dataclass(frozen=True)
class ClientResults:
    per_client: list[ClientResult]
    aggregates: list[ClientAggregate]  # empty when withheld
    errors: list[ParseError]  # a ClientError per client without records, then why the aggregate is incomplete
    all_clients: Mapping[str, Any] | None  # fio's own "All clients" entry


def _client_result(client: ClientDocument, source: Source) -> ClientResult:
    try:
        parts = parse_fio_jobs(client.document, source)
    except FioJobError as exc:
        raise ClientJobError(
            source, client.index, client.endpoint, exc.reason.replace("fio job", "job", 1)
        ) from exc
    except ParseError as exc:
        raise ClientError(source, client.index, client.endpoint, exc.reason) from exc
    results = aggregate_parts(parts, source=source)
    if not results:
        raise ClientError(source, client.index, client.endpoint, "no job did any I/O")
    return ClientResult(client=client, parts=parts, results=results)


def _missing_bins(result: ClientResult, source: Source) -> ClientHistogramError | None:
    lacking = sorted(
        {
            f"{part.direction} ({part.job})"
            for part in result.parts
            if part.latency is None or part.latency.bins is None
        }
    )
    if not lacking:
        return None
    return ClientHistogramError(
        source,
        result.client.index,
        result.client.endpoint,
        f"no json+ latency bins for {', '.join(lacking)}: the aggregate's percentiles are left empty "
        "(run fio with --output-format=json+)",
    )


def aggregate_clients(run: ClientRun) -> ClientResults:
    """Every client's results and, when every client yielded some, the aggregates with their spread."""
    source = run.source
    errors: list[ParseError] = list(run.missing)
    per_client: list[ClientResult] = []
    for client in run.clients:
        try:
            per_client.append(_client_result(client, source))
        except ClientError as exc:
            errors.append(exc)
    failed = [e for e in errors if isinstance(e, ClientError)]
    if failed or not per_client:
        named = ", ".join(f"{e.index} ({e.endpoint.label})" for e in failed)
        errors.append(
            AggregateWithheldError(
                source,
                f"no aggregate record: client {named} yielded no records, a sum without it would understate",
            )
        )
        return ClientResults(per_client=per_client, aggregates=[], errors=errors, all_clients=run.all_clients)
    errors.extend(e for e in (_missing_bins(r, source) for r in per_client) if e is not None)
    merged = aggregate_parts([part for r in per_client for part in r.parts], source=source)
    aggregates: list[ClientAggregate] = []
    for result in merged:
        rates = [
            ClientRate(
                index=r.client.index,
                client=r.client.endpoint.label,
                iops=next(
                    (g.iops for g in r.results if (g.group, g.direction) == (result.group, result.direction)),
                    0.0,  # the client did no I/O in this group and direction
                ),
            )
            for r in per_client
        ]
        aggregates.append(ClientAggregate(result=result, spread=client_spread(rates)))
    return ClientResults(
        per_client=per_client, aggregates=aggregates, errors=errors, all_clients=run.all_clients
    )


def client_records(
    results: ClientResults,
    *,
    config_id: str,
    target_id: str,
    workload: str,
    profile: str,
    repetition: int,
    phase: str,
    variant: Mapping[str, VariantValue] | None = None,
    started_at: str | None = None,
    raw: Sequence[str] = (),
    labels: Sequence[str] = (),
) -> list[ResultRecord]:
    """Per-client records (``client``, ``client_index``) in client order, then the aggregates
    (``clients``, ``client_spread``)."""
    identity: dict[str, Any] = {
        "config_id": config_id,
        "target_id": target_id,
        "workload": workload,
        "profile": profile,
        "repetition": repetition,
        "phase": phase,
        "variant": variant,
        "started_at": started_at,
        "raw": raw,
        "labels": labels,
    }
    records = [
        result.to_record(**identity).model_copy(
            update={"client": r.client.endpoint.label, "client_index": r.client.index}
        )
        for r in results.per_client
        for result in r.results
    ]
    records.extend(
        aggregate.result.to_record(**identity).model_copy(
            update={"clients": aggregate.spread.clients, "client_spread": aggregate.spread}
        )
        for aggregate in results.aggregates
    )
    return records


# --------------------------------------------------------------------------- fio's own sum


def _number(entry: Mapping[str, Any], key: str) -> float | None:
    value = entry.get(key)
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def all_clients_disagreements(results: ClientResults) -> list[str]:
    """Where the aggregates disagree with fio's "All clients" entry, per direction.

    fio sums every group into that entry, so I/Os, bytes and the longest runtime are compared
    summed over the groups; rates and latency only when one group did the direction's I/O. fio
    truncates ``bw_bytes`` to an integer and prints ``iops`` and latency with 6 decimals.
    Empty when they agree, when there is no entry (one client) or no aggregate.
    """
    entry = results.all_clients
    if entry is None or not results.aggregates:
        return []
    problems: list[str] = []
    directions: dict[Direction, list[FioGroupResult]] = {}
    for aggregate in results.aggregates:
        directions.setdefault(aggregate.result.direction, []).append(aggregate.result)
    for direction, groups in directions.items():
        ddir = entry.get(direction)
        where = f"fio's All clients {direction}"
        if not isinstance(ddir, Mapping):
            problems.append(f"{where}: missing")
            continue
        ios = sum(g.ios for g in groups)
        io_bytes = sum(g.io_bytes for g in groups)
        runtime = max(g.runtime_max_ms for g in groups)
        for what, ours, theirs in (
            ("I/Os", ios, _number(ddir, "total_ios")),
            ("bytes", io_bytes, _number(ddir, "io_bytes")),
            ("runtime ms", runtime, _number(ddir, "runtime")),
        ):
            if theirs is None or ours != theirs:
                problems.append(f"{where}: {what} {theirs!r}, the aggregate {ours}")
        if len(groups) != 1:
            continue
        group = groups[0]
        if _number(ddir, "bw_bytes") != math.floor(group.bw_bytes_per_s):
            problems.append(
                f"{where}: bw_bytes {ddir.get('bw_bytes')!r}, the aggregate {group.bw_bytes_per_s:.3f}"
            )
        theirs_iops = _number(ddir, "iops")
        if theirs_iops is None or not math.isclose(theirs_iops, group.iops, rel_tol=1e-9, abs_tol=1e-6):
            problems.append(f"{where}: iops {ddir.get('iops')!r}, the aggregate {group.iops:.6f}")
        problems.extend(_latency_disagreements(where, ddir, group))
    return problems


def _latency_disagreements(where: str, ddir: Mapping[str, Any], group: FioGroupResult) -> list[str]:
    latency = group.latency
    theirs = ddir.get(f"{latency.basis}_ns") if latency is not None else None
    if latency is None or not isinstance(theirs, Mapping):
        return []
    problems: list[str] = []
    mean = _number(theirs, "mean")
    if mean is None or not math.isclose(mean / 1000, latency.mean_us, rel_tol=1e-6, abs_tol=1e-6):
        problems.append(
            f"{where}: {latency.basis} mean {mean!r} ns, the aggregate {latency.mean_us * 1000:.3f} ns"
        )
    printed = theirs.get("percentile")
    if isinstance(printed, Mapping):  # fio >= 3.39
        by_percent = {round(float(k), 6): v for k, v in printed.items()}
        for name, percent in RECORD_PERCENTILES.items():
            ours = getattr(latency, name)
            value = by_percent.get(round(percent, 6))
            if ours is not None and isinstance(value, int | float) and value != round(ours * 1000):
                problems.append(
                    f"{where}: {latency.basis} p{percent:g} {value} ns, the aggregate {ours * 1000:.0f} ns"
                )
    return problems

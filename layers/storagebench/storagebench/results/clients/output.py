"""fio's client/server JSON (``fio --client=... --output-format=json+``) split into one document per client.

What fio writes (checked on fio 3.33 and in fio's ``client.c`` up to 3.41):

* stdout starts with the servers' text, each line prefixed ``<hostname>`` (job descriptions,
  "Starting N processes"), then one JSON object;
* that object has ``client_stats`` where a local run has ``jobs``: one entry per job (one per
  group under ``group_reporting``) of every client, in the order they finished, each with the
  ``hostname`` given on ``--client`` and its ``port``; then, with two or more clients, one entry
  named "All clients" (``client.c: handle_ts``), fio's sum over *every* entry of every client;
* ``global options`` is one object (3.33: the clients' options concatenated) or, in later fio, a
  list with one object per client carrying its ``hostname``/``port``;
* ``disk_util`` entries carry ``hostname``/``port`` too.

fio's client drops a server it cannot reach ("fio: failed to connect") and still exits 0, and a
client whose job failed shows ``error`` on its own entries only ("All clients" says 0): the step's
list of clients, not fio's exit code, is what tells a missing client.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from storagebench.results.clients.endpoints import ClientEndpoint, parse_client
from storagebench.results.clients.errors import ClientOutputError, MissingClientError, Source

ALL_CLIENTS = "All clients"
"""The jobname of fio's own sum over the clients."""
CLIENT_STATS = "client_stats"


@dataclass(frozen=True)
class ClientDocument:
    """One client's share of the output, as a fio JSON document ``results.fio`` parses (``jobs``)."""

    index: int  # 1-based position in the step's clients
    endpoint: ClientEndpoint
    document: dict[str, Any]


@dataclass(frozen=True)
class ClientRun:
    """The output of one multi-client fio run, split by client."""

    fio_version: str | None
    clients: list[ClientDocument]  # those with entries, in the step's order
    missing: list[MissingClientError] = field(default_factory=list)
    all_clients: Mapping[str, Any] | None = None  # fio's "All clients" entry (absent with one client)
    source: Source = None  # the file it came from, for error messages


def _decode_document(text: str) -> Any:
    """The JSON object of the output: the whole text, else the first line-initial ``{`` that decodes."""
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        pass
    decoder = json.JSONDecoder()
    position = 0
    while (start := text.find("{", position)) >= 0:
        position = start + 1
        if start > 0 and text[start - 1] != "\n":
            continue
        try:
            document, _ = decoder.raw_decode(text, start)
        except json.JSONDecodeError:
            continue
        if isinstance(document, dict) and isinstance(document.get(CLIENT_STATS), list):
            return document
    return None


def is_client_output(document: Mapping[str, Any] | str) -> bool:
    """Whether this is fio client/server output (``client_stats``) rather than a local run's (``jobs``)."""
    if isinstance(document, str):
        document = _decode_document(document)
    return isinstance(document, Mapping) and isinstance(document.get(CLIENT_STATS), list)


def load_client_json(text: str, source: Source = None) -> dict[str, Any]:
    """The JSON object of ``fio --client ... --output-format=json+``, the servers' text before it skipped."""
    document = _decode_document(text)
    if not isinstance(document, dict):
        raise ClientOutputError(source, "no fio JSON document in the output")
    if not isinstance(document.get(CLIENT_STATS), list):
        kind = "a local fio run's output ('jobs')" if "jobs" in document else "not fio output"
        raise ClientOutputError(
            source, f"expected fio client/server output (a 'client_stats' list), got {kind}"
        )
    return document


def _endpoint(entry: Mapping[str, Any], where: str, source: Source) -> ClientEndpoint:
    host, port = entry.get("hostname"), entry.get("port")
    if not isinstance(host, str) or not host or isinstance(port, bool) or not isinstance(port, int):
        raise ClientOutputError(
            source, f"{where}: expected 'hostname' (text) and 'port' (integer), got {host!r} and {port!r}"
        )
    return ClientEndpoint(host=host, port=port)


def _expected(clients: Sequence[str], source: Source) -> list[ClientEndpoint]:
    endpoints: list[ClientEndpoint] = []
    for position, text in enumerate(clients, start=1):
        try:
            endpoint = parse_client(text)
        except ValueError as exc:
            raise ClientOutputError(source, f"the step's clients[{position - 1}]: {exc}") from None
        if endpoint in endpoints:
            raise ClientOutputError(
                source,
                f"the step's clients[{position - 1}] {text!r} repeats {endpoint.label}: "
                "fio's entries could not be told apart",
            )
        endpoints.append(endpoint)
    return endpoints


def _global_options(document: Mapping[str, Any], endpoint: ClientEndpoint) -> Mapping[str, Any] | None:
    options = document.get("global options")
    if isinstance(options, Mapping):
        return options
    if isinstance(options, list):
        for entry in options:
            if (
                isinstance(entry, Mapping)
                and entry.get("hostname") == endpoint.host
                and entry.get("port") == endpoint.port
            ):
                return {k: v for k, v in entry.items() if k not in ("hostname", "port")}
    return None


def split_clients(
    document: Mapping[str, Any] | str, clients: Sequence[str] | None = None, source: Source = None
) -> ClientRun:
    """One fio document per client, in the order of ``clients`` (the step's ``--client`` strings).

    A client of ``clients`` without an entry is a MissingClientError in ``missing``; an entry from
    a host not in ``clients`` (or without hostname/port) is a ClientOutputError for the whole
    output. Without ``clients`` the clients are those fio reported, ordered by host and port.
    """
    if isinstance(document, str):
        document = load_client_json(document, source)
    entries = document.get(CLIENT_STATS)
    if not isinstance(entries, list):
        raise ClientOutputError(source, "expected fio client/server output (a 'client_stats' list)")
    expected = _expected(clients, source) if clients is not None else None
    per_client: dict[ClientEndpoint, list[Mapping[str, Any]]] = {}
    all_clients: Mapping[str, Any] | None = None
    for index, entry in enumerate(entries):
        where = f"client_stats[{index}]"
        if not isinstance(entry, Mapping):
            raise ClientOutputError(source, f"{where}: expected an object")
        if entry.get("jobname") == ALL_CLIENTS:
            if all_clients is not None:
                raise ClientOutputError(source, f"{where}: a second {ALL_CLIENTS!r} entry")
            all_clients = entry
            continue
        endpoint = _endpoint(entry, where, source)
        if expected is not None and endpoint not in expected:
            named = ", ".join(e.label for e in expected)
            raise ClientOutputError(
                source,
                f"{where}: an entry from {endpoint.label}, which is not one of the step's clients ({named})",
            )
        per_client.setdefault(endpoint, []).append(
            {k: v for k, v in entry.items() if k not in ("hostname", "port")}
        )
    order = expected if expected is not None else sorted(per_client)
    version = document.get("fio version")
    split: list[ClientDocument] = []
    missing: list[MissingClientError] = []
    for position, endpoint in enumerate(order, start=1):
        jobs = per_client.get(endpoint)
        if jobs is None:
            missing.append(
                MissingClientError(
                    source,
                    position,
                    endpoint,
                    "no entry in fio's output: the server was unreachable or never reported",
                )
            )
            continue
        client_document: dict[str, Any] = {"jobs": jobs}
        if isinstance(version, str):
            client_document["fio version"] = version
        options = _global_options(document, endpoint)
        if options is not None:
            client_document["global options"] = dict(options)
        split.append(ClientDocument(index=position, endpoint=endpoint, document=client_document))
    if not split and not missing:
        raise ClientOutputError(source, "client_stats holds no client's entry")
    return ClientRun(
        fio_version=version if isinstance(version, str) else None,
        clients=split,
        missing=missing,
        all_clients=all_clients,
        source=source,
    )

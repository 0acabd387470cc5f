"""Typed errors of multi-client output: each names the client (position and host:port) and what is wrong."""

from __future__ import annotations

from pathlib import PurePath

from storagebench.results.clients.endpoints import ClientEndpoint
from storagebench.results.errors import ParseError

Source = str | PurePath | None


class ClientOutputError(ParseError):
    """The output as a whole is not usable client/server output (no ``client_stats``, a malformed
    entry, a client the step never named): nothing can be attributed, so nothing is recorded."""


class ClientError(ParseError):
    """One client yielded no records; the others' are kept and no aggregate pretends to cover it."""

    def __init__(self, source: Source, index: int, endpoint: ClientEndpoint, reason: str) -> None:
        self.index = index
        self.endpoint = endpoint
        super().__init__(source, f"client {index} ({endpoint.label}): {reason}")


class MissingClientError(ClientError):
    """A client of the step has no entry: fio's client drops a server it cannot reach and still
    exits 0, so only the step's list of clients tells."""


class ClientJobError(ClientError):
    """fio reported ``error != 0`` for one of the client's jobs (fio's "All clients" does not carry it)."""


class ClientHistogramError(ClientError):
    """The client's entries lack json+ latency bins: percentiles across clients come only from the
    merged histograms, never from averaging percentiles."""


class AggregateWithheldError(ParseError):
    """No aggregate record for the step: some client yielded nothing, and a sum over the others
    would understate the target while looking complete."""

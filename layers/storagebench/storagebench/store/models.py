"""What the results store holds, decoded once: a run, its configs, its results, history points.

Adapters return documents (the API's bodies: JSON as stored). A domain reader decodes one once,
with :func:`decode_run` or :meth:`HistoryPoint.decode`, and reads attributes from then on. Decoding
is lenient because the store outlives code versions: a field of the wrong type reads as absent,
and an unreadable result becomes a note naming it, never an exception (one bad item must not hide
a run).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from pydantic import ValidationError

from storagebench.core.interruption import interruption_line
from storagebench.core.state import ConfigState
from storagebench.results.records import ResultRecord

__all__ = [
    "PROBLEMS_SHOWN",
    "ConfigOutcome",
    "HistoryPoint",
    "RunDocument",
    "StoredConfig",
    "StoredResult",
    "StoredRun",
    "decode_results",
    "decode_run",
    "error_lines",
    "finite",
    "mapping",
    "measured_metrics",
    "record_metrics",
]

PROBLEMS_SHOWN = 8
"""Problems quoted in one note; the rest are counted."""
_RECORD_FIELDS = frozenset(ResultRecord.model_fields)


def mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _text(value: Any) -> str | None:
    """A stored scalar as text; absent, empty and null read as None."""
    return str(value) if value else None


def _count(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def finite(value: Any) -> float | None:
    """A stored number; None for anything else (bools, text, NaN, infinities)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    number = float(value)
    return number if math.isfinite(number) else None


def error_lines(errors: Any) -> list[str]:
    """Stored errors (``ErrorInfo`` dumps, or text) as one line each."""
    lines: list[str] = []
    for error in errors if isinstance(errors, list) else []:
        if isinstance(error, Mapping):
            parts = [str(error[k]) for k in ("step", "error", "cause") if error.get(k)]
            lines.append(": ".join(parts) or "error without detail")
        else:
            lines.append(str(error))
    return lines


def _texts(values: Any) -> list[str]:
    return [str(v) for v in values] if isinstance(values, list) else []


# ------------------------------------------------------------------------------------ the run


@dataclass(frozen=True)
class ConfigOutcome:
    """Finalize's verdict on one config, as the run item keeps it (``config_results``)."""

    config_id: str
    status: str | None
    errors: list[str]
    leftovers: list[str]
    records: int | None
    interruptions: list[str] = field(default_factory=list)  # Spot interruptions, one line each

    @classmethod
    def decode(cls, document: Mapping[str, Any]) -> ConfigOutcome:
        return cls(
            config_id=str(document["config_id"]),
            status=_text(document.get("status")),
            errors=error_lines(document.get("errors")),
            leftovers=_texts(document.get("leftovers")),
            records=_count(document.get("records")),
            interruptions=[
                interruption_line(i) for i in document.get("interruptions") or [] if isinstance(i, Mapping)
            ],
        )


@dataclass(frozen=True)
class StoredRun:
    """The run item: identity, status and times, the request it ran, what Finalize concluded."""

    run_id: str | None
    suite: str | None
    status: str | None
    started_at: str | None
    ended_at: str | None
    expires_at: str | None
    configs: list[str] = field(default_factory=list)
    config_results: list[ConfigOutcome] = field(default_factory=list)
    request: Mapping[str, Any] | None = None
    economics: Mapping[str, Any] | None = None
    records: int | None = None

    @classmethod
    def decode(cls, document: Any) -> StoredRun:
        run = mapping(document)
        request = run.get("request")
        economics = run.get("economics")
        configs = run.get("configs")
        return cls(
            run_id=_text(run.get("run_id")),
            suite=_text(run.get("suite")),
            status=_text(run.get("status")),
            started_at=_text(run.get("started_at")),
            ended_at=_text(run.get("ended_at")),
            expires_at=_text(run.get("expires_at")),
            configs=[c for c in configs if isinstance(c, str)] if isinstance(configs, list) else [],
            config_results=[
                ConfigOutcome.decode(r)
                for r in run.get("config_results") or []
                if isinstance(r, Mapping) and r.get("config_id")
            ],
            request=request if isinstance(request, Mapping) else None,
            economics=economics if isinstance(economics, Mapping) else None,
            records=_count(run.get("records")),
        )


# ------------------------------------------------------------------------------- its configs


@dataclass(frozen=True)
class StoredConfig:
    """One config item: the store's status, the workflow state it last wrote, read leniently.

    ``state`` is the state validated as the workflow's model, None when it does not validate (an
    older or damaged item); the fields beside it are read from the document whatever its shape.
    """

    config_id: str
    status: str | None
    updated_at: str | None
    errors: list[str]
    launched_at: str | None
    collect_status: str | None
    collected_records: int | None
    collect_problems: list[str]
    leftovers: list[str]
    state: ConfigState | None
    state_document: Mapping[str, Any]

    @classmethod
    def decode(cls, document: Mapping[str, Any]) -> StoredConfig:
        state = mapping(document.get("state"))
        collected = mapping(state.get("collected"))
        try:
            parsed: ConfigState | None = ConfigState.model_validate(document.get("state"))
        except ValidationError:
            parsed = None
        launched = mapping(state.get("resources")).get("launched_at")
        return cls(
            config_id=str(document["config_id"]),
            status=_text(document.get("status")),
            updated_at=document["updated_at"] if isinstance(document.get("updated_at"), str) else None,
            errors=error_lines(document.get("errors") or state.get("errors")),
            launched_at=launched if isinstance(launched, str) and launched else None,
            collect_status=_text(collected.get("status")),
            collected_records=_count(collected.get("records")),
            collect_problems=_texts(collected.get("problems") or []),
            leftovers=_texts(mapping(state.get("cleanup")).get("leftovers") or []),
            state=parsed,
            state_document=state,
        )


# ------------------------------------------------------------------------------- its results


@dataclass(frozen=True)
class StoredResult:
    """One measured record with what the store keeps beside it (the item's own config id, which
    is the record's whenever the store wrote it)."""

    config_id: str
    record: ResultRecord
    storage_option: str | None
    record_key: str | None
    labels: Mapping[str, Any]


def decode_results(results: Iterable[Any], notes: list[str]) -> list[StoredResult]:
    """Stored results, either the store's items (the record nested under ``record``, with labels)
    or flat record fields with extra attributes; unknown attributes are dropped and unreadable
    items named in one note."""
    decoded: list[StoredResult] = []
    bad: list[str] = []
    for index, item in enumerate(results):
        if not isinstance(item, Mapping):
            bad.append(f"results[{index}]: not an object")
            continue
        nested = item.get("record")
        document = nested if isinstance(nested, Mapping) else item
        fields = {k: v for k, v in document.items() if k in _RECORD_FIELDS}
        if "config_id" not in fields and isinstance(item.get("config_id"), str):
            fields["config_id"] = item["config_id"]
        try:
            record = ResultRecord.model_validate(fields)
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first["loc"]) or "(record)"
            name = item.get("record_key") or item.get("SK") or "?"
            bad.append(f"results[{index}] ({name}): {where}: {first['msg']}")
            continue
        labels = mapping(item.get("labels"))
        option = labels.get("storage_option", item.get("storage_option"))
        key = item.get("record_key")
        decoded.append(
            StoredResult(
                config_id=item["config_id"] if isinstance(item.get("config_id"), str) else record.config_id,
                record=record,
                storage_option=option if isinstance(option, str) and option else None,
                record_key=key if isinstance(key, str) else None,
                labels=labels,
            )
        )
    if bad:
        shown = "; ".join(bad[:PROBLEMS_SHOWN]) + (
            f"; {len(bad) - PROBLEMS_SHOWN} more" if len(bad) > PROBLEMS_SHOWN else ""
        )
        notes.append(f"{len(bad)} stored result(s) could not be read and are left out: {shown}")
    return decoded


# ------------------------------------------------------------------------------ the whole run


@dataclass(frozen=True)
class RunDocument:
    """``ResultsStore.get_run``'s answer, decoded: the run, its configs, its results, and a note
    for each part that could not be read."""

    run: StoredRun
    configs: list[StoredConfig]
    results: list[StoredResult]
    notes: list[str]

    @property
    def records(self) -> list[ResultRecord]:
        return [r.record for r in self.results]

    @property
    def options(self) -> dict[tuple[str, str], str]:
        """The storage option of each (config, target), from the first result that names one."""
        options: dict[tuple[str, str], str] = {}
        for result in self.results:
            if result.storage_option is not None:
                key = (result.record.config_id, result.record.target_id)
                options.setdefault(key, result.storage_option)
        return options

    def config(self, config_id: str) -> StoredConfig | None:
        return next((c for c in self.configs if c.config_id == config_id), None)


def decode_run(stored: Mapping[str, Any]) -> RunDocument:
    notes: list[str] = []
    results = decode_results(stored.get("results") or [], notes)
    configs = [
        StoredConfig.decode(item)
        for item in stored.get("configs") or []
        if isinstance(item, Mapping) and item.get("config_id")
    ]
    return RunDocument(run=StoredRun.decode(stored.get("run")), configs=configs, results=results, notes=notes)


# ------------------------------------------------------------------------------ history points


_LATENCY_FIELDS = {"lat_mean_us": "mean_us", "lat_p95_us": "p95_us", "lat_p99_us": "p99_us"}
_METRIC_NAMES = ("iops", "bw_mibps", "lat_mean_us", "lat_p95_us", "lat_p99_us", "real_s")


def record_metrics(record: Mapping[str, Any]) -> dict[str, float]:
    """The finite metrics of a record in its JSON form (a full one, or ``metric_history``'s
    projection without the histogram)."""
    latency = mapping(record.get("latency"))
    metrics: dict[str, float] = {}
    for name in _METRIC_NAMES:
        raw = latency.get(_LATENCY_FIELDS[name]) if name in _LATENCY_FIELDS else record.get(name)
        value = finite(raw)
        if value is not None:
            metrics[name] = value
    return metrics


def measured_metrics(record: ResultRecord) -> dict[str, float]:
    """:func:`record_metrics` of a decoded record."""
    latency = record.latency
    values = {
        "iops": record.iops,
        "bw_mibps": record.bw_mibps,
        "lat_mean_us": latency.mean_us if latency is not None else None,
        "lat_p95_us": latency.p95_us if latency is not None else None,
        "lat_p99_us": latency.p99_us if latency is not None else None,
        "real_s": record.real_s,
    }
    return {name: number for name, value in values.items() if (number := finite(value)) is not None}


@dataclass(frozen=True)
class HistoryPoint:
    """One repetition of a series as ``metric_history`` answers it: when, which run, its metrics."""

    started_at: str
    run_id: str
    config_id: str | None
    repetition: int | None
    group: int | None
    metrics: dict[str, float]

    @classmethod
    def decode(cls, point: Mapping[str, Any]) -> HistoryPoint | None:
        """None for a point without a readable record (no record, or a group that is not a number)."""
        record = point.get("record")
        if not isinstance(record, Mapping):
            return None
        group = record.get("group")
        if group is not None and _count(group) is None:
            return None
        return cls(
            started_at=str(point.get("started_at", "")),
            run_id=str(point.get("run_id", "")),
            config_id=_text(point.get("config_id")),
            repetition=_count(point.get("repetition")),
            group=group,
            metrics=record_metrics(record),
        )

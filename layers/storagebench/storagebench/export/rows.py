"""Flat rows of a run: one per config, workload, variant, phase, repetition and direction.

Two readers build the same rows: :func:`run_rows` from a stored run (``ResultsStore.get_run``,
locally) and Collect from the records it has just validated, through :func:`result_row` (on AWS
the CLI reads Collect's files back: ``jsonl_rows``). Every value is read from a decoded model
(``store.models``, the request), so a field the store lacks or holds in another shape becomes an
empty cell, never an exception: one bad item must not cost the export of a run.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC
from typing import Any

from storagebench.core.clock import parse_iso
from storagebench.export.schema import COLUMN_NAMES
from storagebench.protocol.caveats import EMULATED_LABEL_PREFIX
from storagebench.request import BenchmarkRequest, RequestError, parse_request
from storagebench.request.model import Config
from storagebench.results.records import ResultRecord
from storagebench.store.models import StoredResult, decode_run, finite, mapping

__all__ = [
    "FIO_VERSION_LABEL",
    "ConfigFacts",
    "Price",
    "RunFacts",
    "TargetFacts",
    "config_facts",
    "result_row",
    "rows_of",
    "run_rows",
    "variant_text",
]

FIO_VERSION_LABEL = "fio_version"
"""The result label Collect keeps fio's version under (from the agent's manifest)."""

# Which field of a target document names its type and its size, by the field's own name: a kind
# without either leaves the column empty.
_TYPE_FIELDS = ("type", "deployment_type", "throughput_mode")
_SIZE_FIELDS = ("size_gib", "storage_capacity_gib")


@dataclass(frozen=True)
class RunFacts:
    run_id: str | None
    suite: str | None
    started_at: str | None

    @property
    def date(self) -> str | None:
        moment = _moment(self.started_at)
        return moment[:10] if moment else None


@dataclass(frozen=True)
class TargetFacts:
    kind: str | None
    type: str | None
    size_gib: int | None


@dataclass(frozen=True)
class Price:
    """A config's monthly price and where it came from."""

    monthly_usd: float | None
    partial: bool | None
    source: str | None
    date: str | None


@dataclass(frozen=True)
class ConfigFacts:
    """What the request and the price book say of one config."""

    instance_type: str | None
    targets: Mapping[str, TargetFacts] = field(default_factory=dict)
    price: Price | None = None


def config_facts(config: Config, price: Price | None) -> ConfigFacts:
    targets: dict[str, TargetFacts] = {}
    for target in config.targets:
        document = target.model_dump(mode="json")
        kind_type = next((document[f] for f in _TYPE_FIELDS if isinstance(document.get(f), str)), None)
        size = next((document[f] for f in _SIZE_FIELDS if isinstance(document.get(f), int)), None)
        targets[str(target.id)] = TargetFacts(kind=target.kind, type=kind_type, size_gib=size)
    return ConfigFacts(
        instance_type=config.instance_type,
        targets=targets,
        price=price,
    )


def variant_text(variant: Mapping[str, Any]) -> str:
    """``iodepth=32,numjobs=4``: the sweep point in name order, as the store keys it."""
    return ",".join(f"{name}={value}" for name, value in sorted(variant.items()))


def _moment(text: str | None) -> str | None:
    """An ISO 8601 time in UTC (``2030-01-02T03:04:05Z``, milliseconds kept where there are any);
    None when it is absent or not a time."""
    if not text:
        return None
    try:
        moment = parse_iso(text).astimezone(UTC)
    except ValueError:
        return None
    return moment.isoformat(timespec="milliseconds" if moment.microsecond else "seconds").replace(
        "+00:00", "Z"
    )


def result_row(run: RunFacts, config: ConfigFacts | None, result: StoredResult) -> dict[str, Any]:
    """One record with its run and config beside it, keyed by ``schema.COLUMN_NAMES``."""
    record = result.record
    target = config.targets.get(record.target_id) if config is not None else None
    fio_version = result.labels.get(FIO_VERSION_LABEL)
    price = config.price if config is not None else None
    row: dict[str, Any] = {
        "run_id": run.run_id,
        "suite": run.suite,
        "started_at": _moment(run.started_at),
        "date": run.date,
        "config_id": result.config_id,
        "storage_option": result.storage_option,
        "instance_type": config.instance_type if config is not None else None,
        "target_id": record.target_id,
        "target_kind": target.kind if target is not None else None,
        "target_type": target.type if target is not None else None,
        "target_size_gib": target.size_gib if target is not None else None,
        "monthly_usd": price.monthly_usd if price is not None else None,
        "monthly_usd_partial": price.partial if price is not None else None,
        "price_source": price.source if price is not None else None,
        "price_date": price.date if price is not None else None,
        "workload": record.workload,
        "profile": record.profile,
        "variant": variant_text(record.variant),
        "phase": record.phase,
        "repetition": record.repetition,
        "direction": record.direction,
        "engine": record.engine,
        "job_group": record.group,
        "jobs": record.jobs,
        "client": record.client,
        "client_index": record.client_index,
        "clients": record.clients,
        "emulated": any(label.startswith(EMULATED_LABEL_PREFIX) for label in record.labels),
        "labels": ",".join(record.labels),
        "fio_version": fio_version if isinstance(fio_version, str) and fio_version else None,
        "measured_at": _moment(record.started_at),
        "io_bytes": record.bytes,
        "ios": record.ios,
        "files": record.files,
        **_measured(record),
    }
    return {name: row[name] for name in COLUMN_NAMES}  # the schema's order, every column


def _measured(record: ResultRecord) -> dict[str, Any]:
    latency = record.latency
    volume = record.volume
    spread = record.client_spread
    numbers = {
        "iops": record.iops,
        "bw_mibps": record.bw_mibps,
        "runtime_s": record.runtime_s,
        "lat_mean_us": latency.mean_us if latency else None,
        "lat_stdev_us": latency.stdev_us if latency else None,
        "lat_min_us": latency.min_us if latency else None,
        "lat_max_us": latency.max_us if latency else None,
        "p50_us": latency.p50_us if latency else None,
        "p90_us": latency.p90_us if latency else None,
        "p95_us": latency.p95_us if latency else None,
        "p99_us": latency.p99_us if latency else None,
        "p99_9_us": latency.p999_us if latency else None,
        "job_bw_min_mibps": record.job_bw_min_mibps,
        "job_bw_max_mibps": record.job_bw_max_mibps,
        "job_runtime_min_s": record.job_runtime_min_s,
        "job_runtime_max_s": record.job_runtime_max_s,
        "cpu_usr_pct": record.cpu_usr_pct,
        "cpu_sys_pct": record.cpu_sys_pct,
        "real_s": record.real_s,
        "user_s": record.user_s,
        "sys_s": record.sys_s,
        "client_iops_min": spread.iops_min if spread else None,
        "client_iops_max": spread.iops_max if spread else None,
        "client_iops_cv_pct": spread.iops_cv_pct if spread else None,
        "straggler_shortfall_pct": spread.straggler_shortfall_pct if spread else None,
        "volume_iops": volume.iops if volume else None,
        "volume_bw_mibps": volume.bw_mibps if volume else None,
        "volume_lat_mean_us": volume.mean_latency_us if volume else None,
    }
    # NaN and infinities have no JSON, no CSV reader agrees on them, and SQL would compare them
    measured: dict[str, Any] = {name: finite(value) for name, value in numbers.items()}
    measured["lat_basis"] = latency.basis if latency else None
    measured["lat_samples"] = latency.samples if latency else None
    measured["volume_source"] = volume.source if volume else None
    measured["straggler_client"] = spread.straggler if spread else None
    return measured


# ---------------------------------------------------------------------------- a stored run


def _request(document: Any) -> BenchmarkRequest | None:
    try:
        return parse_request(document) if isinstance(document, dict) else None
    except RequestError:
        return None  # an older request shape: the config columns stay empty, the metrics do not


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def _prices(economics: Mapping[str, Any] | None) -> dict[str, Price]:
    """Finalize's monthly price of each config (``run.economics.configs``)."""
    prices: dict[str, Price] = {}
    configs = mapping(economics).get("configs")
    for item in configs if isinstance(configs, list) else []:
        entry = mapping(item)
        if isinstance(entry.get("id"), str):
            partial = entry.get("cost_partial")
            prices[entry["id"]] = Price(
                monthly_usd=finite(entry.get("monthly_usd")),
                partial=partial if isinstance(partial, bool) else None,
                source=_text(entry.get("price_source")),
                date=_text(entry.get("price_date")),
            )
    return prices


def run_rows(document: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The rows of a stored run, in the store's order (config, target, workload, repetition)."""
    decoded = decode_run(document)
    run = RunFacts(run_id=decoded.run.run_id, suite=decoded.run.suite, started_at=decoded.run.started_at)
    request = _request(decoded.run.request)
    prices = _prices(decoded.run.economics)
    configs: dict[str, ConfigFacts] = {}
    for config in request.configs if request is not None else []:
        configs[config.id] = config_facts(config, prices.get(config.id))
    return rows_of(run, configs, decoded.results)


def rows_of(
    run: RunFacts, configs: Mapping[str, ConfigFacts], results: Iterable[StoredResult]
) -> list[dict[str, Any]]:
    return [result_row(run, configs.get(result.config_id), result) for result in results]

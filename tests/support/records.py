"""``ResultRecord`` builders: one measured row with the defaults most tests share.

A test names only what it is about; every other field is a plausible fio 4k random read of one
gp3 volume (``std-randread-4k``, one 1 GiB repetition of 30 s).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from storagebench.results.records import HistogramBucket, LatencyStats, ResultRecord

DEFAULTS: dict[str, Any] = {
    "config_id": "gp3",
    "target_id": "ebs0",
    "workload": "std-randread-4k",
    "repetition": 1,
    "phase": "run",
    "direction": "read",
    "engine": "fio",
    "bytes": 1 << 30,
    "runtime_s": 30.0,
}


def result_record(**fields: Any) -> ResultRecord:
    """A record with ``fields`` over the defaults; the profile is the workload unless given."""
    values = {**DEFAULTS, **fields}
    values.setdefault("profile", values["workload"])
    return ResultRecord(**values)


def latency(p95_us: float, **fields: Any) -> LatencyStats:
    """A ``lat`` summary around a p95: the mean half of it, the maximum twice, unless given."""
    values: dict[str, Any] = {
        "basis": "lat",
        "samples": 1000,
        "mean_us": p95_us / 2,
        "stdev_us": 1.0,
        "min_us": 1.0,
        "max_us": p95_us * 2,
        "p95_us": p95_us,
    }
    values.update(fields)
    return LatencyStats(**values)


def repetitions(iops: Mapping[str, Iterable[float]], **fields: Any) -> list[ResultRecord]:
    """One record per value: repetitions 1, 2, ... of each config's IOPS, in the mapping's order."""
    return [
        result_record(config_id=config_id, repetition=i + 1, iops=value, **fields)
        for config_id, values in iops.items()
        for i, value in enumerate(values)
    ]


def stored_result(record: ResultRecord, labels: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """A result as ``ResultsStore.get_run`` answers it: the record as JSON beside its config and labels."""
    return {
        "config_id": record.config_id,
        "labels": dict(labels or {}),
        "record": record.model_dump(mode="json"),
    }


def emulated(record: ResultRecord, size: str = "100GiB") -> ResultRecord:
    """The record as local mode labels it, first: measured on a volume emulating its config's type."""
    return record.model_copy(update={"labels": [f"emulated:{record.config_id}:{size}", *record.labels]})


def minute_of_4k(iops: float, lat: LatencyStats, **fields: Any) -> ResultRecord:
    """A 60 s run of four 4 KiB jobs in one group at ``iops``: bandwidth, bytes and I/Os follow from it."""
    rates = {"iops": iops, "bw_mibps": iops * 4096 / 2**20, "ios": int(iops * 60)}
    return result_record(
        group=0, jobs=4, **rates, bytes=int(iops * 4096 * 60), runtime_s=60.0, latency=lat, **fields
    )


# What a store round-trips: a five-minute four-job fio-randread of 904,018 I/Os with a 39-bucket histogram.
STORED_SPREAD: dict[str, Any] = {"samples": 904_018, "stdev_us": 92.5, "min_us": 211.0, "max_us": 48_211.9}
STORED: dict[str, Any] = {
    "workload": "randread-4k",
    "profile": "fio-randread",
    "variant": {"iodepth": 32, "bs": "4k"},
    "jobs": 4,
    "bytes": 3_702_857_728,
    "ios": 904_018,
    "runtime_s": 300.0,
    "histogram": [HistogramBucket(le_us=2.0 ** (i / 4), count=i * 10) for i in range(1, 40)],
}


def stored_record(mean_us: float, percentiles: Mapping[str, float], **fields: Any) -> ResultRecord:
    """A record with every part a store keeps: ``STORED`` and a latency of ``mean_us`` and ``percentiles``."""
    lat = LatencyStats(basis="lat", **STORED_SPREAD, mean_us=mean_us, **percentiles)
    return result_record(**{**STORED, "latency": lat, **fields})

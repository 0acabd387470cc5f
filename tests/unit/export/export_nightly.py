"""Realistic export rows: nights of a nightly suite on EBS, built through the export's own row builder
(``rows_of`` over ResultRecords) so the SQL tests read what Collect writes.

Four 4k-random-read options, three repetitions a night (p95 in us, IOPS):

* gp3 at 12,000 IOPS, $190/month: always under 2 ms at >= 11,900 IOPS - the expected answer;
* gp3 at 10,000 IOPS, $170/month: one repetition at 2.3 ms three nights ago - fails on its worst;
* gp2, $140/month: 600 IOPS at 5 ms - fails;
* io2 at 16,000 IOPS, $1,210/month: meets, but costs more.

Beside them, rows the queries must leave out: an emulated volume that "meets" at $60, another suite
at $50, a write workload at $40, and nights older than the windows (12 and 40 days ago).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, timedelta
from typing import Any

from tests.support.records import latency, minute_of_4k
from tests.support.runs import work_item

from storagebench.core.state import StepTiming
from storagebench.export.rows import ConfigFacts, Price, RunFacts, TargetFacts, rows_of
from storagebench.results.records import ResultRecord
from storagebench.store.models import StoredResult
from storagebench.workflow.artifact_keys import export_key

INSTANCE = "m7g.xlarge"


@dataclass(frozen=True)
class Option:
    config_id: str
    option: str
    ebs_type: str
    monthly_usd: float
    emulated: bool = False


GP3_12K = Option("gp3-12k", f"{INSTANCE}/ebs:gp3:200GiB:12000iops:xfs", "gp3", 190.0)
GP3_10K = Option("gp3-10k", f"{INSTANCE}/ebs:gp3:200GiB:10000iops:xfs", "gp3", 170.0)
GP2 = Option("gp2", f"{INSTANCE}/ebs:gp2:200GiB:xfs", "gp2", 140.0)
IO2 = Option("io2", f"{INSTANCE}/ebs:io2:200GiB:16000iops:xfs", "io2", 1210.0)
EMULATED = Option("emulated", f"{INSTANCE}/ebs:gp3:20GiB:xfs", "gp3", 60.0, emulated=True)
WEEKLY = Option("weekly", f"{INSTANCE}/ebs:gp3:200GiB:16000iops:xfs", "gp3", 50.0)  # another suite
WRITER = Option("writer", f"{INSTANCE}/ebs:gp3:200GiB:14000iops:xfs", "gp3", 40.0)  # measured writes only


def _record(option: Option, workload: str, repetition: int, iops: float, p95_us: float) -> ResultRecord:
    labels = [f"emulated:{option.ebs_type}:200GiB"] if option.emulated else []
    spread = {"samples": int(iops * 60), "mean_us": p95_us * 0.6, "stdev_us": p95_us * 0.3, "min_us": 90.0}
    percentiles = {"p50_us": p95_us * 0.55, "p90_us": p95_us * 0.9, "p99_us": p95_us * 1.6}
    lat = latency(p95_us, **spread, max_us=p95_us * 8, **percentiles, p999_us=p95_us * 3)
    direction = "write" if "write" in workload else "read"
    identity = {"config_id": option.config_id, "workload": workload, "repetition": repetition}
    return minute_of_4k(iops, lat, **identity, direction=direction, labels=labels)


# (option, workload, days ago, suite) -> one (iops, p95 us) per repetition
NIGHTS: dict[tuple[Option, str, int, str], list[tuple[float, float]]] = {}
for days in (1, 2, 3):
    NIGHTS[(GP3_12K, "std-randread-4k", days, "nightly")] = [
        (12010.5, 1210.0 + 10 * days),
        (11990.0, 1450.0 + 20 * days),
        (11950.5, 1390.0 + days),
    ]
    NIGHTS[(GP3_10K, "std-randread-4k", days, "nightly")] = [
        (10040.0, 1880.0),
        (10010.0, 2300.0 if days == 3 else 1900.0),
        (10025.0, 1850.0),
    ]
    NIGHTS[(GP2, "std-randread-4k", days, "nightly")] = [(600.2, 5100.0), (599.8, 5230.0), (600.0, 4990.0)]
    NIGHTS[(IO2, "std-randread-4k", days, "nightly")] = [(16002.0, 610.0), (15998.0, 640.0), (16001.0, 600.0)]
    NIGHTS[(EMULATED, "std-randread-4k", days, "nightly")] = [(12500.0, 300.0)] * 3
    NIGHTS[(WEEKLY, "std-randread-4k", days, "weekly")] = [(12500.0, 900.0)] * 3
    NIGHTS[(WRITER, "std-randwrite-4k", days, "nightly")] = [(12500.0, 900.0)] * 3
# gp3 at 10,000 IOPS met everything 12 days ago (outside the 7-day window, inside the 30-day trend)
NIGHTS[(GP3_10K, "std-randread-4k", 12, "nightly")] = [(10100.0, 1700.0)] * 3
NIGHTS[(GP3_12K, "std-randread-4k", 12, "nightly")] = [
    (12000.0, 1500.0),
    (12000.0, 1600.0),
    (12000.0, 1700.0),
]
NIGHTS[(GP3_12K, "std-randread-4k", 40, "nightly")] = [(12000.0, 9000.0)] * 3  # outside both windows


def run_id(suite: str, night: date) -> str:
    return f"{suite}-{night:%Y%m%d}T020000Z-0a1b"


def nightly_rows(today: date) -> dict[tuple[str, str, str], list[dict[str, Any]]]:
    """Rows by (suite, night, config id): what Collect writes to one export key each."""
    files: dict[tuple[str, str, str], list[dict[str, Any]]] = {}
    for (option, workload, days, suite), repetitions in NIGHTS.items():
        night = today - timedelta(days=days)
        price = Price(monthly_usd=option.monthly_usd, partial=False, source="snapshot", date="2026-11-21")
        facts = ConfigFacts(
            instance_type=INSTANCE,
            targets={"ebs0": TargetFacts(kind="ebs", type=option.ebs_type, size_gib=200)},
            price=price,
        )
        run = RunFacts(run_id=run_id(suite, night), suite=suite, started_at=f"{night.isoformat()}T02:00:00Z")
        results = [
            StoredResult(
                config_id=option.config_id,
                record=_record(option, workload, repetition, iops, p95),
                storage_option=option.option,
                record_key=None,
                labels={"storage_option": option.option, "suite": suite, "fio_version": "fio-3.36"},
            )
            for repetition, (iops, p95) in enumerate(repetitions, start=1)
        ]
        key = (suite, night.isoformat(), option.config_id)
        files.setdefault(key, []).extend(rows_of(run, {option.config_id: facts}, results))
    return files


def export_key_of(suite: str, night: str, config_id: str) -> str:
    """The key Collect writes one config's rows to (``artifact_keys.export_key`` of its work item)."""
    timing = StepTiming(ready_poll_s=1, ready_timeout_s=1, heartbeat_s=1, command_timeout_s=1)
    run = run_id(suite, date.fromisoformat(night))
    item = work_item(
        run, config_id, suite, "us-east-1", f"{night}T02:00:00Z", f"{night}T08:00:00Z", timing=timing
    )
    return export_key(item)

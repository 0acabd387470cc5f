"""The flat export's columns: the one list CSV headers, the Parquet schema and the Glue table follow.

A row is one measured record (config, workload, variant, phase, repetition, direction) with the
run's and the config's identity beside it, so a row reads on its own in a spreadsheet or in SQL.
Every metric carries its unit in its name (``_us``, ``_s``, ``_mibps``, ``_bytes``, ``_pct``,
``_usd``). Types are the four the Glue catalog, Parquet and JSON all share: ``string``, ``bigint``,
``double``, ``boolean``; times are ISO 8601 text in UTC (the JSON SerDe reads no ISO timestamp).

``suite`` and ``date`` are also the partition keys of the Athena table (``PARTITION_KEYS``): the
files carry them as columns, the table takes them from the key (``artifact_keys.export_key``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

__all__ = ["COLUMNS", "COLUMN_NAMES", "PARTITION_KEYS", "Column", "ColumnType", "column", "table_columns"]

ColumnType = Literal["string", "bigint", "double", "boolean"]


@dataclass(frozen=True)
class Column:
    name: str
    type: ColumnType
    unit: str
    description: str


COLUMNS: tuple[Column, ...] = (
    # the run
    Column("run_id", "string", "", "the run (the Step Functions execution name)"),
    Column("suite", "string", "", "the request's name; a partition key of the Athena table"),
    Column("started_at", "string", "ISO 8601 UTC", "when the run started"),
    Column(
        "date", "string", "YYYY-MM-DD", "the UTC day the run started; a partition key of the Athena table"
    ),
    # the config and its target
    Column("config_id", "string", "", "the config as the request names it"),
    Column("storage_option", "string", "", "instance type and target, the key of a series across runs"),
    Column("instance_type", "string", "", "the EC2 instance type that ran the workload"),
    Column("target_id", "string", "", "the target as the request names it (ebs0, efs0, ...)"),
    Column("target_kind", "string", "", "ebs, efs, fsx_lustre, instance_store, nfs, file_gateway, local"),
    Column("target_type", "string", "", "EBS volume type, EFS throughput mode or FSx deployment type"),
    Column("target_size_gib", "bigint", "GiB", "EBS size per volume or FSx capacity"),
    Column(
        "monthly_usd",
        "double",
        "USD/month",
        "what the config costs per month: the run's own pricing (Finalize) in an export of a stored run, "
        "the bundled price snapshot in the files Collect writes",
    ),
    Column(
        "monthly_usd_partial", "boolean", "", "true when a price was missing: monthly_usd is a lower bound"
    ),
    Column(
        "price_source", "string", "", "where monthly_usd's prices came from (snapshot, price-list-api, ...)"
    ),
    Column("price_date", "string", "YYYY-MM-DD", "the date of those prices"),
    # the measurement's identity
    Column("workload", "string", "", "workload id as named in the request"),
    Column("profile", "string", "", "the library profile the workload runs"),
    Column("variant", "string", "", "sweep point as name=value pairs in name order (empty: no sweep)"),
    Column("phase", "string", "", "run, create, read, prewarm, ..."),
    Column("repetition", "bigint", "", "1-based repetition"),
    Column("direction", "string", "", "read, write, trim or mixed"),
    Column("engine", "string", "", "fio, dd, command or prewarm"),
    Column("job_group", "bigint", "", "fio's group id, empty for other engines"),
    Column("jobs", "bigint", "", "jobs, threads or processes that did the I/O"),
    Column(
        "client",
        "string",
        "",
        "a multi-client step's per-client row: the client (host:port); empty on single-client and "
        "aggregate rows",
    ),
    Column("client_index", "bigint", "", "that client's 1-based position in the step's clients"),
    Column(
        "clients",
        "bigint",
        "",
        "an aggregate row of a multi-client step: the clients it sums; empty otherwise",
    ),
    Column(
        "emulated", "boolean", "", "true on emulated volumes (local mode): latency says nothing about EBS"
    ),
    Column("labels", "string", "", "the record's findings and environment, comma-separated"),
    Column("fio_version", "string", "", "fio's version on the instance, where the agent recorded it"),
    Column("measured_at", "string", "ISO 8601 UTC", "when this repetition's phase started"),
    # what it measured
    Column("iops", "double", "IO/s", "I/O operations per second"),
    Column("bw_mibps", "double", "MiB/s", "bandwidth in MiB/s (2^20 bytes)"),
    Column("io_bytes", "bigint", "bytes", "bytes transferred"),
    Column("ios", "bigint", "I/Os", "I/O operations completed"),
    Column("runtime_s", "double", "s", "wall time of the measured I/O"),
    Column("lat_basis", "string", "", "lat (submission + completion) or clat (completion only)"),
    Column("lat_samples", "bigint", "I/Os", "latency samples"),
    Column("lat_mean_us", "double", "us", "mean latency"),
    Column("lat_stdev_us", "double", "us", "standard deviation of the latency"),
    Column("lat_min_us", "double", "us", "lowest latency"),
    Column("lat_max_us", "double", "us", "highest latency"),
    Column("p50_us", "double", "us", "median latency"),
    Column("p90_us", "double", "us", "90th percentile latency"),
    Column("p95_us", "double", "us", "95th percentile latency"),
    Column("p99_us", "double", "us", "99th percentile latency"),
    Column("p99_9_us", "double", "us", "99.9th percentile latency"),
    Column("job_bw_min_mibps", "double", "MiB/s", "slowest job's bandwidth (fio minb, dd's slowest thread)"),
    Column("job_bw_max_mibps", "double", "MiB/s", "fastest job's bandwidth"),
    Column("job_runtime_min_s", "double", "s", "shortest job runtime"),
    Column("job_runtime_max_s", "double", "s", "longest job runtime"),
    Column("cpu_usr_pct", "double", "%", "user CPU (fio: mean per job; command: user/real)"),
    Column("cpu_sys_pct", "double", "%", "system CPU"),
    Column("real_s", "double", "s", "a timed command's wall time"),
    Column("user_s", "double", "s", "a timed command's user time"),
    Column("sys_s", "double", "s", "a timed command's system time"),
    Column("files", "bigint", "files", "files created or read (metadata workloads)"),
    # several clients at once (the aggregate row's spread over its clients)
    Column("client_iops_min", "double", "IO/s", "an aggregate row's slowest client's IOPS"),
    Column("client_iops_max", "double", "IO/s", "an aggregate row's fastest client's IOPS"),
    Column(
        "client_iops_cv_pct",
        "double",
        "%",
        "coefficient of variation of the clients' IOPS (population stdev / mean)",
    ),
    Column("straggler_client", "string", "", "the client furthest below the median IOPS (host:port)"),
    Column("straggler_shortfall_pct", "double", "%", "how far the straggler is below the median IOPS"),
    # what the volume saw
    Column(
        "volume_source", "string", "", "where the volume's view came from (EBS statistics or kernel counters)"
    ),
    Column("volume_iops", "double", "IO/s", "operations the volume saw per second of the record's runtime"),
    Column("volume_bw_mibps", "double", "MiB/s", "bandwidth the volume saw"),
    Column("volume_lat_mean_us", "double", "us", "mean latency the volume saw"),
)

COLUMN_NAMES: tuple[str, ...] = tuple(c.name for c in COLUMNS)
PARTITION_KEYS: tuple[str, ...] = ("suite", "date")
"""The Athena table's partitions, in key order (``exports/suite=<suite>/date=<date>/...``)."""

_BY_NAME = {c.name: c for c in COLUMNS}


def column(name: str) -> Column:
    try:
        return _BY_NAME[name]
    except KeyError:
        raise KeyError(f"export column {name!r}: not in the schema ({', '.join(COLUMN_NAMES)})") from None


def table_columns() -> tuple[Column, ...]:
    """The Glue table's data columns: every column but the partition keys (Athena refuses a name
    that is both)."""
    return tuple(c for c in COLUMNS if c.name not in PARTITION_KEYS)

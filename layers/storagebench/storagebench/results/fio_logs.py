"""fio's per-job time series logs (``write_iops_log``, ``write_bw_log``, ``write_lat_log``).

Each job writes its own file, ``<prefix>_<kind>.<job>.log`` (``kind``: iops, bw, lat, clat,
slat; ``<prefix>_<kind>.log`` with ``per_job_logs=0``), one sample a line::

    time_ms, value, direction, block size, offset[, priority]

direction is 0 read, 1 write, 2 trim. The agent sets ``log_avg_msec=1000``, so each sample is
the average over a window of about one second ending at ``time_ms``. Units are fio's: iops in
I/O per second, bw in KiB/s, latency in ns (fio 3.x).

Samples are put in 1 s buckets by rounding ``time_ms`` to the nearest second (a window ending
at 999 ms or 2001 ms belongs to second 1 or 2; windows drift by a millisecond or so). Two
samples of one job in the same bucket (fio flushes a last, partial window at exit, often with
the same timestamp as the last full one) are averaged. Buckets are labelled with the second
their window ends at, the first being 1.

fio 3.33 quirk worth knowing: the iops and bw logs can stop one window before the latency logs
(the final partial window is flushed to the latency logs only).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePath

from storagebench.results.errors import ParseError

Series = list[tuple[float, float]]
LOG_DIRECTIONS = {0: "read", 1: "write", 2: "trim"}
KINDS = ("iops", "bw", "lat", "clat", "slat")
_FILE = re.compile(r"^(?P<prefix>.+)_(?P<kind>iops|bw|lat|clat|slat)(?:\.(?P<job>\d+))?\.log$")


@dataclass(frozen=True)
class LogSample:
    time_ms: int
    value: float
    direction: int  # 0 read, 1 write, 2 trim
    block_size: int
    offset: int
    priority: int | None = None


@dataclass(frozen=True)
class LogFile:
    path: Path
    prefix: str
    kind: str
    job: int  # 0 for a per_job_logs=0 file


@dataclass(frozen=True)
class TimeSeries:
    """Per-direction series of a phase, in the record's units."""

    iops: dict[str, Series]
    bw_mibps: dict[str, Series]
    lat_us: dict[str, Series]


def parse_log(text: str, source: str | PurePath | None = None) -> list[LogSample]:
    """Parse one fio log file's text. Blank lines are skipped; anything else malformed raises."""
    samples: list[LogSample] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        fields = [field.strip() for field in line.split(",")]
        if len(fields) < 5 or len(fields) > 6:
            raise ParseError(source, f"line {number}: expected 5 or 6 comma-separated fields, got {line!r}")
        try:
            samples.append(
                LogSample(
                    time_ms=int(fields[0]),
                    value=float(fields[1]),
                    direction=int(fields[2]),
                    block_size=int(fields[3]),
                    offset=int(fields[4]),
                    priority=int(fields[5]) if len(fields) == 6 else None,
                )
            )
        except ValueError:
            raise ParseError(source, f"line {number}: non-numeric field in {line!r}") from None
    return samples


def read_log(path: str | Path) -> list[LogSample]:
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ParseError(path, f"cannot read: {exc.strerror or exc}") from None
    return parse_log(text, path)


def find_logs(directory: str | Path, kind: str, prefix: str | None = None) -> list[LogFile]:
    """The ``kind`` logs of every job under ``directory``, ordered by prefix and job number."""
    if kind not in KINDS:
        raise ValueError(f"kind {kind!r} is not one of {', '.join(KINDS)}")
    found: list[LogFile] = []
    for path in Path(directory).iterdir():
        match = _FILE.match(path.name)
        if not match or match["kind"] != kind or (prefix is not None and match["prefix"] != prefix):
            continue
        found.append(LogFile(path=path, prefix=match["prefix"], kind=kind, job=int(match["job"] or 0)))
    return sorted(found, key=lambda f: (f.prefix, f.job))


def bucket_of(time_ms: int) -> int:
    """The 1 s bucket of a sample: its window's end rounded to the nearest second, at least 1."""
    return max(1, (time_ms + 500) // 1000)


def job_buckets(samples: Iterable[LogSample]) -> dict[str, dict[int, float]]:
    """One job's samples as direction -> bucket -> value (samples sharing a bucket averaged)."""
    sums: dict[str, dict[int, list[float]]] = {}
    for sample in samples:
        direction = LOG_DIRECTIONS.get(sample.direction)
        if direction is None:
            continue
        sums.setdefault(direction, {}).setdefault(bucket_of(sample.time_ms), []).append(sample.value)
    return {d: {b: sum(v) / len(v) for b, v in by_bucket.items()} for d, by_bucket in sums.items()}


def _series(by_bucket: Mapping[int, float], scale: float = 1.0) -> Series:
    return [(float(bucket), value * scale) for bucket, value in sorted(by_bucket.items())]


def sum_series(jobs: Sequence[Sequence[LogSample]], scale: float = 1.0) -> dict[str, Series]:
    """Rates (iops, bw) summed across jobs per direction and 1 s bucket, times ``scale``.

    A bucket where only some jobs logged a sample sums those jobs only.
    """
    totals: dict[str, dict[int, float]] = {}
    for samples in jobs:
        for direction, by_bucket in job_buckets(samples).items():
            target = totals.setdefault(direction, {})
            for bucket, value in by_bucket.items():
                target[bucket] = target.get(bucket, 0.0) + value
    return {d: _series(b, scale) for d, b in sorted(totals.items())}


def mean_latency_series(
    latency: Sequence[Sequence[LogSample]],
    weights: Sequence[Sequence[LogSample]] | None = None,
    scale: float = 1.0,
) -> dict[str, Series]:
    """Latency averaged across jobs per direction and 1 s bucket, times ``scale``.

    ``weights`` are the same jobs' iops logs, in the same order: a bucket where every job has
    an iops sample is weighted by each job's I/O rate (the mean over all I/Os of the second);
    any other bucket falls back to the plain mean of the jobs' values.
    """
    if weights is not None and len(weights) != len(latency):
        raise ValueError(f"{len(weights)} iops logs for {len(latency)} latency logs")
    lat_jobs = [job_buckets(samples) for samples in latency]
    weight_jobs = [job_buckets(samples) for samples in weights] if weights is not None else None
    result: dict[str, Series] = {}
    for direction in sorted({d for job in lat_jobs for d in job}):
        buckets = sorted({b for job in lat_jobs for b in job.get(direction, {})})
        series: Series = []
        for bucket in buckets:
            values: list[tuple[float, float | None]] = []
            for index, job in enumerate(lat_jobs):
                value = job.get(direction, {}).get(bucket)
                if value is None:
                    continue
                weight = weight_jobs[index].get(direction, {}).get(bucket) if weight_jobs else None
                values.append((value, weight))
            weighted = [(v, w) for v, w in values if w is not None and w > 0]
            if len(weighted) == len(values):
                mean = sum(v * w for v, w in weighted) / sum(w for _, w in weighted)
            else:
                mean = sum(v for v, _ in values) / len(values)
            series.append((float(bucket), mean * scale))
        result[direction] = series
    return result


def read_timeseries(directory: str | Path, prefix: str | None = None) -> TimeSeries:
    """All series of a phase's ``ts/`` directory, converted to IOPS, MiB/s and microseconds.

    Latency is the total latency log (``_lat``) when present, else completion (``_clat``).
    """
    iops_files = find_logs(directory, "iops", prefix)
    bw_files = find_logs(directory, "bw", prefix)
    lat_files = find_logs(directory, "lat", prefix) or find_logs(directory, "clat", prefix)
    iops_logs = [read_log(f.path) for f in iops_files]
    lat_logs = [read_log(f.path) for f in lat_files]
    by_job = {(f.prefix, f.job): logs for f, logs in zip(iops_files, iops_logs, strict=True)}
    weights: list[Sequence[LogSample]] | None = [by_job.get((f.prefix, f.job), []) for f in lat_files]
    if not iops_files:
        weights = None
    return TimeSeries(
        iops=sum_series(iops_logs),
        bw_mibps=sum_series([read_log(f.path) for f in bw_files], scale=1 / 1024),
        lat_us=mean_latency_series(lat_logs, weights, scale=1 / 1000),
    )

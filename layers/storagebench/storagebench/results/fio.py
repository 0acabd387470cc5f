"""fio 3.x JSON / json+ (and fio 2.x usec JSON, for imported results) into ResultRecords.

The agent runs ``fio --output-format=json+,normal``; ``split_fio_output`` separates the
combined stdout into the JSON document (``fio.json``) and fio's normal text (``fio.txt``).

Aggregation: one record per job group (``groupid``) and direction with I/O. The definitions
follow fio's own "Run status group" summary (``stat.c: __show_run_stats``) so a record always
agrees with the line a practitioner would read from fio:

* ``bytes`` and ``ios``: sums over the group's jobs.
* ``runtime_s``: the longest job runtime of that direction (fio's maxt).
* ``bw_mibps`` = group bytes / longest job runtime. This *is* fio's aggrb. It is also the
  honest aggregate: the group moved that many bytes in that wall time. Summing per-job
  bandwidths instead would overstate the aggregate whenever jobs end at different times
  (size-based jobs, stonewalled or failed-over jobs), and would not match fio's summary.
* ``iops`` = group I/Os / longest job runtime, for the same reasons: it is what fio itself
  reports for the group under ``group_reporting`` (where the merged job's runtime is the
  longest member's), and it keeps ``iops * block size == bandwidth`` for fixed-size I/O.
* ``job_bw_min/max_mibps`` and ``job_runtime_min/max_s``: over the JSON entries whose runtime
  in that direction is non-zero, exactly like fio's minb/maxb/mint/maxt. Under
  ``group_reporting`` there is one entry per group, so min = max = aggregate, as fio prints.
* latency: mean weighted by each job's sample count, pooled (sample) standard deviation,
  min of mins and max of maxes. Percentiles are fio's own when the group has one JSON entry
  (a single job or ``group_reporting``); otherwise they come from the merged json+ histograms
  (``bins``), computed the way fio computes them, and are left empty when a multi-job group
  has no bins: percentiles are never averaged.
* ``cpu_usr_pct``/``cpu_sys_pct``: mean per job, as fio reports them under group_reporting.

``basis`` is ``lat`` when fio recorded latency percentiles on total latency
(``lat_percentiles=1``: ``lat_ns.percentile``), else ``clat``; mean, stdev, min, max,
percentiles and histogram all come from that one latency object, so they describe the same
quantity.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import PurePath
from typing import Any, Literal, cast

from storagebench.protocol.fio_output import split_fio_output as agent_split_fio_output
from storagebench.results.errors import FioJobError, ParseError
from storagebench.results.fio_latency import log_histogram, merge_bins, percentile_from_bins, pooled_stats
from storagebench.results.fio_normal import parse_job_summaries, parse_run_status
from storagebench.results.records import Direction, HistogramBucket, LatencyStats, ResultRecord, VariantValue

MIB = 1 << 20
FIO_DIRECTIONS: tuple[Direction, ...] = ("read", "write", "trim", "mixed")
# The record's percentile fields and the keys fio prints for them.
RECORD_PERCENTILES: dict[str, float] = {
    "p50_us": 50.0,
    "p90_us": 90.0,
    "p95_us": 95.0,
    "p99_us": 99.0,
    "p999_us": 99.9,
}

Source = str | PurePath | None
Basis = Literal["lat", "clat"]


def split_fio_output(text: str, source: Source = None) -> tuple[str, str]:
    """The agent's splitter (one implementation), raising ParseError when there is no fio JSON."""
    parts = agent_split_fio_output(text)
    if parts is None:
        raise ParseError(source, "no fio JSON document (an object with a 'jobs' list) in the output")
    return parts


def load_fio_json(text: str, source: Source = None) -> dict[str, Any]:
    """Decode fio's JSON output; also accepts the combined json+,normal output."""
    try:
        document = json.loads(text)
    except json.JSONDecodeError as exc:
        try:
            json_text, _ = split_fio_output(text, source)
        except ParseError:
            raise ParseError(source, f"not fio JSON: {exc}") from None
        document = json.loads(json_text)
    if not isinstance(document, dict) or not isinstance(document.get("jobs"), list):
        raise ParseError(source, "not a fio JSON document: expected an object with a 'jobs' list")
    return cast(dict[str, Any], document)


# --------------------------------------------------------------------------- per-job parsing


@dataclass(frozen=True)
class JobLatency:
    """One job's latency object (``lat_ns``/``clat_ns``, or 2.x ``lat``/``clat``), in ns."""

    basis: Basis
    samples: int
    mean_ns: float
    stdev_ns: float
    min_ns: float
    max_ns: float
    percentiles: dict[float, float]  # percent -> ns
    bins: dict[int, int] | None  # json+: bucket value in ns -> I/O count


@dataclass(frozen=True)
class JobDirection:
    """One JSON ``jobs[]`` entry, one direction (an entry is a whole group under group_reporting)."""

    job: str
    group: int
    direction: Direction
    members: int  # jobs this entry stands for: numjobs under group_reporting, else 1
    io_bytes: int
    ios: int
    runtime_ms: int
    latency: JobLatency | None
    usr_cpu: float | None
    sys_cpu: float | None

    @property
    def bw_bytes_per_s(self) -> float:
        return self.io_bytes * 1000.0 / self.runtime_ms if self.runtime_ms else 0.0


def _number(value: Any, what: str, source: Source) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        raise ParseError(source, f"{what}: expected a number, got {value!r}")
    try:
        return float(value)
    except ValueError:
        raise ParseError(source, f"{what}: expected a number, got {value!r}") from None


def _is_fio2(document: Mapping[str, Any], ddir: Mapping[str, Any]) -> bool:
    version = str(document.get("fio version", ""))
    if version.startswith("fio-2"):
        return True
    return "clat_ns" not in ddir and "lat_ns" not in ddir and ("clat" in ddir or "lat" in ddir)


def _latency_object(ddir: Mapping[str, Any], basis: Basis, fio2: bool) -> Mapping[str, Any] | None:
    key = basis if fio2 else f"{basis}_ns"
    value = ddir.get(key)
    return value if isinstance(value, Mapping) else None


def _preferred_basis(ddir: Mapping[str, Any], fio2: bool) -> Basis:
    """``lat`` when fio computed percentiles or bins on total latency, else ``clat``."""
    lat = _latency_object(ddir, "lat", fio2)
    clat = _latency_object(ddir, "clat", fio2)
    if lat is not None and ("percentile" in lat or "bins" in lat):
        return "lat"
    if clat is not None:
        return "clat"
    return "lat"


def _parse_latency(
    ddir: Mapping[str, Any], basis: Basis, *, fio2: bool, ios: int, where: str, source: Source
) -> JobLatency | None:
    obj = _latency_object(ddir, basis, fio2)
    if obj is None:
        return None
    scale = 1000.0 if fio2 else 1.0  # fio 2.x reports usec
    samples = int(_number(obj.get("N", ios), f"{where}.N", source))
    if samples <= 0:
        return None
    percentiles: dict[float, float] = {}
    raw_percentiles = obj.get("percentile")
    if isinstance(raw_percentiles, Mapping):
        for key, value in raw_percentiles.items():
            percentiles[float(key)] = _number(value, f"{where}.percentile[{key}]", source) * scale
    bins: dict[int, int] | None = None
    raw_bins = obj.get("bins")
    if isinstance(raw_bins, Mapping) and raw_bins:
        bins = {}
        for key, value in raw_bins.items():
            nanos = round(float(key) * scale)
            bins[nanos] = bins.get(nanos, 0) + int(_number(value, f"{where}.bins[{key}]", source))
    return JobLatency(
        basis=basis,
        samples=samples,
        mean_ns=_number(obj.get("mean", 0), f"{where}.mean", source) * scale,
        stdev_ns=_number(obj.get("stddev", 0), f"{where}.stddev", source) * scale,
        min_ns=_number(obj.get("min", 0), f"{where}.min", source) * scale,
        max_ns=_number(obj.get("max", 0), f"{where}.max", source) * scale,
        percentiles=percentiles,
        bins=bins,
    )


def _members(job: Mapping[str, Any], document: Mapping[str, Any]) -> int:
    for options in (job.get("job options"), document.get("global options")):
        if isinstance(options, Mapping) and "numjobs" in options:
            try:
                return max(1, int(str(options["numjobs"])))
            except ValueError:
                return 1
    return 1


def parse_fio_jobs(document: Mapping[str, Any], source: Source = None) -> list[JobDirection]:
    """Every (JSON job entry, direction) with I/O. Raises FioJobError for a job with error != 0."""
    jobs = document.get("jobs")
    if not isinstance(jobs, list):
        raise ParseError(source, "not a fio JSON document: expected a 'jobs' list")
    entries: list[tuple[int, Mapping[str, Any]]] = []
    for index, job in enumerate(jobs):
        if not isinstance(job, Mapping):
            raise ParseError(source, f"jobs[{index}]: expected an object")
        name = str(job.get("jobname", f"jobs[{index}]"))
        group = int(_number(job.get("groupid", 0), f"jobs[{index}].groupid", source))
        error = int(_number(job.get("error", 0), f"jobs[{index}].error", source))
        if error != 0:
            raise FioJobError(source, name, group, error)
        entries.append((group, job))

    # group_reporting leaves one entry per group, named after the group's first job: an entry
    # then stands for numjobs jobs. Without it every job has its own entry (each listing the
    # same numjobs option), so the option must not be multiplied in.
    per_group: dict[int, int] = {}
    for group, _ in entries:
        per_group[group] = per_group.get(group, 0) + 1

    result: list[JobDirection] = []
    for index, (group, job) in enumerate(entries):
        name = str(job.get("jobname", f"jobs[{index}]"))
        members = _members(job, document) if per_group[group] == 1 else 1
        usr = job.get("usr_cpu")
        sys = job.get("sys_cpu")
        for direction in FIO_DIRECTIONS:
            ddir = job.get(direction)
            if not isinstance(ddir, Mapping):
                continue
            where = f"jobs[{index}] ({name}).{direction}"
            fio2 = _is_fio2(document, ddir)
            if "io_kbytes" in ddir and "io_bytes" not in ddir:
                io_bytes = int(_number(ddir["io_kbytes"], f"{where}.io_kbytes", source)) * 1024
            else:
                io_bytes = int(_number(ddir.get("io_bytes", 0), f"{where}.io_bytes", source))
                if fio2 and "io_kbytes" not in ddir:
                    io_bytes *= 1024  # fio 2.x's "io_bytes" was in KiB
            if "runtime" in ddir:
                runtime_ms = int(_number(ddir["runtime"], f"{where}.runtime", source))
            elif members == 1 and "job_runtime" in job:
                # Only a stand-in for one job: under group_reporting job_runtime is the members' sum.
                runtime_ms = int(_number(job["job_runtime"], f"jobs[{index}].job_runtime", source))
            else:
                runtime_ms = 0
            if "total_ios" in ddir:
                ios = int(_number(ddir["total_ios"], f"{where}.total_ios", source))
            else:  # early fio 2.x: only the rate
                ios = round(_number(ddir.get("iops", 0), f"{where}.iops", source) * runtime_ms / 1000)
            if io_bytes <= 0 and ios <= 0:
                continue
            basis = _preferred_basis(ddir, fio2)
            result.append(
                JobDirection(
                    job=name,
                    group=group,
                    direction=direction,
                    members=members,
                    io_bytes=io_bytes,
                    ios=ios,
                    runtime_ms=runtime_ms,
                    latency=_parse_latency(
                        ddir, basis, fio2=fio2, ios=ios, where=f"{where}.{basis}", source=source
                    ),
                    usr_cpu=_number(usr, f"jobs[{index}].usr_cpu", source) if usr is not None else None,
                    sys_cpu=_number(sys, f"jobs[{index}].sys_cpu", source) if sys is not None else None,
                )
            )
    return result


# --------------------------------------------------------------------------- aggregation


@dataclass(frozen=True)
class FioGroupResult:
    """One fio job group, one direction: the measurement part of a ResultRecord."""

    group: int
    direction: Direction
    jobs: int
    entries: int  # JSON job entries merged (1 under group_reporting)
    io_bytes: int
    ios: int
    runtime_min_ms: int
    runtime_max_ms: int
    job_bw_min_bytes_per_s: float
    job_bw_max_bytes_per_s: float
    latency: LatencyStats | None
    histogram: list[HistogramBucket] | None
    cpu_usr_pct: float | None
    cpu_sys_pct: float | None

    @property
    def bw_bytes_per_s(self) -> float:
        """fio's aggrb: all bytes over the longest job runtime."""
        return self.io_bytes * 1000.0 / self.runtime_max_ms if self.runtime_max_ms else 0.0

    @property
    def iops(self) -> float:
        return self.ios * 1000.0 / self.runtime_max_ms if self.runtime_max_ms else 0.0

    def to_record(
        self,
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
    ) -> ResultRecord:
        return ResultRecord(
            config_id=config_id,
            target_id=target_id,
            workload=workload,
            profile=profile,
            variant=dict(variant or {}),
            repetition=repetition,
            phase=phase,
            direction=self.direction,
            engine="fio",
            group=self.group,
            jobs=self.jobs,
            iops=self.iops,
            bw_mibps=self.bw_bytes_per_s / MIB,
            bytes=self.io_bytes,
            ios=self.ios,
            runtime_s=self.runtime_max_ms / 1000.0,
            latency=self.latency,
            histogram=self.histogram,
            job_bw_min_mibps=self.job_bw_min_bytes_per_s / MIB,
            job_bw_max_mibps=self.job_bw_max_bytes_per_s / MIB,
            job_runtime_min_s=self.runtime_min_ms / 1000.0,
            job_runtime_max_s=self.runtime_max_ms / 1000.0,
            cpu_usr_pct=self.cpu_usr_pct,
            cpu_sys_pct=self.cpu_sys_pct,
            started_at=started_at,
            raw=list(raw),
            labels=list(labels),
        )


def _group_latency(parts: Sequence[JobDirection]) -> tuple[LatencyStats | None, list[HistogramBucket] | None]:
    latencies = [p.latency for p in parts if p.latency is not None]
    if not latencies:
        return None, None
    # One basis per record: lat only when every entry has it.
    basis: Basis = "lat" if all(lat.basis == "lat" for lat in latencies) else "clat"
    latencies = [lat for lat in latencies if lat.basis == basis]
    samples, mean, stdev = pooled_stats([(lat.samples, lat.mean_ns, lat.stdev_ns) for lat in latencies])
    all_bins = [lat.bins for lat in latencies]
    merged = (
        merge_bins(b for b in all_bins if b is not None) if all(b is not None for b in all_bins) else None
    )
    percentiles: dict[str, float | None] = {}
    for field_name, percent in RECORD_PERCENTILES.items():
        value: float | None = None
        if len(latencies) == 1 and len(parts) == 1:
            value = _own_percentile(latencies[0].percentiles, percent)
        if value is None and merged:
            value = percentile_from_bins(merged, percent)
        percentiles[field_name] = value / 1000.0 if value is not None else None
    stats = LatencyStats(
        basis=basis,
        samples=samples,
        mean_us=mean / 1000.0,
        stdev_us=stdev / 1000.0,
        min_us=min(lat.min_ns for lat in latencies) / 1000.0,
        max_us=max(lat.max_ns for lat in latencies) / 1000.0,
        **percentiles,
    )
    return stats, (log_histogram(merged) if merged else None)


def _own_percentile(percentiles: Mapping[float, float], percent: float) -> float | None:
    for key, value in percentiles.items():
        if math.isclose(key, percent, rel_tol=0, abs_tol=1e-6):
            return value
    return None


def aggregate_fio(
    document: Mapping[str, Any] | str,
    *,
    normal_text: str | None = None,
    source: Source = None,
) -> list[FioGroupResult]:
    """One FioGroupResult per (group, direction with I/O), sorted by group then direction.

    ``normal_text`` (fio's normal output of the same run) is optional; when given, its
    ``(groupid=N, jobs=M)`` headers supply the job count of group_reporting entries, which the
    JSON only implies through the numjobs option.
    """
    if isinstance(document, str):
        document = load_fio_json(document, source)
    parts = parse_fio_jobs(document, source)
    header_jobs: dict[int, int] = {}
    if normal_text:
        summaries = parse_job_summaries(normal_text, source)
        entry_count: dict[int, int] = {}
        for job in document["jobs"]:
            group = int(job.get("groupid", 0))
            entry_count[group] = entry_count.get(group, 0) + 1
        for summary in summaries:
            header_jobs[summary.group] = header_jobs.get(summary.group, 0) + summary.jobs
        # Only trust the headers when they line up one to one with the JSON entries.
        for group, count in entry_count.items():
            if sum(1 for s in summaries if s.group == group) != count:
                header_jobs.pop(group, None)
    return aggregate_parts(parts, header_jobs=header_jobs, source=source)


def aggregate_parts(
    parts: Sequence[JobDirection], *, header_jobs: Mapping[int, int] | None = None, source: Source = None
) -> list[FioGroupResult]:
    """``parse_fio_jobs`` entries (of one fio run, or of every client of a client/server run)
    grouped by (group, direction) into FioGroupResults, sorted by group then direction.

    ``header_jobs`` (group -> jobs from fio's normal output) stands in for the job count of a
    group that has a single JSON entry.
    """
    header_jobs = header_jobs or {}
    grouped: dict[tuple[int, Direction], list[JobDirection]] = {}
    for part in parts:
        grouped.setdefault((part.group, part.direction), []).append(part)

    results: list[FioGroupResult] = []
    order = {d: i for i, d in enumerate(FIO_DIRECTIONS)}
    for (group, direction), members in sorted(grouped.items(), key=lambda kv: (kv[0][0], order[kv[0][1]])):
        timed = [m for m in members if m.runtime_ms > 0]
        if not timed:
            raise ParseError(
                source, f"group {group} {direction}: {sum(m.ios for m in members)} I/Os but no runtime"
            )
        job_bws = [m.bw_bytes_per_s for m in timed]
        latency, histogram = _group_latency(members)
        jobs = sum(m.members for m in members)
        if len(members) == 1 and group in header_jobs:
            jobs = header_jobs[group]
        usr = [(m.usr_cpu, m.members) for m in members if m.usr_cpu is not None]
        sys = [(m.sys_cpu, m.members) for m in members if m.sys_cpu is not None]
        results.append(
            FioGroupResult(
                group=group,
                direction=direction,
                jobs=jobs,
                entries=len(members),
                io_bytes=sum(m.io_bytes for m in members),
                ios=sum(m.ios for m in members),
                runtime_min_ms=min(m.runtime_ms for m in timed),
                runtime_max_ms=max(m.runtime_ms for m in timed),
                job_bw_min_bytes_per_s=min(job_bws),
                job_bw_max_bytes_per_s=max(job_bws),
                latency=latency,
                histogram=histogram,
                cpu_usr_pct=sum(v * w for v, w in usr) / sum(w for _, w in usr) if usr else None,
                cpu_sys_pct=sum(v * w for v, w in sys) / sum(w for _, w in sys) if sys else None,
            )
        )
    return results


def fio_records(
    document: Mapping[str, Any] | str,
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
    normal_text: str | None = None,
    source: Source = None,
) -> list[ResultRecord]:
    """``aggregate_fio`` turned into ResultRecords carrying the given identity."""
    return [
        result.to_record(
            config_id=config_id,
            target_id=target_id,
            workload=workload,
            profile=profile,
            repetition=repetition,
            phase=phase,
            variant=variant,
            started_at=started_at,
            raw=raw,
            labels=labels,
        )
        for result in aggregate_fio(document, normal_text=normal_text, source=source)
    ]


def summary_disagreements(
    results: Sequence[FioGroupResult], normal_text: str, source: Source = None
) -> list[str]:
    """Where records computed from the JSON disagree with fio's own "Run status group" lines.

    Checks aggrb, minb/maxb, io and mint/maxt of every group and direction, within the
    rounding of fio's printed numbers. An empty list means the records match fio's summary.
    """
    statuses = {(s.group, s.direction): s for s in parse_run_status(normal_text, source)}
    problems: list[str] = []
    seen: set[tuple[int, str]] = set()
    for result in results:
        key: tuple[int, str] = (result.group, result.direction)
        seen.add(key)
        status = statuses.get(key)
        where = f"group {result.group} {result.direction}"
        if status is None:
            problems.append(f"{where}: fio's summary has no such line")
            continue
        checks = [
            ("aggregate bandwidth", status.bw, result.bw_bytes_per_s),
            ("slowest job bandwidth", status.bw_min, result.job_bw_min_bytes_per_s),
            ("fastest job bandwidth", status.bw_max, result.job_bw_max_bytes_per_s),
            ("io", status.io, float(result.io_bytes)),
        ]
        for what, printed, ours in checks:
            if not printed.agrees(ours):
                problems.append(f"{where}: {what} {ours:.0f} B disagrees with fio's {printed}")
        if (status.run_min_ms, status.run_max_ms) != (result.runtime_min_ms, result.runtime_max_ms):
            problems.append(
                f"{where}: runtime {result.runtime_min_ms}-{result.runtime_max_ms} ms disagrees with "
                f"fio's run={status.run_min_ms}-{status.run_max_ms}msec"
            )
    for key in statuses.keys() - seen:
        problems.append(f"group {key[0]} {key[1]}: in fio's summary but no JSON job has that I/O")
    return sorted(problems)

"""What is compared: the metrics and which way is better, which metric judges a workload of each intent,
and measurements (phase, sweep point, direction, the read+write total) keyed and named."""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal, NamedTuple

from pydantic import BaseModel, ConfigDict

from storagebench.analysis.stats import Aggregate
from storagebench.request.model import BenchmarkRequest
from storagebench.results.records import ResultRecord
from storagebench.workloads import get_profile

Noise = Literal["outside", "overlap", "unknown"]


@dataclass(frozen=True)
class MetricSpec:
    name: str
    label: str
    higher_is_better: bool
    kind: Literal["rate", "latency", "time"]
    unit: str


METRICS: dict[str, MetricSpec] = {
    "iops": MetricSpec("iops", "IOPS", True, "rate", "IOPS"),
    "bw_mibps": MetricSpec("bw_mibps", "MiB/s", True, "rate", "MiB/s"),
    "lat_mean_us": MetricSpec("lat_mean_us", "mean latency", False, "latency", "us"),
    "lat_p95_us": MetricSpec("lat_p95_us", "p95 latency", False, "latency", "us"),
    "lat_p99_us": MetricSpec("lat_p99_us", "p99 latency", False, "latency", "us"),
    "real_s": MetricSpec("real_s", "run time", False, "time", "s"),
}
"""The metrics compared, and which way is better."""

RATE_FIRST = ("iops", "bw_mibps", "real_s", "lat_p95_us", "lat_mean_us", "lat_p99_us")
INTENT_METRICS: dict[str, tuple[str, ...]] = {
    "iops": RATE_FIRST,
    "mixed": RATE_FIRST,
    "throughput": ("bw_mibps", "real_s", "iops", "lat_p95_us", "lat_mean_us", "lat_p99_us"),
    "latency": ("lat_p95_us", "lat_mean_us", "lat_p99_us", "iops", "bw_mibps", "real_s"),
    "metadata": ("real_s", "bw_mibps", "iops", "lat_p95_us", "lat_mean_us", "lat_p99_us"),
    "application": ("real_s", "bw_mibps", "iops", "lat_p95_us", "lat_mean_us", "lat_p99_us"),
}
"""Which metric judges a workload of each intent (the first one measured)."""

TOTAL_LABEL = "read+write total"


class Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


# ------------------------------------------------------------------------------ measurements


class MeasureKey(NamedTuple):
    """A measurement as configs share it; ``target`` is '' when the workload ran on one target."""

    workload: str
    target: str
    variant: str
    phase: str
    direction: str
    group: int | None


def with_totals(records: Iterable[ResultRecord]) -> list[ResultRecord]:
    """The records plus, for each repetition that recorded several directions (and no total), a
    ``mixed`` record with their summed IOPS and MiB/s: the device-level rate limits apply to."""
    out = list(records)
    groups: dict[tuple[object, ...], list[ResultRecord]] = {}
    for r in out:
        variant = ",".join(f"{k}={v}" for k, v in sorted(r.variant.items()))
        key = (r.config_id, r.target_id, r.workload, variant, r.phase, r.group, r.repetition)
        groups.setdefault(key, []).append(r)
    totals: list[ResultRecord] = []
    for members in groups.values():
        directions = {m.direction for m in members}
        if len(directions) < 2 or "mixed" in directions:
            continue
        iops = [m.iops for m in members if m.iops is not None]
        bw = [m.bw_mibps for m in members if m.bw_mibps is not None]
        if not iops and not bw:
            continue
        first = members[0]
        ios = [m.ios for m in members if m.ios is not None]
        totals.append(
            ResultRecord(
                config_id=first.config_id,
                target_id=first.target_id,
                workload=first.workload,
                profile=first.profile,
                variant=dict(first.variant),
                repetition=first.repetition,
                phase=first.phase,
                direction="mixed",
                engine=first.engine,
                group=first.group,
                jobs=first.jobs,
                iops=math.fsum(iops) if iops else None,
                bw_mibps=math.fsum(bw) if bw else None,
                bytes=sum(m.bytes for m in members),
                ios=sum(ios) if ios else None,
                runtime_s=max(m.runtime_s for m in members),
                labels=[*first.labels, TOTAL_LABEL],
            )
        )
    return out + totals


def index_aggregates(aggregates: Iterable[Aggregate]) -> dict[str, dict[MeasureKey, Aggregate]]:
    """Aggregates by config, then by measurement (target id dropped when a workload used one)."""
    targets: dict[tuple[str, str], set[str]] = {}
    aggs = list(aggregates)
    for a in aggs:
        targets.setdefault((a.config_id, a.workload), set()).add(a.target_id)
    out: dict[str, dict[MeasureKey, Aggregate]] = {}
    for a in aggs:
        single = len(targets[(a.config_id, a.workload)]) == 1
        key = MeasureKey(a.workload, "" if single else a.target_id, a.variant, a.phase, a.direction, a.group)
        out.setdefault(a.config_id, {})[key] = a
    return out


def measurement_name(key: MeasureKey, totals: bool = True) -> str:
    parts: list[str] = []
    if key.target:
        parts.append(f"target {key.target}")
    if key.phase not in ("run", ""):
        parts.append(f"{key.phase} phase")
    if key.variant:
        parts.append(key.variant)
    if key.direction == "mixed":
        if totals:
            parts.append(TOTAL_LABEL)
    else:
        parts.append(key.direction)
    if key.group is not None:
        parts.append(f"group {key.group}")
    return ", ".join(parts)


def workload_names(request: BenchmarkRequest | None) -> dict[str, str]:
    """Workload id -> its name in verdicts: the id when the request renamed the profile, else the
    profile's title without a trailing parenthesis."""
    names: dict[str, str] = {}
    if request is None:
        return names
    for w in request.resolved_workloads():
        if w.id != w.profile:
            names[w.id] = w.id
            continue
        try:
            title = get_profile(w.profile).title
        except KeyError:
            names[w.id] = w.id
            continue
        names[w.id] = re.sub(r"\s*\([^)]*\)$", "", title) or w.id
    return names


def workload_intents(request: BenchmarkRequest | None) -> dict[str, str]:
    out: dict[str, str] = {}
    if request is None:
        return out
    for w in request.resolved_workloads():
        try:
            out[w.id] = get_profile(w.profile).intent
        except KeyError:
            out[w.id] = "mixed"
    return out

"""When a burst-bucket volume's credits run out under the planned workloads: will the run see the knee?

A gp2 volume below 1 TiB (and st1/sc1 below the size where baseline reaches burst) serves its burst
only while its credit bucket lasts, then falls to its baseline: the "knee" field study 4 reported
(gp2 holding 3,000 IOPS for minutes, then 3 IOPS per GiB). Whether a run shows it depends on how
hard and how long its workloads drive the volume. This module walks a config's planned steps in run
order (``planning.steps``, timed as ``planning.duration`` times them) and runs the catalog's bucket
model (``catalog.envelope.credit_drain``, the one home of it) under each phase's load:

- a fio job keeps ``numjobs x iodepth`` I/Os in flight, each taking the volume type's catalog
  latency (its QD1 service time, ``catalog.envelope.emulation_latency``), capped by ``rate_iops``
  and by the target's expected ceilings (volume burst x count, capped by the instance), and spread
  evenly over the target's volumes (RAID0 or jbod);
- an I/O costs ``ceil(bs / io_size)`` credits (gp2: one per 256 KiB; st1/sc1: a full 1 MiB credit
  for any I/O up to 1 MiB);
- between steps, and while other targets are measured, the bucket refills at the baseline;
- a phase the plan cannot describe (a custom command, a job file) is taken at full burst load.

The bucket is full when the workloads start (a new volume starts full; the pre-warm is planned at
the sustained rate, which spends none). The answer is one :class:`KneeForecast` per bursting target:
when the bucket empties (seconds into the workloads) against when the workloads on that target end.
"""

from __future__ import annotations

import math
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from storagebench.catalog.envelope import TargetEnvelope, credit_drain, emulation_latency
from storagebench.kinds import kind_of
from storagebench.kinds.base import MIB
from storagebench.planning.duration import STEP_OVERHEAD_S, phase_seconds, target_rates
from storagebench.planning.steps import plan_steps
from storagebench.protocol.plan import Phase, Step
from storagebench.request.model import BenchmarkRequest, Config, Target
from storagebench.workloads.params import parse_size


class KneeForecast(BaseModel):
    """One bursting target of a config: when its credit bucket empties under the planned load."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    config_id: str
    target_id: str
    volume: str = Field(description="e.g. 3 x gp2 250 GiB")
    credit_unit: Literal["io", "mib"] = Field(description="io: gp2 I/O credits; mib: st1/sc1 MiB")
    full_load_s: float = Field(description="how long a full bucket lasts at full burst demand")
    empties_after_s: float | None = Field(
        description="seconds into the workloads when the bucket empties; None: not before they end"
    )
    workloads_s: float = Field(description="seconds into the workloads when the last step on the target ends")
    left_pct: float = Field(description="the bucket left when the workloads on the target end, in %")
    observed: bool = Field(description="the knee falls inside the run: the volume drops to its baseline")
    message: str


def _latency_s(volume_type: str) -> float | None:
    """The volume type's mean QD1 service time from the catalog's latency modes (None: none held)."""
    try:
        modes = emulation_latency(volume_type)["modes"]
    except ValueError:
        return None
    weight = sum(float(m["weight"]) for m in modes)
    return sum(float(m["weight"]) * float(m["p50_ms"]) for m in modes) / weight / 1000


def _job_demand(options: dict[str, Any], envelope: TargetEnvelope, latency_s: float | None) -> float:
    """One fio job's credits per second on each of the target's volumes (the bucket's unit)."""
    volume = envelope.volume
    unit = volume.io_size_kib * 1024
    block = parse_size(options.get("bs", "4k"))
    credits_per_io = max(1, math.ceil(block / unit))
    jobs = int(options.get("numjobs", 1))
    in_flight = jobs * int(options.get("iodepth", 1))
    ios = min(envelope.expected_iops / credits_per_io, envelope.expected_mibps * MIB / block)
    if latency_s:
        ios = min(ios, in_flight / latency_s)
    if options.get("rate_iops"):
        ios = min(ios, jobs * float(str(options["rate_iops"]).split(",")[0]))
    per_volume = ios / envelope.count * credits_per_io
    return per_volume if volume.credit_unit == "io" else per_volume * unit / MIB


def _phase_demand(phase: Phase, envelope: TargetEnvelope, latency_s: float | None) -> float:
    """Credits per second a phase asks of each volume: its fio jobs together, else full burst."""
    volume = envelope.volume
    full = (volume.burst_iops if volume.credit_unit == "io" else volume.burst_mibps) or 0.0
    fio = phase.get("fio")
    if phase.get("engine") != "fio" or fio is None or fio.get("job_file") or "search" in phase:
        return full
    shared = fio.get("global_options", {})
    return sum(_job_demand({**shared, **job["options"]}, envelope, latency_s) for job in fio["jobs"])


def _forecast(config: Config, target: Target, envelope: TargetEnvelope, steps: list[Step]) -> KneeForecast:
    volume = envelope.volume
    latency_s = _latency_s(volume.volume_type)
    rates = target_rates(config, target)
    targets = {t.id: t for t in config.targets}
    clock, ends = 0.0, 0.0
    balance = left = volume.credit_capacity or 0.0
    empties: float | None = None
    for step in steps:
        mine = step["target"] == target.id
        on = targets[step["target"]]
        segments = [(STEP_OVERHEAD_S, 0.0)]
        for phase in step["phases"]:
            seconds = phase_seconds(phase, on, rates if mine else target_rates(config, on)) or 0.0
            segments.append((seconds, _phase_demand(phase, envelope, latency_s) if mine else 0.0))
        for seconds, demand in segments:
            balance, emptied = credit_drain(volume, demand, seconds, balance)
            if emptied is not None and empties is None:
                empties = clock + emptied
            clock += seconds
        if mine:
            ends, left = clock, balance
    observed = empties is not None and empties < ends
    left_pct = 100.0 * left / (volume.credit_capacity or 1.0)
    full_load = volume.burst_seconds or 0.0
    stripe = f"{envelope.count} x " if envelope.count > 1 else ""
    what = f"{stripe}{volume.volume_type} {volume.size_gib:g} GiB"
    if volume.credit_unit == "io":
        model = (
            f"{volume.credit_capacity:,.0f} I/O credits / ({volume.burst_iops:,.0f} - "
            f"{volume.baseline_iops:,.0f} IOPS) = {full_load:,.0f} s at full load"
        )
    else:
        model = (
            f"{volume.credit_capacity:,.0f} MiB of credits / ({volume.burst_mibps:,.0f} - "
            f"{volume.baseline_mibps:,.0f} MiB/s) = {full_load:,.0f} s at full load"
        )
    if observed and empties is not None:
        verdict = (
            f"empties ~{empties:,.0f} s into the workloads, which run on it until ~{ends:,.0f} s: "
            "the knee will be observed (the volume then falls to its baseline)"
        )
    else:
        verdict = (
            f"the planned load leaves ~{left_pct:.0f} % of the bucket when the workloads on it end "
            f"(~{ends:,.0f} s): the knee will not be observed"
        )
    return KneeForecast(
        config_id=config.id,
        target_id=str(target.id),
        volume=what,
        credit_unit=volume.credit_unit or "io",
        full_load_s=full_load,
        empties_after_s=empties,
        workloads_s=ends,
        left_pct=round(left_pct, 3),
        observed=observed,
        message=f"{config.id}: {target.id} ({what}): burst bucket {model}; {verdict}",
    )


def config_knees(
    request: BenchmarkRequest, config: Config, steps: list[Step] | None = None
) -> list[KneeForecast]:
    """Every bursting target of a config that its workloads drive: when its bucket empties."""
    planned = plan_steps(request, config) if steps is None else steps
    used = {step["target"] for step in planned}
    found: list[KneeForecast] = []
    for target in config.targets:
        envelope = kind_of(target).envelope(target, config.instance_type)
        if envelope is None or not envelope.volume.bursts or envelope.volume.credit_capacity is None:
            continue
        if target.id in used:
            found.append(_forecast(config, target, envelope, planned))
    return found


def request_knees(
    request: BenchmarkRequest, steps: dict[str, list[Step]] | None = None
) -> list[KneeForecast]:
    """The knees of every config of a request, in request order."""
    planned = steps or {}
    return [k for c in request.configs for k in config_knees(request, c, planned.get(c.id))]

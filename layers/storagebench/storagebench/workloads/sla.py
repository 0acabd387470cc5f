"""Latency-SLA profiles: the highest IOPS a target sustains while a percentile stays under a target.

One request answers "how many IOPS does gp3 give me under 1 ms p99"::

    {"profile": "sla-randread-4k", "params": {"sla_percentile": 99, "sla_ms": 1.0}}

The profile builds one fio phase with a ``search`` section; the agent bisects fio's
``rate_iops`` between ``min_iops`` and ``max_iops`` (``protocol.sla``), one short time-based run
per probe, and records every probe and the answer. ``max_iops`` "auto" is 1.5x the target's
expected IOPS (its provisioned or emulated ceiling, with room for burst), else 100,000. The
queue depth only has to be deep enough to deliver the rate: by Little's law a rate R at
latency L needs R x L outstanding I/O (16,000 IOPS at 1 ms: 16), so the default 32 per job
leaves room; a probe whose queue cannot deliver its rate misses the SLA and says so.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from storagebench.protocol.plan import Phase, SearchSpec
from storagebench.workloads.params import Param, ParamValue, format_size
from storagebench.workloads.profile import Builder, Profile, TargetContext

UNKNOWN_TARGET_MAX_IOPS = 100_000
AUTO_HEADROOM = 1.5
SLA_SOURCE = "PerfKit Benchmarker fio_latency_sla (IOPS under a latency SLA, by bisection)"

SLA_PARAMS: tuple[Param, ...] = (
    Param("sla_percentile", "float", 99.0, "latency percentile judged", minimum=50, maximum=99.99),
    Param(
        "sla_ms", "float", 1.0, "the percentile must stay at or under this (ms)", minimum=0.01, maximum=10_000
    ),
    Param("min_iops", "int", 100, "lowest rate probed (first)", minimum=1, maximum=10_000_000),
    Param(
        "max_iops",
        "int",
        "auto",
        "highest rate probed; auto: 1.5x the target's expected IOPS",
        minimum=2,
        maximum=10_000_000,
        auto=True,
    ),
    Param(
        "tolerance",
        "float",
        0.05,
        "stop when the bracket is this narrow, relative to its top",
        minimum=0.005,
        maximum=0.5,
    ),
    Param("max_probes", "int", 12, "fio runs at most, bounds included", minimum=2, maximum=40),
    Param(
        "rate_process",
        "choice",
        "linear",
        "how fio spaces I/O at the rate: evenly, or Poisson arrivals (queueing as independent clients cause)",
        choices=("linear", "poisson"),
    ),
)


def auto_max_iops(values: Mapping[str, ParamValue], ctx: TargetContext) -> ParamValue:
    """1.5x the target's expected IOPS (burst and rounding room), never below twice min_iops."""
    low = values["min_iops"]
    assert isinstance(low, int), "min_iops"
    if ctx.expected_iops is None:
        return max(UNKNOWN_TARGET_MAX_IOPS, 2 * low)
    return max(math.ceil(ctx.expected_iops * AUTO_HEADROOM), 2 * low)


def _number(values: Mapping[str, ParamValue], name: str) -> float:
    value = values[name]
    assert isinstance(value, int | float) and not isinstance(value, bool), name
    return float(value)


def sla_builder(rw: str, base: Mapping[str, Any]) -> Builder:
    """One fio phase of ``rw`` jobs, time based, with the search the agent runs over its rate."""

    def build(values: Mapping[str, ParamValue], ctx: TargetContext) -> list[Phase]:
        low, high = int(_number(values, "min_iops")), int(_number(values, "max_iops"))
        if high <= low:
            raise ValueError(f"max_iops {high} must be above min_iops {low}: the search needs a range")
        options: dict[str, Any] = {
            **base,
            "rw": rw,
            "bs": format_size(int(_number(values, "bs"))),
            "iodepth": int(_number(values, "iodepth")),
            "numjobs": int(_number(values, "numjobs")),
            "size": format_size(int(_number(values, "size"))),
            "time_based": 1,
            "runtime": f"{math.ceil(_number(values, 'runtime'))}s",
            "rate_process": str(values["rate_process"]),
        }
        if _number(values, "ramp_time") > 0:
            options["ramp_time"] = f"{math.ceil(_number(values, 'ramp_time'))}s"
        search: SearchSpec = {
            "percentile": _number(values, "sla_percentile"),
            "target_us": _number(values, "sla_ms") * 1000.0,
            "low_iops": low,
            "high_iops": high,
            "tolerance": _number(values, "tolerance"),
            "max_probes": int(_number(values, "max_probes")),
        }
        return [
            {
                "name": "search",
                "engine": "fio",
                # Probes keep fio's JSON and text; 1 s time series of a dozen short runs say nothing.
                "fio": {
                    "global_options": {},
                    "jobs": [{"name": rw, "options": options}],
                    "timeseries": False,
                },
                "search": search,
            }
        ]

    return build


def sla_profile(
    name: str, title: str, rw: str, *, base: Mapping[str, Any], workload_params: tuple[Param, ...]
) -> Profile:
    """A latency-SLA profile: ``workload_params`` (bs, iodepth, numjobs, runtime, ramp_time, size)
    shape each probe, the SLA parameters shape the search."""
    return Profile(
        name=name,
        title=title,
        description=(
            f"The highest {rw} IOPS the target sustains while the p<sla_percentile> latency stays at or "
            "under sla_ms: fio's rate_iops is bisected between min_iops and max_iops (geometric "
            "midpoints) until the bracket is within tolerance or max_probes have run; each probe is "
            "one time-based run of runtime seconds after ramp_time. A probe meets the SLA when its "
            "percentile is under the target and fio delivered 95 % of the rate. The result's IOPS is "
            "what fio achieved at the highest rate that met it; every probe is kept."
        ),
        source=SLA_SOURCE,
        family="latency-sla",
        intent="sla",
        engine="fio",
        params=(*workload_params, *SLA_PARAMS),
        build=sla_builder(rw, base),
        auto={"max_iops": auto_max_iops},
    )

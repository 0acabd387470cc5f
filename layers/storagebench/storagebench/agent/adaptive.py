"""Adaptive repetitions: when a series of repetitions has measured its headline metric precisely enough.

The plan carries every repetition up to ``max`` of an adaptive series, each step naming its series
and the policy (``protocol.plan.Adaptive``: ``min``, ``max``, ``ci_pct``, the metric and the phase
judged). After each repetition the runner hands the step's result to the series' ``SeriesTracker``,
which reads the metric from the phase's raw output and applies the stopping rule
(``protocol.adaptive.decide``: precision reached, or ``max`` spent).

A failed repetition is spent but gives no value; the rule judges the values measured. The metric
is the one the report heads the workload with (the planner picks it by the profile's intent:
``costs.measures.INTENT_METRICS``), computed as ``storagebench.results`` computes it: fio's I/Os
and bytes summed over jobs and directions over each direction's runtime, p95 from the merged
json+ histogram (the worst direction), dd's bytes over the phase's wall time, a command's wall time.
Standard library only: this runs on the instance.
"""

from __future__ import annotations

import json
import math
import os
import re
from typing import Any, Dict, List, Mapping, Optional, Sequence

from storagebench.protocol.adaptive import SeriesRecord, decide, half_width_pct
from storagebench.protocol.fio_summary import FioSummaryError, summarize_fio
from storagebench.protocol.plan import ADAPTIVE_METRICS

METRICS = ADAPTIVE_METRICS
"""What a series can be judged on (the names of ``results.records`` fields)."""
MIB = 1 << 20


class AdaptiveError(ValueError):
    """A phase's output from which the series' metric cannot be read."""


# ------------------------------------------------------------------------------- the metric


def _fio_metric(directory: str, metric: str) -> float:
    path = os.path.join(directory, "fio.json")
    try:
        with open(path, encoding="utf-8") as handle:
            document = json.load(handle)
    except (OSError, ValueError) as exc:
        raise AdaptiveError(f"{path}: {exc}") from None
    try:
        directions = summarize_fio(document)
        if not directions:
            raise AdaptiveError(f"{path}: fio did no I/O")
        if metric == "iops":
            return sum(d.iops for d in directions.values())
        if metric == "lat_p95_us":
            return max(d.percentile_us(95.0) for d in directions.values())
        if metric == "bw_mibps":
            return (
                sum(
                    _fio_bytes(document, name) / d.runtime_s
                    for name, d in directions.items()
                    if d.runtime_s > 0
                )
                / MIB
            )
        if metric == "real_s":
            return max(d.runtime_s for d in directions.values())
    except (FioSummaryError, TypeError, ValueError, KeyError) as exc:
        raise AdaptiveError(f"{path}: {exc}") from None
    raise AdaptiveError(f"metric {metric!r} is not one of {', '.join(METRICS)}")


def _fio_bytes(document: Mapping[str, Any], direction: str) -> int:
    return sum(
        int(job[direction].get("io_bytes") or 0)
        for job in document["jobs"]
        if isinstance(job, dict) and isinstance(job.get(direction), dict)
    )


def phase_metric(phase: Mapping[str, Any], spec: Mapping[str, Any], metric: str, output_dir: str) -> float:
    """The series' metric of one phase result (``spec``: the plan's phase, for dd's byte count)."""
    if phase.get("status") != "ok":
        raise AdaptiveError(f"phase {phase.get('name')!r} {phase.get('status')}: {phase.get('error')}")
    search = phase.get("search")
    if isinstance(search, dict):  # a latency-SLA search: the IOPS sustained under the target
        answer = search.get("answer")
        if metric != "iops" or not isinstance(answer, dict):
            raise AdaptiveError("the search met the SLA at no rate: no sustained IOPS to judge")
        return float(answer["iops"])
    engine = phase.get("engine")
    if engine == "fio":
        return _fio_metric(os.path.join(output_dir, str(phase.get("dir"))), metric)
    real_s = float((phase.get("timing") or {}).get("real_s") or 0.0)
    if metric == "real_s":
        return real_s
    if metric == "bw_mibps" and real_s > 0:
        if engine == "dd":
            dd = spec.get("dd") or {}
            moved = _size(str(dd.get("bs"))) * int(dd.get("count", 0)) * int(dd.get("parallel", 1))
            return moved / MIB / real_s
        moved = int(((spec.get("command") or {}).get("accounting") or {}).get("bytes") or 0)
        if moved:
            return moved / MIB / real_s
    raise AdaptiveError(f"a {engine} phase does not measure {metric}")


_DD_SIZE = re.compile(r"^(\d+)([KMGT]?)$", re.IGNORECASE)
_DD_UNITS = {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}


def _size(text: str) -> int:
    """dd's block size as the planner writes it (``1M``, ``128K``, ``4096``: GNU dd's binary units)."""
    found = _DD_SIZE.match(text.strip())
    if found is None:
        raise AdaptiveError(f"dd block size {text!r} is not a size such as 1M")
    return int(found.group(1)) * _DD_UNITS[found.group(2).lower()]


# ------------------------------------------------------------------------------- the series


class SeriesTracker:
    """The repetitions of one adaptive series seen so far, and whether it has stopped."""

    def __init__(self, step: Mapping[str, Any]) -> None:
        policy = step["adaptive"]
        self.policy = policy
        self.spent = 0
        self.values: List[float] = []
        self.notes: List[str] = []
        self.stopped: Optional[str] = None
        self.reason = "not started"
        self.series = str(policy["series"])
        self.workload = str(step.get("workload", ""))
        self.target = str(step.get("target", ""))
        self.variant: Dict[str, Any] = dict(step.get("variant") or {})

    def add(self, step: Mapping[str, Any], result: Mapping[str, Any], output_dir: str) -> None:
        """Count one repetition of the series; read its metric; decide."""
        self.spent += 1
        phase_name = self.policy["phase"]
        phase = next((p for p in result.get("phases") or [] if p.get("name") == phase_name), None)
        spec: Mapping[str, Any] = next(
            (p for p in step.get("phases") or [] if p.get("name") == phase_name), {}
        )
        try:
            if phase is None:
                raise AdaptiveError(f"phase {phase_name!r} did not run ({result.get('error') or 'no error'})")
            self.values.append(phase_metric(phase, spec, self.policy["metric"], output_dir))
        except AdaptiveError as exc:
            self.notes.append(f"repetition {step.get('repetition')}: no {self.policy['metric']}: {exc}")
        self.stopped, self.reason = decide(
            self.values,
            self.spent,
            int(self.policy["min"]),
            int(self.policy["max"]),
            float(self.policy["ci_pct"]),
        )

    def record(self) -> SeriesRecord:
        values = [round(v, 6) for v in self.values]
        precision = half_width_pct(self.values)
        return {
            "series": self.series,
            "workload": self.workload,
            "target": self.target,
            "variant": dict(self.variant),
            "metric": str(self.policy["metric"]),
            "phase": str(self.policy["phase"]),
            "min": int(self.policy["min"]),
            "max": int(self.policy["max"]),
            "ci_pct": float(self.policy["ci_pct"]),
            "spent": self.spent,
            "values": values,
            "mean": round(math.fsum(self.values) / len(self.values), 6) if self.values else None,
            "half_width_pct": round(precision, 4) if precision is not None else None,
            "stopped": self.stopped,
            "reason": self.reason,
            "notes": list(self.notes),
        }


def trackers_for(steps: Sequence[Mapping[str, Any]]) -> Dict[str, SeriesTracker]:
    """A tracker per adaptive series of the plan, in the order the series first appear."""
    trackers: Dict[str, SeriesTracker] = {}
    for step in steps:
        policy = step.get("adaptive")
        if policy and policy["series"] not in trackers:
            trackers[policy["series"]] = SeriesTracker(step)
    return trackers

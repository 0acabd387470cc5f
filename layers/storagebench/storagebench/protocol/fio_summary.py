"""The little the agent itself reads from fio's JSON: I/Os, runtime, IOPS and a latency percentile.

The agent never turns raw output into records (``storagebench.results`` does), but two of its
decisions need numbers while it runs: the latency-SLA search picks its next rate from the last
probe's IOPS and percentile, and a step too small to measure is flagged as it happens. The
definitions are the domain's (``results.fio``), so the agent and the records agree: I/Os summed
over jobs, runtime the longest job's (fio's maxt), IOPS = I/Os / runtime, percentiles from the
jobs' json+ histograms merged bin by bin, walked as fio walks them.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any, Dict, List, Mapping, Optional

DIRECTIONS = ("read", "write", "trim")


class FioSummaryError(ValueError):
    """fio's JSON lacks what a decision needs (no jobs, no histogram for a percentile)."""


class DirectionSummary:
    """One direction of a fio run, over all its jobs."""

    def __init__(self, direction: str, ios: int, runtime_s: float, bins: Optional[Dict[int, int]]) -> None:
        self.direction = direction
        self.ios = ios
        self.runtime_s = runtime_s
        self.bins = bins  # latency bucket (ns) -> I/O count; None when a job had no json+ bins

    @property
    def iops(self) -> float:
        return self.ios / self.runtime_s if self.runtime_s > 0 else 0.0

    def percentile_us(self, percent: float) -> float:
        """Latency at ``percent`` in microseconds, from the merged histogram (fio's walk)."""
        if not self.bins:
            raise FioSummaryError(
                f"{self.direction}: no json+ latency histogram, so no p{percent:g} across jobs "
                "(run fio with --output-format=json+)"
            )
        total = sum(self.bins.values())
        threshold = Fraction(percent) * total / 100
        cumulative = 0
        for value in sorted(self.bins):
            cumulative += self.bins[value]
            if cumulative >= threshold:
                return value / 1000.0
        return max(self.bins) / 1000.0


def _latency_bins(ddir: Mapping[str, Any]) -> Optional[Dict[int, int]]:
    """Total-latency bins when fio kept them (``lat_percentiles=1``), else completion latency."""
    for key in ("lat_ns", "clat_ns"):
        latency = ddir.get(key)
        if isinstance(latency, dict) and isinstance(latency.get("bins"), dict) and latency["bins"]:
            return {int(k): int(v) for k, v in latency["bins"].items()}
    return None


def summarize_fio(document: Mapping[str, Any]) -> Dict[str, DirectionSummary]:
    """Each direction that did I/O, summed over every job of the document."""
    jobs = document.get("jobs")
    if not isinstance(jobs, list) or not jobs:
        raise FioSummaryError("fio JSON has no jobs")
    found: Dict[str, DirectionSummary] = {}
    for direction in DIRECTIONS:
        ios = 0
        runtime_ms = 0.0
        parts: List[Optional[Dict[int, int]]] = []
        for job in jobs:
            ddir = job.get(direction) if isinstance(job, dict) else None
            if not isinstance(ddir, dict) or not ddir.get("total_ios"):
                continue
            ios += int(ddir["total_ios"])
            runtime_ms = max(runtime_ms, float(ddir.get("runtime") or 0))
            parts.append(_latency_bins(ddir))
        if ios == 0:
            continue
        merged: Optional[Dict[int, int]] = None
        if all(part is not None for part in parts):
            merged = {}
            for part in parts:
                assert part is not None
                for value, count in part.items():
                    merged[value] = merged.get(value, 0) + count
        found[direction] = DirectionSummary(direction, ios, runtime_ms / 1000.0, merged)
    return found

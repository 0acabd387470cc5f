"""The highest IOPS a target sustains while a latency percentile stays under a target.

"How many IOPS does gp3 give me under 1 ms p99" is answered by bisection on fio's
``rate_iops``, as PerfKit Benchmarker's ``fio_latency_sla`` bisects the queue depth: each probe
is a short fio run at a fixed rate with enough outstanding I/O to deliver it, and a probe
*meets* the SLA when every direction's percentile is at or under the target **and** fio
delivered at least ``min_delivered`` of the asked rate (a volume that cannot keep up falls
behind the rate while its latency still looks fine for the I/O it did complete).

Order: the lowest rate first (failing it ends the search: "not met even at the lowest rate"),
then the highest (meeting it ends the search: the limit lies above the bracket), then the
geometric middle of the bracket until its width is within ``tolerance`` of its top or
``max_probes`` have run. Geometric, not arithmetic: the bounds span orders of magnitude (100 to
100,000 IOPS) and the tolerance is relative, so each probe halves the bracket in log space.

The answer is the IOPS fio *achieved* in the highest rate that met the SLA, never the rate
asked for. Rates are whole I/Os per second; the search stops early when the bracket cannot be
split into another whole rate.
"""

from __future__ import annotations

import math
from typing import Any, Callable, Dict, List, Optional, TypedDict

from storagebench.protocol.fio_summary import DirectionSummary
from storagebench.protocol.plan import SearchSpec

STOP_LOWEST_FAILED = "lowest-rate-failed"
STOP_HIGHEST_MET = "highest-rate-met"
STOP_TOLERANCE = "within-tolerance"
STOP_MAX_PROBES = "max-probes"
STOP_RESOLUTION = "rate-resolution"
DEFAULT_MIN_DELIVERED = 0.95


class Measured:
    """What one probe measured: achieved IOPS (all directions) and the worst direction's percentile."""

    def __init__(self, iops: float, latency_us: float, ios: int, runtime_s: float) -> None:
        self.iops = iops
        self.latency_us = latency_us
        self.ios = ios
        self.runtime_s = runtime_s

    @classmethod
    def from_directions(cls, directions: Dict[str, DirectionSummary], percentile: float) -> Measured:
        if not directions:
            raise ValueError("the probe did no I/O")
        runtime = max(d.runtime_s for d in directions.values())
        ios = sum(d.ios for d in directions.values())
        return cls(
            iops=ios / runtime if runtime > 0 else 0.0,
            latency_us=max(d.percentile_us(percentile) for d in directions.values()),
            ios=ios,
            runtime_s=runtime,
        )


class Probe(TypedDict, total=False):
    probe: int  # 1-based, in the order run
    rate_iops: int  # asked of fio (all jobs together)
    iops: float  # achieved
    latency_us: float  # the searched percentile, worst direction
    delivered: float  # iops / rate_iops
    ios: int
    runtime_s: float
    met: bool
    why: str  # what a probe that did not meet the SLA missed
    dir: str  # the probe's output, relative to the phase directory


class SearchResult(TypedDict, total=False):
    percentile: float
    target_us: float
    low_iops: int
    high_iops: int
    tolerance: float
    max_probes: int
    min_delivered: float
    probes: List[Probe]
    met: bool  # some rate met the SLA
    answer: Optional[Probe]  # the highest rate that met it
    bracket: List[int]  # [highest rate met, lowest rate missed]; one side absent at a bound
    stopped: str


def judge(measured: Measured, rate: int, spec: SearchSpec) -> Probe:
    """A probe's entry: met or not, and why not."""
    target = float(spec["target_us"])
    floor = float(spec.get("min_delivered", DEFAULT_MIN_DELIVERED))
    delivered = measured.iops / rate if rate > 0 else 0.0
    misses = []
    if measured.latency_us > target:
        misses.append(f"p{spec['percentile']:g} {measured.latency_us / 1000:.3g} ms > {target / 1000:.3g} ms")
    if delivered < floor:
        misses.append(f"delivered {delivered:.0%} of the rate (needs {floor:.0%})")
    probe: Probe = {
        "rate_iops": rate,
        "iops": round(measured.iops, 3),
        "latency_us": round(measured.latency_us, 3),
        "delivered": round(delivered, 4),
        "ios": measured.ios,
        "runtime_s": round(measured.runtime_s, 3),
        "met": not misses,
    }
    if misses:
        probe["why"] = "; ".join(misses)
    return probe


def search(run_probe: Callable[[int, int], Probe], spec: SearchSpec) -> SearchResult:
    """Bisect the rate; ``run_probe(number, rate)`` runs one probe and returns its judged entry."""
    low, high = int(spec["low_iops"]), int(spec["high_iops"])
    tolerance = float(spec["tolerance"])
    max_probes = int(spec["max_probes"])
    probes: List[Probe] = []

    def probe(rate: int) -> Probe:
        entry = run_probe(len(probes) + 1, rate)
        entry["probe"] = len(probes) + 1
        probes.append(entry)
        return entry

    result: SearchResult = {
        "percentile": float(spec["percentile"]),
        "target_us": float(spec["target_us"]),
        "low_iops": low,
        "high_iops": high,
        "tolerance": tolerance,
        "max_probes": max_probes,
        "min_delivered": float(spec.get("min_delivered", DEFAULT_MIN_DELIVERED)),
        "probes": probes,
    }
    best = probe(low)
    if not best["met"]:
        return _ended(result, None, [low], STOP_LOWEST_FAILED)
    top = probe(high)
    if top["met"]:
        return _ended(result, top, [high], STOP_HIGHEST_MET)
    passed, failed = low, high
    stopped = STOP_TOLERANCE
    while (failed - passed) / failed > tolerance:
        if len(probes) >= max_probes:
            stopped = STOP_MAX_PROBES
            break
        middle = round(math.sqrt(passed * failed))
        if middle <= passed or middle >= failed:
            stopped = STOP_RESOLUTION
            break
        entry = probe(middle)
        if entry["met"]:
            passed, best = middle, entry
        else:
            failed = middle
    return _ended(result, best, [passed, failed], stopped)


def _ended(result: SearchResult, answer: Optional[Probe], bracket: List[int], stopped: str) -> SearchResult:
    result["met"] = answer is not None
    result["answer"] = answer
    result["bracket"] = bracket
    result["stopped"] = stopped
    return result


def expected_probes(spec: SearchSpec) -> int:
    """Probes a search runs when the limit lies inside the bracket: both bounds, then one per
    halving (in log space) of [low, high] down to the tolerance; never more than ``max_probes``."""
    span = math.log(int(spec["high_iops"]) / int(spec["low_iops"]))
    width = -math.log(1 - float(spec["tolerance"]))
    halvings = max(0, math.ceil(math.log2(span / width))) if span > width else 0
    return min(int(spec["max_probes"]), 2 + halvings)


def answer_text(result: Dict[str, Any]) -> str:
    """One line for people: the answer, or that the SLA was not met."""
    sla = f"p{result['percentile']:g} <= {result['target_us'] / 1000:g} ms"
    probes = len(result.get("probes") or [])
    answer = result.get("answer")
    if not result.get("met") or not answer:
        lowest = (result.get("probes") or [{}])[0]
        return (
            f"SLA {sla} not met even at the lowest rate, {result['low_iops']:,} IOPS "
            f"({lowest.get('why', 'no probe')})"
        )
    text = f"SLA {sla}: sustained {answer['iops']:,.0f} IOPS (p{result['percentile']:g} "
    text += f"{answer['latency_us'] / 1000:.3g} ms at a rate of {answer['rate_iops']:,})"
    if result.get("stopped") == STOP_HIGHEST_MET:
        return text + f"; met at the highest rate probed, so the limit is higher ({probes} probes)"
    bracket = result.get("bracket") or []
    return text + f"; the limit lies below {bracket[-1]:,} IOPS ({probes} probes, {result.get('stopped')})"

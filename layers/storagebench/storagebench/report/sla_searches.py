"""Latency-SLA searches read as answers: "how many IOPS does gp3 give me under 1 ms p99".

A search (``protocol.sla``, validated into ``ResultRecord.sla`` by Collect) bisects fio's rate between
a lowest and a highest rate; every record of its phase (one per direction) carries the whole
search. This module turns each search into words: the target (``p99 <= 1 ms``), the answer (the
IOPS fio *achieved* at the highest rate that met the SLA, or that even the lowest rate missed it),
the bracket where the limit lies (in rates asked of fio: the highest met and the lowest missed), why
the search stopped, and its probes as table rows. The report, its Markdown and the CLI all say it
with these sentences.

Repetitions each repeat the whole search. The answer over repetitions is their range ("sustains
2,650–2,796 IOPS ... over 3 repetitions"); each repetition keeps its own answer, bracket, reason
and probes (the HTML draws one line per repetition, the probe table has a repetition column).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from storagebench.core.numbers import num
from storagebench.protocol.sla import (
    STOP_HIGHEST_MET,
    STOP_LOWEST_FAILED,
    STOP_MAX_PROBES,
    STOP_RESOLUTION,
    STOP_TOLERANCE,
)
from storagebench.report.model import SlaLimit, SlaRepetition
from storagebench.results.records import ResultRecord, SlaProbe, SlaSearch

__all__ = [
    "PROBE_HEAD",
    "SLA_INTRO",
    "build_sla_limits",
    "limit_line",
    "probe_rows",
    "sla_text",
]

SLA_INTRO = (
    "The highest IOPS each config sustained while a latency percentile stayed at or under a target: "
    "fio's rate is bisected (the geometric middle of the bracket) between the lowest and the highest "
    "rate, one short fio run per probe. A probe meets the SLA when the percentile of its slowest "
    "direction is at or under the target and fio delivered the asked rate (at least its delivery "
    "floor, 95 % by default): a volume that falls behind its rate can show low latency for the I/O "
    "it did complete. The answer is the IOPS fio achieved at the highest rate that met the SLA, never "
    "the rate asked; the limit lies between that rate and the lowest rate that missed. Each repetition "
    "repeats the whole search: the answer gives the repetitions' range, the chart one line per "
    "repetition, the table every probe."
)
PROBE_HEAD = ["probe", "rate asked, IOPS", "achieved IOPS", "delivered", "latency ms", "SLA"]
"""Column heads of the probe table; ``probe_rows`` names the percentile in place of 'latency'."""

_STOPS_SHORT = {
    STOP_TOLERANCE: "tolerance reached",
    STOP_MAX_PROBES: "max probes reached",
    STOP_RESOLUTION: "no whole rate left",
    STOP_LOWEST_FAILED: "lowest rate missed",
    STOP_HIGHEST_MET: "highest rate met",
}
"""Why a search stopped, in a few words (the CLI's line of several repetitions)."""
_Key = tuple[str, str, str, str, str, float, float]
"""(config, target, workload, variant, phase, percentile, target_us): what one search's repetitions share."""


def _ms(us: float) -> str:
    return num(us / 1000)


def _pct(fraction: float) -> str:
    return f"{fraction * 100:.1f} %"


def sla_text(percentile: float, target_us: float) -> str:
    """'p99 <= 1 ms'."""
    return f"p{percentile:g} <= {target_us / 1000:g} ms"


def _iops(value: float) -> str:
    return f"{num(value)} IOPS"


def _range(values: Sequence[float], unit: str) -> str:
    low, high = num(min(values)), num(max(values))
    return f"{low} {unit}" if low == high else f"{low}–{high} {unit}"


def _probe(search: SlaSearch, number: int | None) -> SlaProbe:
    found = [p for p in search.probes if p.probe == number]
    if len(found) != 1:
        raise ValueError(
            f"sla.answer_probe: {number} is not one of the search's probes "
            f"({', '.join(str(p.probe) for p in search.probes)})"
        )
    return found[0]


def _not_met(search: SlaSearch, lowest: SlaProbe) -> str:
    text = (
        f"SLA not met even at the lowest rate, {_iops(search.low_iops)}: "
        f"p{search.percentile:g} was {_ms(lowest.latency_us)} ms"
    )
    if lowest.delivered < search.min_delivered:
        text += f" and fio delivered {lowest.delivered:.0%} of the rate (needs {search.min_delivered:.0%})"
    return text


def _answer(search: SlaSearch) -> tuple[str, float]:
    """The repetition's answer in words, and the percentile latency it rests on."""
    if not search.met:
        lowest = search.probes[0]
        return _not_met(search, lowest), lowest.latency_us
    probe = _probe(search, search.answer_probe)
    sustained = search.sustained_iops if search.sustained_iops is not None else probe.iops
    at = f"p{search.percentile:g} {_ms(probe.latency_us)} ms"
    if search.stopped == STOP_HIGHEST_MET:
        return (
            f"sustains at least {_iops(sustained)} at {at}: even the highest rate probed, "
            f"{_iops(probe.rate_iops)}, met the SLA",
            probe.latency_us,
        )
    return f"sustains {_iops(sustained)} at {at} (asked {_iops(probe.rate_iops)})", probe.latency_us


def _bracket(search: SlaSearch) -> str:
    if len(search.bracket) == 2:
        met, missed = search.bracket
        width = (missed - met) / missed if missed else 0.0
        return (
            f"between {met:,} IOPS (met) and {missed:,} IOPS (missed), as rates asked of fio: "
            f"{_pct(width)} apart"
        )
    (bound,) = search.bracket
    if search.met:
        return f"above {bound:,} IOPS, the highest rate probed (raise max_iops to find it)"
    return f"below {bound:,} IOPS, the lowest rate probed (lower min_iops or relax the SLA to find it)"


def _stopped(search: SlaSearch) -> str:
    count = len(search.probes)
    probes = f"{count} probe{'s' if count != 1 else ''}"
    tolerance = _pct(search.tolerance)
    if len(search.bracket) == 2 and search.bracket[1]:
        width = _pct((search.bracket[1] - search.bracket[0]) / search.bracket[1])
    else:
        width = "-"
    reasons = {
        STOP_TOLERANCE: f"tolerance reached: the bracket narrowed to {width} (tolerance {tolerance}) "
        f"in {probes}",
        STOP_MAX_PROBES: f"max probes reached: {probes} of at most {search.max_probes}, the bracket "
        f"still {width} wide (tolerance {tolerance})",
        STOP_RESOLUTION: f"no whole rate left inside the bracket ({width} wide) after {probes}",
        STOP_LOWEST_FAILED: f"the lowest rate missed the SLA, so no higher rate was tried ({probes})",
        STOP_HIGHEST_MET: f"the highest rate met the SLA, so there was nothing to bisect ({probes})",
    }
    return reasons.get(search.stopped, f"stopped: {search.stopped} ({probes})")


def _repetition(repetition: int, search: SlaSearch) -> SlaRepetition:
    answer, latency = _answer(search)
    return SlaRepetition(
        repetition=repetition,
        met=search.met,
        sustained_iops=search.sustained_iops if search.met else None,
        latency_us=latency,
        answer=answer,
        bracket=_bracket(search),
        bracket_iops=list(search.bracket),
        stopped=_stopped(search),
        stop=search.stopped,
        answer_probe=search.answer_probe if search.met else None,
        above_range=search.met and search.stopped == STOP_HIGHEST_MET,
        probes=list(search.probes),
    )


def _overall(percentile: float, low_iops: Sequence[int], repetitions: Sequence[SlaRepetition]) -> str:
    """The repetitions' answers in one sentence: the answer itself for one, else their range."""
    if len(repetitions) == 1:
        return repetitions[0].answer
    n = len(repetitions)
    met = [r for r in repetitions if r.met]
    missed = [r for r in repetitions if not r.met]
    lowest = f"the lowest rate, {_range([float(v) for v in low_iops], 'IOPS')}"
    if not met:
        latency = _range([r.latency_us / 1000 for r in missed], "ms")
        return f"SLA not met even at {lowest}, in any of the {n} repetitions: p{percentile:g} was {latency}"
    sustained = _range([r.sustained_iops or 0.0 for r in met], "IOPS")
    latency = _range([r.latency_us / 1000 for r in met], "ms")
    above = [r.repetition for r in met if r.above_range]
    at_least = "at least " if len(above) == len(met) else ""
    text = f"sustains {at_least}{sustained} at p{percentile:g} {latency}"
    text = f"SLA met in {len(met)} of {n} repetitions: {text}" if missed else f"{text} over {n} repetitions"
    if at_least:
        text += ": even the highest rate probed met the SLA"
    elif above:
        text += f"; in repetition {', '.join(map(str, above))} even the highest rate probed met it"
    if missed:
        text += f"; not met even at {lowest}, in repetition {', '.join(str(r.repetition) for r in missed)}"
    return text


def _where(target: str, variant: str, phase: str, several: Mapping[str, bool]) -> str:
    parts = []
    if several["target"]:
        parts.append(f"target {target}")
    if several["variant"] and variant:
        parts.append(variant)
    if several["phase"] and phase:
        parts.append(f"{phase} phase")
    return ", ".join(parts)


def build_sla_limits(
    records: Sequence[ResultRecord],
    *,
    config_ids: Sequence[str] = (),
    workload_ids: Sequence[str] = (),
    names: Mapping[str, str] | None = None,
) -> list[SlaLimit]:
    """One ``SlaLimit`` per config and SLA workload (per target, sweep point and phase when several),
    workloads in ``workload_ids`` order then configs in ``config_ids`` order (others as the records
    first name them). ``names``: workload id -> the name people read (the id when absent)."""
    searches: dict[_Key, dict[int, SlaSearch]] = {}
    for record in records:
        sla = record.sla
        if sla is None:
            continue
        variant = ",".join(f"{k}={v}" for k, v in sorted(record.variant.items()))
        key = (
            record.config_id,
            record.target_id,
            record.workload,
            variant,
            record.phase,
            sla.percentile,
            sla.target_us,
        )
        searches.setdefault(key, {}).setdefault(record.repetition, sla)  # each direction carries it
    configs = list(config_ids) + [k[0] for k in searches if k[0] not in config_ids]
    workloads = list(workload_ids) + [k[2] for k in searches if k[2] not in workload_ids]
    by_pair: dict[tuple[str, str], list[_Key]] = {}
    for key in searches:
        by_pair.setdefault((key[0], key[2]), []).append(key)
    limits: list[SlaLimit] = []
    for key in sorted(searches, key=lambda k: (workloads.index(k[2]), configs.index(k[0]), k)):
        config_id, target, workload, variant, phase, percentile, target_us = key
        siblings = by_pair[(config_id, workload)]
        several = {
            "target": len({k[1] for k in siblings}) > 1,
            "variant": len({k[3] for k in siblings}) > 1,
            "phase": len({k[4] for k in siblings}) > 1,
        }
        runs = searches[key]
        repetitions = [_repetition(n, runs[n]) for n in sorted(runs)]
        limits.append(
            SlaLimit(
                config_id=config_id,
                workload=workload,
                name=(names or {}).get(workload, workload),
                measurement=_where(target, variant, phase, several),
                percentile=percentile,
                target_us=target_us,
                sla=sla_text(percentile, target_us),
                answer=_overall(percentile, [s.low_iops for s in runs.values()], repetitions),
                repetitions=repetitions,
            )
        )
    return limits


def _short_bracket(repetition: SlaRepetition) -> str:
    if len(repetition.bracket_iops) == 2:
        return "{:,}–{:,}".format(*repetition.bracket_iops)
    (bound,) = repetition.bracket_iops
    return f"above {bound:,}" if repetition.met else f"below {bound:,}"


def limit_line(limit: SlaLimit) -> str:
    """The CLI's line: target and answer; for one repetition where the limit lies and why the search
    stopped, for several each repetition's bracket (the report has their reasons and probes)."""
    where = f" ({limit.measurement})" if limit.measurement else ""
    text = f"{limit.config_id} {limit.workload}{where}, {limit.sla}: {limit.answer}"
    if len(limit.repetitions) == 1:
        (only,) = limit.repetitions
        return f"{text}; the limit lies {only.bracket}; {only.stopped}"
    brackets = ", ".join(
        f"{_short_bracket(r)} ({_STOPS_SHORT.get(r.stop, r.stop)})" for r in limit.repetitions
    )
    return f"{text}; the limit per repetition, in IOPS asked of fio: {brackets}"


def probe_rows(limit: SlaLimit) -> tuple[list[str], list[list[str]]]:
    """The probe table of every repetition: heads (a repetition column when several) and rows."""
    several = len(limit.repetitions) > 1
    head = [*(["repetition"] if several else []), *PROBE_HEAD]
    head[head.index("latency ms")] = f"p{limit.percentile:g} ms"
    rows = []
    for repetition in limit.repetitions:
        for probe in repetition.probes:
            verdict = "met" if probe.met else f"missed: {probe.why}" if probe.why else "missed"
            if probe.probe == repetition.answer_probe:
                verdict += " (the answer)"
            rows.append(
                [
                    *([str(repetition.repetition)] if several else []),
                    str(probe.probe),
                    f"{probe.rate_iops:,}",
                    num(probe.iops),
                    f"{probe.delivered * 100:.0f} %",
                    _ms(probe.latency_us),
                    verdict,
                ]
            )
    return head, rows

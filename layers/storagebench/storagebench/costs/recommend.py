"""The answer to "what should I buy": the cheapest config whose confidence bound meets every
requirement (``request.requirements``), the runners-up, and why each other config failed.

How a requirement is judged, on the repetitions of one measurement:

- On the edge of the 95 % Student-t interval a bet would lose on (``analysis.stats.summarize``):
  the lower bound for ``>``/``>=`` (IOPS, MiB/s), the upper bound for ``<``/``<=`` (latency).
  A single repetition has no interval: the bound is the value itself and the check says so.
- Rates without a direction are judged on the read+write total when the workload recorded
  directions apart (``costs.measures.with_totals``, as the comparison does); latency and run time
  without a direction on the worst direction.
- A workload with several measurements (sweep points, phases, targets, fio job groups) meets its
  requirements when one measurement meets all of them together: ``p95_ms<2`` and ``iops>=10000``
  on one workload mean p95 under 2 ms *at* 10,000 IOPS or more, not at two different loads.
  The measurement quoted is that one, or for a config that fails, the one closest to passing.

Configs are ranked by monthly cost (``costs.monthly``, as the run's economics priced them); a
config without a price is ranked after the priced ones, and two at the same cost (to the cent)
keep the request's order, with a note.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from pydantic import Field

from storagebench.analysis.stats import Aggregate, Summary, aggregate
from storagebench.costs.measures import TOTAL_LABEL, Frozen, MeasureKey, measurement_name, with_totals
from storagebench.costs.monthly import fmt_usd
from storagebench.protocol.caveats import emulated_caveat
from storagebench.request.requirements import Requirement, RequirementError, parse_requirement
from storagebench.results.records import ResultRecord

__all__ = [
    "EMULATED_LABEL",
    "ConfigPrice",
    "ConfigVerdict",
    "Recommendation",
    "RequirementCheck",
    "recommend",
]

EMULATED_LABEL = "emulated:"
"""Records measured on an emulated volume carry a label starting with this (emulated:gp2:100GiB)."""

Basis = Literal["ci95_low", "ci95_high", "single_run"]


@dataclass(frozen=True)
class ConfigPrice:
    """A config's monthly cost as the run's economics priced it; None when it could not be."""

    config_id: str
    monthly_usd: float | None
    partial: bool = False


class RequirementCheck(Frozen):
    requirement: str = Field(description="the requirement, canonically spelled")
    met: bool
    measurement: str | None = Field(description="which measurement was judged (sweep point, direction)")
    repetitions: int | None
    mean: float | None = Field(description="repetition mean, in the requirement's unit")
    bound: float | None = Field(description="the value judged: the interval's edge, or the single value")
    basis: Basis | None
    reason: str


class ConfigVerdict(Frozen):
    config_id: str
    monthly_usd: float | None
    cost_partial: bool
    meets_all: bool
    emulated: bool = Field(description="measured on emulated volumes (local mode)")
    checks: list[RequirementCheck]

    @property
    def failures(self) -> list[RequirementCheck]:
        return [c for c in self.checks if not c.met]


class Recommendation(Frozen):
    run_id: str | None
    requirements: list[str]
    recommended: ConfigVerdict | None = Field(description="the cheapest config meeting every requirement")
    runners_up: list[ConfigVerdict] = Field(
        description="the other configs meeting every requirement, by cost"
    )
    failed: list[ConfigVerdict] = Field(description="the configs missing a requirement, by cost")
    emulated: bool = Field(description="some results come from emulated volumes: not EBS's numbers")
    single_run: bool = Field(description="some judged values are single repetitions, without an interval")
    summary: str
    notes: list[str]


# ------------------------------------------------------------------------------ one check


def _bound(summary: Summary, at_least: bool) -> tuple[float, Basis]:
    if summary.ci95_low is None or summary.ci95_high is None:
        return summary.mean, "single_run"
    return (summary.ci95_low, "ci95_low") if at_least else (summary.ci95_high, "ci95_high")


def _num(value: float) -> str:
    """A number as people read it: 3,967 IOPS, 501.6 MiB/s, 0.581 ms."""
    if abs(value) >= 1000:
        return f"{value:,.0f}"
    if abs(value) >= 100:
        return f"{value:,.1f}"
    return f"{value:.3g}"


def _judged_aggregates(requirement: Requirement, aggs: Sequence[Aggregate]) -> list[Aggregate]:
    """The aggregates of one measurement a requirement is judged on (module doc: directions)."""
    stat = requirement.spec.stat
    having = [a for a in aggs if stat in a.metrics]
    if requirement.direction is not None:
        return [a for a in having if a.direction == requirement.direction]
    if requirement.spec.unit in ("IOPS", "MiB/s"):
        total = [a for a in having if a.direction == "mixed"]
        if total:
            return total
    return having


def _check(requirement: Requirement, aggs: Sequence[Aggregate], where: str) -> tuple[RequirementCheck, float]:
    """The check at one measurement (``where`` names it among the workload's), and its margin
    (relative, > 0 passing) to rank measurements."""
    spec = requirement.spec
    judged = _judged_aggregates(requirement, aggs)
    on = requirement.workload + (f" ({where})" if where else "")
    if not judged:
        measured = sorted({a.direction for a in aggs if spec.stat in a.metrics})
        if requirement.direction is not None and measured:
            why = (
                f"no {requirement.direction} {requirement.metric} on {on} "
                f"(directions measured: {', '.join(measured)})"
            )
        else:
            why = f"no {requirement.metric} measured on {on}"
        return _missing(requirement, why), -math.inf
    candidates = []
    for a in judged:
        summary = a.metrics[spec.stat]
        bound, basis = _bound(summary, requirement.at_least)
        candidates.append((bound * spec.scale, summary.mean * spec.scale, basis, summary.n, a.direction))
    # The worst direction decides: the one whose bound is furthest on the failing side
    bound, mean, basis, n, direction = (min if requirement.at_least else max)(candidates)
    met = requirement.holds(bound)
    margin = (bound - requirement.value) / max(abs(requirement.value), 1e-12)
    value = requirement.value
    threshold = f"{requirement.op} " + (f"{value:,.0f}" if value.is_integer() else f"{value:g}")
    judged_text = f"{_num(bound)} {threshold}" if met else f"{_num(bound)}, not {threshold}"
    if basis == "single_run":
        reason = f"{judged_text} (single run, no interval)"
    else:
        edge = "lower" if basis == "ci95_low" else "upper"
        reason = f"{edge} bound {judged_text} (mean {_num(mean)}, {n} runs"
        if not met and requirement.holds(mean):
            reason += "; the mean meets it, the interval does not: more repetitions narrow it"
        reason += ")"
    check = RequirementCheck(
        requirement=requirement.text,
        met=met,
        measurement=", ".join(p for p in (where, TOTAL_LABEL if direction == "mixed" else direction) if p),
        repetitions=n,
        mean=mean,
        bound=bound,
        basis=basis,
        reason=reason,
    )
    return check, margin if requirement.at_least else -margin


def _missing(requirement: Requirement, reason: str) -> RequirementCheck:
    return RequirementCheck(
        requirement=requirement.text,
        met=False,
        measurement=None,
        repetitions=None,
        mean=None,
        bound=None,
        basis=None,
        reason=reason,
    )


# ------------------------------------------------------------------------------ one config

Point = tuple[str, str, str, int | None]  # (target, variant, phase, group): one measurement


def _points(aggs: Iterable[Aggregate]) -> dict[str, dict[Point, list[Aggregate]]]:
    """A config's aggregates by workload, then by measurement (the pre-warm read is no workload)."""
    out: dict[str, dict[Point, list[Aggregate]]] = {}
    for a in aggs:
        if a.phase == "prewarm":
            continue
        out.setdefault(a.workload, {}).setdefault((a.target_id, a.variant, a.phase, a.group), []).append(a)
    return out


def _point_name(workload: str, point: Point, points: Mapping[Point, object]) -> str:
    """What tells a measurement from the workload's others (target, phase, sweep point, fio job
    group): only the parts that differ between them; '' for a workload's only measurement."""
    target, variant, phase, group = point
    key = MeasureKey(
        workload,
        target if len({p[0] for p in points}) > 1 else "",
        variant,
        phase,
        "mixed",
        group if len({p[3] for p in points}) > 1 else None,
    )
    return measurement_name(key, totals=False)


def _judge_workload(
    workload: str, requirements: Sequence[Requirement], points: Mapping[Point, list[Aggregate]]
) -> list[RequirementCheck]:
    if not points:
        return [_missing(r, f"no result for workload {workload}") for r in requirements]
    best: tuple[tuple[int, float], list[RequirementCheck]] | None = None
    for point, aggs in points.items():
        where = _point_name(workload, point, points)
        judged = [_check(r, aggs, where) for r in requirements]
        checks = [c for c, _ in judged]
        rank = (-sum(not c.met for c in checks), min(m for _, m in judged))
        if best is None or rank > best[0]:  # the passing one with most room, else the closest
            best = (rank, checks)
    assert best is not None
    return best[1]


def _judge_config(
    price: ConfigPrice,
    requirements: Sequence[Requirement],
    by_workload: Mapping[str, Mapping[Point, list[Aggregate]]],
    emulated: bool,
) -> ConfigVerdict:
    checks_by_text: dict[str, RequirementCheck] = {}
    grouped: dict[str, list[Requirement]] = {}
    for r in requirements:
        grouped.setdefault(r.workload, []).append(r)
    for workload, group in grouped.items():
        for check in _judge_workload(workload, group, by_workload.get(workload, {})):
            checks_by_text[check.requirement] = check
    checks = [checks_by_text[r.text] for r in requirements]  # in the order given
    return ConfigVerdict(
        config_id=price.config_id,
        monthly_usd=price.monthly_usd,
        cost_partial=price.partial,
        meets_all=all(c.met for c in checks),
        emulated=emulated,
        checks=checks,
    )


# ------------------------------------------------------------------------------ the answer


def _cost_text(verdict: ConfigVerdict) -> str:
    if verdict.monthly_usd is None:
        return "unpriced"
    return f"{fmt_usd(verdict.monthly_usd)}/month" + (
        " (cost partly unpriced)" if verdict.cost_partial else ""
    )


def _by_cost(verdicts: Sequence[ConfigVerdict]) -> list[ConfigVerdict]:
    # sorted() is stable: equal costs keep the request's order
    return sorted(verdicts, key=lambda v: (v.monthly_usd is None, v.monthly_usd or 0.0))


def recommend(
    requirements: Sequence[Requirement | str],
    records: Iterable[ResultRecord],
    prices: Sequence[ConfigPrice],
    *,
    workloads: Sequence[str],
    run_id: str | None = None,
) -> Recommendation:
    """The recommendation for one run (module doc). ``prices`` lists the run's configs in the
    request's order; ``workloads`` are the run's workload ids, which requirements must name.

    Raises :class:`RequirementError` for a requirement that cannot be read or names a workload the
    run does not have (the error lists the run's workloads); ValueError without requirements."""
    if not requirements:
        raise ValueError("no requirements to judge")
    parsed = [r if isinstance(r, Requirement) else parse_requirement(r, workloads) for r in requirements]
    for r in parsed:
        if r.workload not in workloads:
            raise RequirementError(
                r.text, 0, f"unknown workload {r.workload!r}", f"workloads: {', '.join(workloads) or 'none'}"
            )
    parsed = list(dict.fromkeys(parsed))  # the same requirement twice is judged once
    kept = list(records)
    emulated_configs = {
        r.config_id for r in kept if any(label.startswith(EMULATED_LABEL) for label in r.labels)
    }
    aggregates = aggregate(with_totals(kept))
    per_config: dict[str, list[Aggregate]] = {}
    for a in aggregates:
        per_config.setdefault(a.config_id, []).append(a)
    verdicts = [
        _judge_config(p, parsed, _points(per_config.get(p.config_id, [])), p.config_id in emulated_configs)
        for p in prices
    ]
    meeting = _by_cost([v for v in verdicts if v.meets_all])
    failing = _by_cost([v for v in verdicts if not v.meets_all])
    notes: list[str] = []
    recommended = meeting[0] if meeting else None
    texts = [r.text for r in parsed]
    if recommended is not None:
        if recommended.monthly_usd is None:
            notes.append(
                "no config meeting every requirement has a monthly price: the first in the request is named, "
                "not the cheapest"
            )
        tied = [
            v.config_id
            for v in meeting[1:]
            if v.monthly_usd is not None
            and recommended.monthly_usd is not None
            and round(v.monthly_usd, 2) == round(recommended.monthly_usd, 2)
        ]
        if tied:
            notes.append(
                f"{', '.join([recommended.config_id, *tied])} cost the same "
                f"({_cost_text(recommended)}): named in the request's order"
            )
        count = f"all {len(texts)} requirements" if len(texts) > 1 else texts[0]
        summary = (
            f"{recommended.config_id} at {_cost_text(recommended)} is the cheapest config meeting {count}"
        )
        if meeting[1:]:
            summary += f"; also meeting: {', '.join(v.config_id for v in meeting[1:])}"
    else:
        summary = "no config meets " + (f"all {len(texts)} requirements" if len(texts) > 1 else texts[0])
    unpriced = [v.config_id for v in verdicts if v.monthly_usd is None]
    if unpriced:
        notes.append(f"no monthly price for {', '.join(unpriced)}: ranked after the priced configs")
    single = any(c.basis == "single_run" for v in verdicts for c in v.checks)
    if single:
        notes.append(
            "some values are single repetitions: the bound is the value itself, without an interval; "
            "run more repetitions (request.repetitions) for a bound worth betting on"
        )
    emulated = bool(emulated_configs)
    if emulated:
        notes.insert(0, emulated_caveat(emulated_configs))
    return Recommendation(
        run_id=run_id,
        requirements=texts,
        recommended=recommended,
        runners_up=meeting[1:],
        failed=failing,
        emulated=emulated,
        single_run=single,
        summary=summary,
        notes=notes,
    )

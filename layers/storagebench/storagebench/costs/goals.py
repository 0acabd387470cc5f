"""Performance goals: the cheapest config that meets every goal, each judged on its confidence bound."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from storagebench.analysis.stats import Aggregate, Summary, aggregate
from storagebench.costs.measures import METRICS, Frozen, MeasureKey, measurement_name, with_totals
from storagebench.costs.monthly import ConfigCost, costs_by_id, fmt_usd
from storagebench.results.records import ResultRecord

# ------------------------------------------------------------------------------ targets


class Target(BaseModel):
    """What a config must deliver on one measurement (a phase and sweep point of a workload), e.g.
    ``Target(p95_latency_below_ms=2, iops_at_least=3000)``: p95 below 2 ms at 3,000 IOPS or more.

    ``basis="ci"`` (the default) judges the edge of the 95 % interval a bet would lose on: the
    lower bound of IOPS and MiB/s, the upper bound of latency and run time (the mean when a
    single repetition gives no interval). ``basis="mean"`` judges repetition means.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    workload: str | None = Field(default=None, description="judge only this workload id (default: any)")
    iops_at_least: float | None = Field(default=None, gt=0)
    mibps_at_least: float | None = Field(default=None, gt=0)
    mean_latency_below_ms: float | None = Field(default=None, gt=0)
    p95_latency_below_ms: float | None = Field(default=None, gt=0)
    p99_latency_below_ms: float | None = Field(default=None, gt=0)
    real_s_below: float | None = Field(default=None, gt=0)
    basis: Literal["ci", "mean"] = "ci"

    @model_validator(mode="after")
    def _something(self) -> Target:
        if all(getattr(self, name) is None for name, _, _, _ in _CONDITIONS):
            raise ValueError(
                "a target needs at least one condition (e.g. p95_latency_below_ms, iops_at_least)"
            )
        return self

    def describe(self) -> str:
        parts: list[str] = []
        for name, metric, _, _ in _CONDITIONS:
            value = getattr(self, name)
            if value is None:
                continue
            spec = METRICS[metric]
            if spec.kind == "latency":
                parts.append(f"{spec.label} below {value:g} ms")
            elif spec.kind == "time":
                parts.append(f"run time below {value:g} s")
            else:
                parts.append(f"{value:,.0f} {spec.unit} or more")
        text = " at ".join(parts) if len(parts) == 2 else ", ".join(parts)
        return text + (f" on {self.workload}" if self.workload else "")


# (field, metric, scale from the record's unit to the target's, format)
_CONDITIONS: tuple[tuple[str, str, float, str], ...] = (
    ("p95_latency_below_ms", "lat_p95_us", 1e-3, "{:.2f} ms"),
    ("p99_latency_below_ms", "lat_p99_us", 1e-3, "{:.2f} ms"),
    ("mean_latency_below_ms", "lat_mean_us", 1e-3, "{:.2f} ms"),
    ("iops_at_least", "iops", 1.0, "{:,.0f} IOPS"),
    ("mibps_at_least", "bw_mibps", 1.0, "{:,.1f} MiB/s"),
    ("real_s_below", "real_s", 1.0, "{:,.1f} s"),
)


class CandidateCheck(Frozen):
    config_id: str
    monthly_usd: float
    qualifies: bool
    workload: str | None
    measurement: str | None
    values: dict[str, float] = Field(description="the judged value of each condition, in the target's units")
    reason: str


class TargetResult(Frozen):
    target: Target
    description: str
    met: bool
    config_id: str | None
    monthly_usd: float | None
    workload: str | None
    measurement: str | None
    explanation: str
    candidates: list[CandidateCheck]


def _judged(summary: Summary, higher_is_better: bool, basis: str) -> tuple[float, bool]:
    """The value a target is judged on, and whether it is an interval bound."""
    if basis == "ci" and summary.ci95_low is not None and summary.ci95_high is not None:
        return (summary.ci95_low if higher_is_better else summary.ci95_high), True
    return summary.mean, False


def _check_point(
    target: Target, aggs: Sequence[Aggregate]
) -> tuple[list[str], list[str], dict[str, float], bool]:
    """(failed conditions, met conditions, judged values, any single-run value) at one point."""
    failed: list[str] = []
    met: list[str] = []
    values: dict[str, float] = {}
    single = False
    total = [a for a in aggs if a.direction == "mixed"]
    for name, metric, scale, fmt in _CONDITIONS:
        limit = getattr(target, name)
        if limit is None:
            continue
        spec = METRICS[metric]
        if spec.kind == "rate":
            # Rates are judged on the read+write total when directions were recorded apart.
            pool = total or list(aggs)
            summaries = [a.metrics[metric] for a in pool if metric in a.metrics]
            if len(summaries) > 1:
                failed.append(f"{spec.label} recorded per direction without a total (use with_totals)")
                continue
        else:
            # Latency and run time: the worst direction must meet the limit.
            summaries = [a.metrics[metric] for a in aggs if metric in a.metrics]
        if not summaries:
            failed.append(f"no {spec.label} measured")
            continue
        judged = [_judged(s, spec.higher_is_better, target.basis) for s in summaries]
        worst = min(judged) if spec.higher_is_better else max(judged)
        value = worst[0] * scale
        single = single or not worst[1]
        values[name] = value
        text = fmt.format(value)
        if spec.higher_is_better:
            (met if value >= limit else failed).append(
                f"{text} ({'>=' if value >= limit else '<'} {limit:,g})"
            )
        else:
            (met if value < limit else failed).append(
                f"{spec.label} {text} ({'<' if value < limit else '>='} {limit:g})"
            )
    return failed, met, values, single


def cheapest_meeting(
    target: Target,
    costs: Mapping[str, ConfigCost] | Iterable[ConfigCost],
    records: Iterable[ResultRecord] | None = None,
    *,
    aggregates: Iterable[Aggregate] | None = None,
    names: Mapping[str, str] | None = None,
) -> TargetResult:
    """The cheapest config (monthly) with a measurement meeting every condition of ``target``, or
    why none qualifies (each config's closest measurement and what it missed)."""
    priced = costs_by_id(costs)
    if aggregates is None:
        aggregates = aggregate(with_totals(records or []))
    points: dict[str, dict[tuple[str, str, str, str, int | None], list[Aggregate]]] = {}
    for a in aggregates:
        if target.workload is not None and a.workload != target.workload:
            continue
        if target.workload is None and a.phase == "prewarm":
            continue  # the pre-warm read is not a workload anyone asked to be judged on
        point = (a.workload, a.target_id, a.variant, a.phase, a.group)
        points.setdefault(a.config_id, {}).setdefault(point, []).append(a)
    targets_used: dict[tuple[str, str], set[str]] = {}
    for cid, by_point in points.items():
        for workload, target_id, *_ in by_point:
            targets_used.setdefault((cid, workload), set()).add(target_id)
    labels = names or {}
    basis = "95 % interval bound" if target.basis == "ci" else "mean"
    checks: list[CandidateCheck] = []
    for cid, cost in priced.items():
        best: tuple[tuple[int, int], CandidateCheck] | None = None
        for (workload, target_id, variant, phase, group), aggs in points.get(cid, {}).items():
            failed, met, values, single = _check_point(target, aggs)
            shown_target = target_id if len(targets_used[(cid, workload)]) > 1 else ""
            key = MeasureKey(workload, shown_target, variant, phase, "mixed", group)
            measurement = measurement_name(key, totals=False)
            where = labels.get(workload, workload) + (f" ({measurement})" if measurement else "")
            if failed:
                reason = f"{'; '.join(failed)} on {where}"
            else:
                reason = f"{', '.join(met)} on {where}" + (" (single run)" if single else "")
            check = CandidateCheck(
                config_id=cid,
                monthly_usd=cost.monthly_usd,
                qualifies=not failed,
                workload=workload,
                measurement=measurement,
                values=values,
                reason=reason,
            )
            rank = (len(failed), 0 if not single else 1)
            if best is None or rank < best[0]:
                best = (rank, check)
        if best is None:
            checks.append(
                CandidateCheck(
                    config_id=cid,
                    monthly_usd=cost.monthly_usd,
                    qualifies=False,
                    workload=None,
                    measurement=None,
                    values={},
                    reason="no results" + (f" for {target.workload}" if target.workload else ""),
                )
            )
        else:
            checks.append(best[1])
    description = target.describe()
    winners = sorted((c for c in checks if c.qualifies), key=lambda c: c.monthly_usd)
    if winners:
        win = winners[0]
        cost = priced[win.config_id]
        caveat = "" if cost.complete and not cost.unpriced else " (cost partly unpriced)"
        return TargetResult(
            target=target,
            description=description,
            met=True,
            config_id=win.config_id,
            monthly_usd=win.monthly_usd,
            workload=win.workload,
            measurement=win.measurement,
            explanation=(
                f"{win.config_id} at {fmt_usd(win.monthly_usd)}/month{caveat} meets {description}: "
                f"{win.reason} (judged on the {basis})"
            ),
            candidates=checks,
        )
    why = "; ".join(f"{c.config_id}: {c.reason}" for c in checks) or "no configs"
    return TargetResult(
        target=target,
        description=description,
        met=False,
        config_id=None,
        monthly_usd=None,
        workload=None,
        measurement=None,
        explanation=f"no config meets {description} (judged on the {basis}): {why}",
        candidates=checks,
    )

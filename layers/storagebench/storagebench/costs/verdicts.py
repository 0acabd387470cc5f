"""The one-line verdict of a config against the baseline: the cost first, then the workload differences
that matter most (the wording rules are in ``costs.compare``'s module notes).

A workload is called faster, slower, higher or lower only on a significant difference (Welch's
t-test at 5 %, ``costs.deltas``); otherwise it has "no significant difference", and with a single
repetition on a side the signed delta is given as untested, never as faster or slower."""

from __future__ import annotations

from collections.abc import Sequence

from storagebench.costs.deltas import WorkloadComparison, importance, pct
from storagebench.costs.measures import METRICS

MAX_VERDICT_ITEMS = 3
SAME_COST_BELOW_PCT = 0.5


# ------------------------------------------------------------------------------ verdict


def _cost_clause(delta: float | None, reason: str | None) -> str:
    if delta is None:
        return f"cost not comparable ({(reason or 'no delta').removeprefix('no delta: ')})"
    if abs(delta) < SAME_COST_BELOW_PCT:
        return "same monthly cost"
    if delta < 0:
        return f"{pct(delta)} % cheaper"
    if delta >= 100:
        return f"{1 + delta / 100:.1f}x the cost"
    return f"{pct(delta)} % more expensive"


def _difference(w: WorkloadComparison) -> str:
    d = w.headline
    assert d is not None
    where = w.name + (f" ({d.measurement})" if w.several_measurements and d.measurement else "")
    if d.noise == "overlap":
        return f"no significant difference on {where}"
    if d.delta_pct is None:
        return f"not comparable on {where} (baseline 0)"
    if d.delta_pct == 0:
        return f"no change on {where}"
    if d.noise == "unknown":
        sign = "+" if d.delta_pct > 0 else "-"
        return f"{sign}{pct(d.delta_pct)} % {METRICS[d.metric].label} on {where} (1 run: untested)"
    spec = METRICS[d.metric]
    ratio = 1 + d.delta_pct / 100
    up = d.delta_pct > 0
    if spec.kind == "rate":
        text = (
            f"{ratio:.1f}x faster" if ratio >= 2 else f"{pct(d.delta_pct)} % {'faster' if up else 'slower'}"
        )
    elif spec.kind == "latency":
        text = (
            f"{ratio:.1f}x the {spec.label}"
            if ratio >= 2
            else f"{pct(d.delta_pct)} % {'higher' if up else 'lower'} {spec.label}"
        )
    else:
        text = (
            f"{ratio:.1f}x longer" if ratio >= 2 else f"{pct(d.delta_pct)} % {'longer' if up else 'shorter'}"
        )
    return f"{text} on {where}"


def verdict(
    cost_delta_pct: float | None,
    workloads: Sequence[WorkloadComparison],
    *,
    cost_partial: bool = False,
    cost_reason: str | None = None,
    max_items: int = MAX_VERDICT_ITEMS,
) -> str:
    """One line: the cost difference, then the most important workload differences (module doc)."""
    clause = _cost_clause(cost_delta_pct, cost_reason)
    if cost_partial and cost_delta_pct is not None:
        clause += " (cost partly unpriced)"
    judged = sorted(
        (w for w in workloads if w.headline is not None),
        key=lambda w: importance(w.headline) if w.headline is not None else (3, 0.0),
    )
    if not judged:
        return f"{clause}; no results to compare"
    shown, rest = judged[:max_items], judged[max_items:]
    parts = [clause, *(_difference(w) for w in shown)]
    if rest:
        if all(w.headline is not None and w.headline.noise == "overlap" for w in rest):
            parts.append(f"no significant difference on {len(rest)} more")
        else:
            parts.append(f"{len(rest)} more not shown")
    # Workload titles can hold commas ("4k random read, IOPS-bound"): then items split on "; "
    return ("; " if any("," in part for part in parts) else ", ").join(parts)

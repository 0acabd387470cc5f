"""Cost against performance: each config against the request's baseline, in numbers and one line.

For every config this gives the monthly cost delta, and for each workload the delta of every
headline metric from the repetition means (``analysis.stats.aggregate``) with its 95 % confidence
intervals, and whether it is significant: Welch's t-test over the repetitions at 5 %
(``analysis.significance``). A difference that is not significant is reported as "no significant
difference"; with a single repetition on a side there is no test and the difference is marked
untested.

Metrics: IOPS and MiB/s (higher is better); mean, p95 and p99 latency and a timed command's
``real_s`` (lower is better). A workload that records reads and writes separately is also judged
on their per-repetition total (the device-level rate, as ``analysis.delivery.combined_rate``).

Verdict wording (one line per config, see :func:`verdict`):

1. The cost first: "N % cheaper", "N % more expensive" (from 2x: "2.9x the cost"), or "same
   monthly cost" below 0.5 %; "(cost partly unpriced)" when either side has unpriced parts or
   missing prices.
2. Then at most :data:`MAX_VERDICT_ITEMS` workload differences, most important first: the largest
   significant differences, then untested ones (one repetition: "-36 % IOPS on W (1 run:
   untested)", never "faster" or "slower"), then "no significant difference on W". Workloads left
   over are summed up as "no significant difference on N more" when they all are, else "N more not
   shown".
   Items are joined by ", ", or by "; " when a workload's name holds a comma.
3. Each workload is judged on its intent's metric (IOPS for IOPS and mixed workloads, MiB/s for
   throughput, p95 latency for latency probes, run time for timed commands and metadata; the next
   available metric when that one was not measured), on its measurement (phase, sweep point,
   direction, read+write total) with the most important difference; that measurement is named in
   parentheses when the workload has several.
4. Rates: "N % faster" / "N % slower" (from 2x: "2.4x faster"); latency: "N % lower p95 latency" /
   "N % higher p95 latency" (from 2x: "2.4x the p95 latency"); run time: "N % shorter" /
   "N % longer" (from 2x: "2.4x longer"). Percentages are whole numbers (one decimal below 1 %).
5. Workloads are named by the request's workload id when the request renamed the profile (e.g.
   "cellranger-count"), else by the profile's title without its trailing parenthesis
   ("4 jobs x 2 files, 4k random, 25 % reads").

Price-performance is the monthly cost per 1,000 IOPS and per MiB/s a workload delivered, at the
measurement where the baseline did best (the best operating point of a sweep). The Pareto frontier
of a workload metric holds the configs no other config beats on both monthly cost and the metric
(repetition means, same measurement as price-performance).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from pydantic import Field

from storagebench.analysis.stats import Aggregate, aggregate
from storagebench.costs.cost_delta import monthly_cost_delta
from storagebench.costs.deltas import WorkloadComparison, compare_workload
from storagebench.costs.frontier import ParetoFrontier, PricePerformance, frontiers, price_performance
from storagebench.costs.goals import Target, TargetResult, cheapest_meeting
from storagebench.costs.measures import (
    Frozen,
    index_aggregates,
    with_totals,
    workload_intents,
    workload_names,
)
from storagebench.costs.monthly import ConfigCost, costs_by_id
from storagebench.costs.verdicts import verdict
from storagebench.request.model import BenchmarkRequest
from storagebench.results.records import ResultRecord

__all__ = ["Comparison", "ConfigComparison", "compare"]


# ------------------------------------------------------------------------------ the comparison


class ConfigComparison(Frozen):
    config_id: str
    is_baseline: bool
    monthly_usd: float
    delta_monthly_pct: float | None
    delta_monthly_reason: str | None = Field(default=None, description="why there is no delta")
    storage_only_usd: float | None = Field(
        default=None, description="the targets alone: no instances, no root volumes (None: stored before)"
    )
    delta_storage_pct: float | None = Field(
        default=None, description="storage_only_usd against the baseline's, percent"
    )
    delta_storage_reason: str | None = Field(default=None, description="why there is no storage delta")
    price_source: str
    price_date: str | None
    cost_partial: bool = Field(description="unpriced parts or missing prices on this config or the baseline")
    workloads: list[WorkloadComparison]
    price_performance: list[PricePerformance]
    verdict: str


class Comparison(Frozen):
    baseline: str
    configs: list[ConfigComparison]
    frontiers: list[ParetoFrontier]
    notes: list[str] = Field(default_factory=list)
    aggregates: list[Aggregate] = Field(exclude=True, repr=False)
    costs: dict[str, ConfigCost] = Field(exclude=True, repr=False)
    names: dict[str, str] = Field(exclude=True, repr=False)

    def config(self, config_id: str) -> ConfigComparison:
        for c in self.configs:
            if c.config_id == config_id:
                return c
        raise KeyError(config_id)

    def frontier(self, workload: str, metric: str) -> ParetoFrontier:
        for f in self.frontiers:
            if f.workload == workload and f.metric == metric:
                return f
        raise KeyError((workload, metric))

    def cheapest_meeting(self, target: Target) -> TargetResult:
        return cheapest_meeting(target, self.costs, aggregates=self.aggregates, names=self.names)


def compare(
    request: BenchmarkRequest | None,
    costs: Mapping[str, ConfigCost] | Iterable[ConfigCost],
    records: Iterable[ResultRecord],
    *,
    baseline: str | None = None,
    names: Mapping[str, str] | None = None,
) -> Comparison:
    """Every config against the baseline (the request's, else ``baseline``, else the first priced).

    Workloads are the request's (in its order); without a request, those found in the records.
    """
    priced = costs_by_id(costs)
    if not priced:
        raise ValueError("nothing to compare: no priced configs")
    base_id = baseline or (request.baseline_id if request is not None else next(iter(priced)))
    if base_id not in priced:
        raise KeyError(f"baseline {base_id!r} has no cost; priced: {', '.join(priced)}")
    aggs = aggregate(with_totals(records))
    index = index_aggregates(aggs)
    label = {**workload_names(request), **(names or {})}
    intents = workload_intents(request)
    if request is not None:
        workloads = [w.id for w in request.resolved_workloads()]
    else:
        workloads = list(dict.fromkeys(a.workload for a in aggs if a.phase != "prewarm"))
    notes: list[str] = []
    base_cost = priced[base_id]
    base_index = index.get(base_id, {})
    if not base_index:
        notes.append(f"baseline {base_id} has no results: only costs are compared")
    rows: list[ConfigComparison] = []
    for cid, cost in priced.items():
        partial = bool(cost.unpriced or cost.missing_prices or base_cost.unpriced or base_cost.missing_prices)
        delta = monthly_cost_delta(cost, base_cost)
        storage = monthly_cost_delta(cost, base_cost, part="storage")
        compared: list[WorkloadComparison] = []
        if cid != base_id:
            for w in workloads:
                row = compare_workload(
                    w, label.get(w, w), intents.get(w, "mixed"), base_index, index.get(cid, {})
                )
                if row is not None:
                    compared.append(row)
        perf = [p for w in workloads if (p := price_performance(w, cost, index, base_id)) is not None]
        rows.append(
            ConfigComparison(
                config_id=cid,
                is_baseline=cid == base_id,
                monthly_usd=cost.monthly_usd,
                delta_monthly_pct=delta.pct,
                delta_monthly_reason=None if cid == base_id else delta.reason,
                storage_only_usd=cost.storage_only_usd,
                delta_storage_pct=storage.pct,
                delta_storage_reason=None if cid == base_id else storage.reason,
                price_source=cost.price_source,
                price_date=cost.price_date,
                cost_partial=partial,
                workloads=compared,
                price_performance=perf,
                verdict="baseline"
                if cid == base_id
                else verdict(delta.pct, compared, cost_partial=partial, cost_reason=delta.reason),
            )
        )
    return Comparison(
        baseline=base_id,
        configs=rows,
        frontiers=frontiers(workloads, priced, index, base_id),
        notes=notes,
        aggregates=aggs,
        costs=priced,
        names=label,
    )

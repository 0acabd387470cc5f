"""The run a report is built from: its stored results, request, comparison, run cost, regressions
and time series parsed and aggregated once (:class:`ParsedRun`), with the configs in order, each
workload's headline measurement and the labels counted. The sections are built from it by
``report.build_configs`` (one config) and ``report.build_sections`` (the whole run).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from storagebench.analysis.stats import aggregate
from storagebench.costs.measures import TOTAL_LABEL, MeasureKey, index_aggregates, with_totals, workload_names
from storagebench.report.build_values import (
    MeasureIndex,
    headline_of,
    measurement_text,
)
from storagebench.report.findings import (
    FINDING_PREFIXES,
    read_regressions,
    regression_text,
)
from storagebench.report.inputs import (
    mapping,
    read_comparison,
    read_config_states,
    read_request,
    run_cost_by_config,
    storage_text,
)
from storagebench.report.model import (
    METRIC_INFO,
    Finding,
    WorkloadInfo,
)
from storagebench.report.trends import RunValues, run_environment
from storagebench.request.model import BenchmarkRequest
from storagebench.results.records import ResultRecord
from storagebench.store.models import decode_run
from storagebench.store.repetitions import config_repetitions
from storagebench.workloads import get_profile

__all__ = ["ParsedRun", "RecordKey"]


RecordKey = tuple[str, str, str, str, str, str, int | None]


def _label_counts(
    records: Iterable[ResultRecord],
) -> tuple[dict[tuple[str, str], dict[str, int]], dict[str, set[str]], dict[tuple[str, str], int]]:
    """Finding labels per (config, workload) counted in repetitions (whatever the directions or
    job groups that carry them), environment labels per config, and repetitions per pair."""
    label_reps: dict[tuple[str, str], dict[str, set[int]]] = {}
    environment: dict[str, set[str]] = {}
    runs: dict[tuple[str, str], set[int]] = {}
    for record in records:
        pair = (record.config_id, record.workload)
        runs.setdefault(pair, set()).add(record.repetition)
        for label in record.labels:
            if label.startswith(FINDING_PREFIXES):
                label_reps.setdefault(pair, {}).setdefault(label, set()).add(record.repetition)
            elif label != TOTAL_LABEL:
                environment.setdefault(record.config_id, set()).add(label)
    counts = {pair: {label: len(reps) for label, reps in found.items()} for pair, found in label_reps.items()}
    return counts, environment, {pair: len(reps) for pair, reps in runs.items()}


class ParsedRun:
    """The run's inputs, parsed and aggregated once; each section of the report is built from it."""

    def __init__(
        self,
        stored: Mapping[str, Any],
        request: BenchmarkRequest | None,
        comparison: Mapping[str, Any] | None,
        run_cost: Mapping[str, Any] | None,
        regressions: Sequence[Mapping[str, Any]],
        series: Mapping[str, Mapping[str, Any]],
        history: Mapping[str, Any] | None = None,
    ) -> None:
        self.notes: list[str] = []
        self.history = history
        self.findings: list[Finding] = []
        document = decode_run(stored)
        self.notes += document.notes
        self.run = document.run
        self.records, self.options = document.records, document.options
        self.request = read_request(request, self.run, self.notes)
        self.states = read_config_states(self.run, document.configs)
        self.stops, unread = config_repetitions(document.configs)  # adaptive series, steady state
        self.notes += unread
        self.comparison, self.computed_costs = read_comparison(
            comparison, self.request, self.records, self.notes
        )
        self.compared: dict[str, Mapping[str, Any]] = {
            str(c.get("config_id")): c
            for c in (self.comparison or {}).get("configs") or []
            if isinstance(c, Mapping)
        }
        self.run_cost = run_cost
        self.run_costs, self.run_total = run_cost_by_config(run_cost)
        self.series = series
        self.config_ids = self._config_ids()
        self.baseline = str(
            (self.comparison or {}).get("baseline")
            or (self.request.baseline_id if self.request is not None else None)
            or (self.config_ids[0] if self.config_ids else "")
        )
        self.request_configs = {c.id: c for c in self.request.configs} if self.request is not None else {}

        totals = with_totals(self.records)
        self.index: MeasureIndex = index_aggregates(aggregate(totals))
        self.members: dict[RecordKey, list[ResultRecord]] = {}
        for record in totals:
            self.members.setdefault(record.key(), []).append(record)
        self.groups: dict[str, set[int | None]] = {}
        for by_key in self.index.values():
            for key in by_key:
                self.groups.setdefault(key.workload, set()).add(key.group)
        self.labels, self.environment, self.runs = _label_counts(self.records)
        self.workloads, self.headline = self._workloads()
        self.workload_name = {w.id: w.name for w in self.workloads}
        self.regression_rows, self.regression_counts = read_regressions(regressions, self.groups)
        self.regressions_of: dict[tuple[str, str], list[str]] = {}
        for row in self.regression_rows:
            for cid in row.config_ids:
                self.regressions_of.setdefault((cid, row.workload), []).append(regression_text(row))
        self.current = RunValues(
            run_id=self.run.run_id or "unknown run",
            started_at=self.run.started_at or "",
            index=self.index,
            environment=run_environment(
                document, {cid: mapping(doc).get("environment") for cid, doc in series.items()}
            ),
        )
        self.storage: dict[str, tuple[str, str]] = {
            cid: storage_text(self.request_configs.get(cid), cid, self.options) for cid in self.config_ids
        }
        self.monthly: dict[str, float | None] = {}
        for cid in self.config_ids:
            cost = self.compared.get(cid, {}).get("monthly_usd")
            self.monthly[cid] = float(cost) if isinstance(cost, int | float) else None

    # ------------------------------------------------------------------ identities

    def where(self, key: MeasureKey, empty: str = "the only measurement") -> str:
        return measurement_text(key, self.groups, empty)

    def _config_ids(self) -> list[str]:
        """Configs in the request's order, then any others the store or the results name."""
        found: list[str] = []
        candidates = [
            *(c.id for c in (self.request.configs if self.request is not None else [])),
            *self.run.configs,
            *self.states,
            *self.compared,
            *(r.config_id for r in self.records),
        ]
        for cid in candidates:
            if isinstance(cid, str) and cid not in found:
                found.append(cid)
        return found

    def _workloads(self) -> tuple[list[WorkloadInfo], dict[str, tuple[str, MeasureKey]]]:
        names = workload_names(self.request)
        if self.request is not None:
            ids = [(w.id, w.profile) for w in self.request.resolved_workloads()]
        else:
            seen: dict[str, str] = {}
            for record in self.records:
                if record.phase != "prewarm":
                    seen.setdefault(record.workload, record.profile)
            ids = list(seen.items())
        infos: list[WorkloadInfo] = []
        headline: dict[str, tuple[str, MeasureKey]] = {}
        for wid, profile in ids:
            try:
                intent = get_profile(profile).intent
            except KeyError:
                intent = "mixed"
            metric, key = headline_of(wid, intent, self.index, self.baseline)
            if metric is not None and key is not None:
                headline[wid] = (metric, key)
            infos.append(
                WorkloadInfo(
                    id=wid,
                    name=names.get(wid, wid),
                    intent=intent,
                    metric=METRIC_INFO[metric] if metric is not None else None,
                    measurement=self.where(key, "") if key is not None else "",
                )
            )
        return infos, headline

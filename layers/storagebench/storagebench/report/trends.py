"""Trends: each headline number of the report over the suite's last runs, with the regression
check's noise band, the change points of the history (E-Divisive means) and what changed in the
environment there.

A trend point is computed exactly as the headline table computes this run's number (repetition
means of ``costs.measures.with_totals`` records, ``analysis.stats.aggregate``), at the same
measurement, so the last point of a trend is the number in the table. Points are per config id:
a config whose storage option or instance type changed between runs stays one line, and the change
is named (``storage ...``, ``instance generation c5 -> c6i``) where it happened; so is a change of
fio, kernel, image, OS or agent from the agents' manifests (``analysis.environment``). A history
whose environment changes where no change point is found says so too: runs on different software
are never averaged silently.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from storagebench.analysis.changepoints import STRICT_PERMUTATIONS, STRICT_PVALUE, e_divisive
from storagebench.analysis.environment import environment_changes
from storagebench.analysis.regressions import DEFAULT_K, DEFAULT_MIN_EFFECT, DEFAULT_MIN_HISTORY
from storagebench.analysis.stats import aggregate, noise_band
from storagebench.costs.measures import MeasureKey, index_aggregates, with_totals
from storagebench.report.model import METRIC_INFO, Trend, TrendChange, TrendPoint, WorkloadInfo
from storagebench.store.models import RunDocument, decode_run, mapping

__all__ = [
    "MIN_EARLIER_RUNS",
    "RunValues",
    "build_trends",
    "history_runs",
    "run_environment",
    "run_values",
]

MIN_EARLIER_RUNS = 2
"""Earlier runs a trend needs to be drawn; with fewer the report says "no history yet"."""


@dataclass
class RunValues:
    """One run, reduced to what a trend reads: its aggregates and each config's environment."""

    run_id: str
    started_at: str
    index: dict[str, dict[MeasureKey, Any]]
    environment: dict[str, dict[str, str]] = field(default_factory=dict)


def _instance_types(document: RunDocument) -> dict[str, str]:
    request = document.run.request or {}
    found: dict[str, str] = {}
    for item in request.get("configs") or []:
        config = mapping(item)
        if isinstance(config.get("id"), str) and isinstance(config.get("instance_type"), str):
            found[config["id"]] = config["instance_type"]
    return found


def _storage(document: RunDocument) -> dict[str, str]:
    """Each config's storage options without the instance type (named apart), joined."""
    by_config: dict[str, list[str]] = {}
    for (cid, _target), option in sorted(document.options.items()):
        by_config.setdefault(cid, []).append(option.split("/", 1)[-1])
    return {cid: " + ".join(options) for cid, options in by_config.items()}


def run_environment(document: RunDocument, recorded: Mapping[str, Any] | None) -> dict[str, dict[str, str]]:
    """Config id -> what it ran on: the agent's recorded facts (config id -> ``analysis.environment``
    facts, from the series documents), the request's instance type and the stored storage option."""
    environment: dict[str, dict[str, str]] = {}
    for cid, facts in (recorded or {}).items():
        if isinstance(facts, Mapping):
            environment[str(cid)] = {str(k): str(v) for k, v in facts.items() if v not in (None, "")}
    for cid, instance_type in _instance_types(document).items():
        environment.setdefault(cid, {}).setdefault("instance_type", instance_type)
    for cid, storage in _storage(document).items():
        environment.setdefault(cid, {})["storage_option"] = storage
    return environment


def run_values(
    stored: Mapping[str, Any], recorded: Mapping[str, Any] | None = None
) -> tuple[RunValues, list[str]]:
    """A stored run (``get_run``'s answer) and its configs' recorded environments as trend values;
    the notes say what could not be read."""
    document = decode_run(stored)
    run = document.run
    values = RunValues(
        run_id=run.run_id or "unknown run",
        started_at=run.started_at or "",
        index=index_aggregates(aggregate(with_totals(document.records))),
        environment=run_environment(document, recorded),
    )
    return values, document.notes


def history_runs(history: Mapping[str, Any] | None, notes: list[str]) -> tuple[list[RunValues], int]:
    """``report_inputs``' history (``{"runs": [{"stored", "environment"}], "notes", "requested"}``)
    as trend values, oldest first, and how many earlier runs were asked for."""
    if history is None:
        return [], 0
    notes.extend(str(n) for n in history.get("notes") or [])
    runs: list[RunValues] = []
    for item in history.get("runs") or []:
        entry = mapping(item)
        values, problems = run_values(mapping(entry.get("stored")), mapping(entry.get("environment")))
        if problems:
            notes.append(f"history run {values.run_id}: {'; '.join(problems)}")
        runs.append(values)
    requested = history.get("requested")
    return sorted(runs, key=lambda r: (r.started_at, r.run_id)), int(requested) if isinstance(
        requested, int
    ) else len(runs)


def _delta_pct(before: float, after: float) -> float | None:
    return (after - before) / abs(before) * 100.0 if before != 0 else None


def _unrecorded(points: Sequence[TrendPoint]) -> list[str]:
    missing = [p.run_id for p in points if "fio_version" not in p.environment]
    if not missing:
        return []
    return [
        f"The agent's fio, kernel and image are not recorded for {len(missing)} of {len(points)} run(s) "
        "(runs collected before this was kept): a change of them there cannot be seen"
    ]


def _trend(
    cid: str,
    info: WorkloadInfo,
    metric: str,
    key: MeasureKey,
    current: RunValues,
    history: Sequence[RunValues],
    measurement: str,
) -> Trend | None:
    def value(run: RunValues) -> float | None:
        agg = run.index.get(cid, {}).get(key)
        summary = agg.metrics.get(metric) if agg is not None else None
        return None if summary is None else float(summary.mean)

    now = value(current)
    if now is None:
        return None
    points = [
        TrendPoint(
            run_id=run.run_id,
            started_at=run.started_at,
            value=v,
            is_current=False,
            environment=run.environment.get(cid, {}),
        )
        for run in history
        if (v := value(run)) is not None
    ]
    past = [p.value for p in points]
    points.append(
        TrendPoint(
            run_id=current.run_id,
            started_at=current.started_at,
            value=now,
            is_current=True,
            environment=current.environment.get(cid, {}),
        )
    )
    band = (
        noise_band(past, k=DEFAULT_K, min_effect=DEFAULT_MIN_EFFECT)
        if len(past) >= DEFAULT_MIN_HISTORY
        else None
    )
    changes: list[TrendChange] = []
    notes: list[str] = []
    if len(past) >= MIN_EARLIER_RUNS:
        found = e_divisive([p.value for p in points], pvalue=STRICT_PVALUE, permutations=STRICT_PERMUTATIONS)
        at_change = {c.index for c in found}
        for change in found:
            first = points[change.index]
            changes.append(
                TrendChange(
                    run_id=first.run_id,
                    started_at=first.started_at,
                    index=change.index,
                    before=change.before,
                    after=change.after,
                    delta_pct=_delta_pct(change.before, change.after),
                    p_value=change.p_value,
                    causes=environment_changes(points[change.index - 1].environment, first.environment),
                )
            )
        for position in range(1, len(points)):
            if position in at_change:
                continue
            mixed = environment_changes(points[position - 1].environment, points[position].environment)
            if mixed:
                notes.append(
                    f"{'; '.join(mixed)} from run {points[position].run_id}, where the history shows no "
                    "change point: the runs either side are on different software or hardware"
                )
        notes.extend(_unrecorded(points))
    return Trend(
        config_id=cid,
        workload=info.id,
        name=info.name,
        metric=METRIC_INFO[metric],
        measurement=measurement,
        points=points,
        band=band,
        changes=changes,
        notes=notes,
    )


def build_trends(
    config_ids: Sequence[str],
    workloads: Sequence[WorkloadInfo],
    headline: Mapping[str, tuple[str, MeasureKey]],
    current: RunValues,
    history: Sequence[RunValues],
    where: Callable[[MeasureKey], str],
) -> list[Trend]:
    """One trend per config and workload that has a headline number in this run (module doc)."""
    earlier = [run for run in history if run.run_id != current.run_id]
    trends: list[Trend] = []
    for cid in config_ids:
        for info in workloads:
            if info.id not in headline:
                continue
            metric, key = headline[info.id]
            found = _trend(cid, info, metric, key, current, earlier, where(key))
            if found is not None:
                trends.append(found)
    return trends

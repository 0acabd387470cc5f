"""A dry recommendation: a request's configs judged on what the store already measured.

``storagebench recommend --suite FILE`` answers "which of these should I buy?" before anything is
launched. Each config of the request is looked up by its storage option key (the key of its history
across runs and suites) and, per workload a requirement names, judged on the repetitions of the
most recent run that measured it since ``since``: one night's repetitions, never nights pooled into
an interval that would mix kernels, images or fio versions. A config the store never measured fails
with "no history", so the answer says what to run rather than guessing. Prices are today's, from
the bundled snapshot, as a dry run quotes them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError

from storagebench.analysis.regressions import MetricHistory
from storagebench.costs.monthly import price_request
from storagebench.costs.recommend import ConfigPrice, Recommendation, recommend
from storagebench.costs.recommend_run import NoRequirementsError, prices_from_costs
from storagebench.kinds import storage_option
from storagebench.prices.snapshot import SnapshotPriceBook
from storagebench.request import BenchmarkRequest
from storagebench.request.model import Config
from storagebench.request.requirements import parse_requirement
from storagebench.results.records import ResultRecord

__all__ = ["HistorySource", "recommend_from_history"]

DIRECTIONS = ("read", "write", "mixed", "trim")


@dataclass(frozen=True)
class HistorySource:
    """Where one config's figures for one workload came from."""

    config_id: str
    storage_option: str
    workload: str
    run_id: str | None
    started_at: str | None
    repetitions: int

    def text(self) -> str:
        if self.run_id is None:
            return f"{self.config_id}: no history of {self.workload} on {self.storage_option}"
        return (
            f"{self.config_id}: {self.workload} from run {self.run_id} ({self.started_at}, "
            f"{self.repetitions} repetition(s) per direction at most)"
        )


def storage_options(config: Config) -> list[str]:
    """The keys a config's results are stored under (one per target), as the workflow writes them."""
    return [storage_option(config, str(t.id)) for t in config.targets]


def _latest_run_records(
    points: Sequence[Mapping[str, Any]], config_id: str, notes: list[str]
) -> tuple[list[ResultRecord], str | None, str | None]:
    """The records of the newest run among ``points`` (one series, several directions), stamped
    with the request's config id; points that do not validate are named in ``notes``, not used."""
    runs = sorted(
        {(str(p.get("started_at", "")), str(p.get("run_id", ""))) for p in points if p.get("run_id")},
        reverse=True,
    )
    if not runs:
        return [], None, None
    started_at, run_id = runs[0]
    records: list[ResultRecord] = []
    for point in points:
        if point.get("run_id") != run_id or not isinstance(point.get("record"), Mapping):
            continue
        try:
            records.append(ResultRecord.model_validate({**point["record"], "config_id": config_id}))
        except ValidationError as exc:
            where = exc.errors()[0]
            field = ".".join(str(p) for p in where["loc"])
            notes.append(
                f"{config_id}: a stored result of run {run_id} is unreadable ({field}: {where['msg']}); "
                "left out"
            )
    return records, run_id, started_at


def recommend_from_history(
    request: BenchmarkRequest,
    history: MetricHistory,
    *,
    since: str,
    requirements: Sequence[str] = (),
    prices: Mapping[str, ConfigPrice] | None = None,
) -> tuple[Recommendation, list[HistorySource]]:
    """The recommendation for ``request``'s configs on stored history since ``since`` (ISO date),
    and where each judged figure came from.

    Raises :class:`NoRequirementsError` when none are given and the request has none, and
    ``RequirementError`` for one that cannot be read or names a workload the request lacks."""
    texts = list(requirements) or list(request.requirements)
    if not texts:
        raise NoRequirementsError(
            f"request {request.name!r} has no requirements: give some, e.g. std-randread-4k:iops>=3500"
        )
    workloads = [w.id for w in request.resolved_workloads()]
    parsed = [parse_requirement(t, workloads) for t in texts]
    needed = list(dict.fromkeys(r.workload for r in parsed))
    notes: list[str] = []
    records: list[ResultRecord] = []
    sources: list[HistorySource] = []
    for config in request.configs:
        for option in storage_options(config):
            for workload in needed:
                points = [
                    p
                    for direction in DIRECTIONS
                    for p in history.metric_history(option, workload, "-", "run", direction, since)
                ]
                found, run_id, started_at = _latest_run_records(points, config.id, notes)
                records += found
                per_direction: dict[str, int] = {}
                for r in found:
                    per_direction[r.direction] = per_direction.get(r.direction, 0) + 1
                most = max(per_direction.values(), default=0)
                sources.append(HistorySource(config.id, option, workload, run_id, started_at, most))
    if prices is None:
        book = SnapshotPriceBook(request.region)
        prices = prices_from_costs(price_request(request, book))
        notes.append(f"monthly costs from the bundled price snapshot (as of {book.as_of})")
    ordered = [prices.get(c.id, ConfigPrice(c.id, None)) for c in request.configs]
    answer = recommend(parsed, records, ordered, workloads=workloads, run_id=None)
    missing = [s for s in sources if s.run_id is None]
    if missing:
        notes.append(
            f"no history since {since} for: "
            + "; ".join(f"{s.config_id} {s.workload} ({s.storage_option})" for s in missing)
            + ": run the request to judge them"
        )
    notes.append("judged on the newest run that measured each config and workload; nights are never pooled")
    return answer.model_copy(update={"notes": [*answer.notes, *notes]}), sources

"""What Finalize leaves besides the run's status: its economics and its report.

Both are derived from what is already stored (results, config states, the request, the series),
so neither can lose a measurement; a failure here becomes a note on the run, never a failed run.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any

from storagebench.analysis.regressions import earlier_runs
from storagebench.core.errors import WorkflowError
from storagebench.core.state import RunSummary
from storagebench.costs.economics import economics_summary, run_economics
from storagebench.notify import deliver
from storagebench.notify.run_messages import run_notifications
from storagebench.prices.models import PriceNotFound
from storagebench.request import RequestError, parse_request
from storagebench.store.models import decode_run
from storagebench.workflow.artifact_keys import economics_key, report_key, request_key, series_key
from storagebench.workflow.ports import Artifacts, ResultsStore, Services

log = logging.getLogger("storagebench.workflow.run_outputs")

__all__ = [
    "TREND_BUDGET_S",
    "TREND_RUNS",
    "notify_run",
    "record_run_economics",
    "record_run_report",
    "report_history",
    "report_inputs",
]

TREND_RUNS = 20
"""Earlier runs of the suite the report's trends read (the regression check's window)."""
TREND_BUDGET_S = 30.0
"""Most time reading them: Finalize's Lambda has 120 s, shared with the regressions and the report."""


def record_run_economics(
    run_id: str, ended_at: str, services: Services
) -> tuple[dict[str, Any] | None, list[str]]:
    """Price the run and compare its configs with the baseline; keep the whole in the artifacts and
    the summary on the run item. A pricing or store problem becomes a note: costs must not fail a
    run whose measurements are stored."""
    try:
        request = parse_request(services.artifacts.get_json(request_key(run_id)))
        stored = services.store.get_run(run_id)
        spot_prices = services.spot_prices(request.region) if services.spot_prices is not None else None
        economics = run_economics(
            request, stored, services.prices(request.region), ended_at=ended_at, spot_prices=spot_prices
        )
        key = economics_key(run_id)
        services.artifacts.put_json(key, economics.model_dump(mode="json"))
        summary = economics_summary(economics, services.artifacts.uri(key))
        services.store.record_economics(run_id, summary)
    except (WorkflowError, RequestError, PriceNotFound, KeyError, ValueError) as exc:
        log.warning("costs of run %s not computed", run_id, exc_info=True)
        return None, [f"costs not computed: {type(exc).__name__}: {exc}"]
    return summary, list(economics.notes)


def report_inputs(
    stored: dict[str, Any],
    artifacts: Artifacts,
    store: ResultsStore,
    summary: RunSummary | None = None,
    *,
    trend_runs: int = TREND_RUNS,
) -> dict[str, Any]:
    """The keyword arguments of ``report.build_report`` for a stored run, read from the store and
    the artifacts; ``summary`` (Finalize's, before the run item has it) overrides the run's
    status; ``trend_runs`` how many earlier runs of the suite the trends read. Missing documents
    are left out: the report says what it lacks."""
    run = dict(stored.get("run") or {})
    run_id = str(run.get("run_id"))
    if summary is not None:
        run.update(
            status=summary.status,
            ended_at=summary.ended_at,
            config_results=[c.model_dump(mode="json") for c in summary.configs],
        )
    economics = _optional_json(artifacts, economics_key(run_id))
    series: dict[str, Any] = {}
    for config in decode_run(stored).configs:
        if config.state is not None:
            document = _optional_json(artifacts, series_key(config.state.item))
            if document is not None:
                series[config.config_id] = document
    return {
        "stored": {**stored, "run": run},
        "comparison": (economics or {}).get("comparison"),
        "run_cost": (economics or {}).get("run_cost"),
        "regressions": store.get_regressions(run_id),
        "series": series,
        "history": report_history(run, artifacts, store, runs=trend_runs),
    }


def _environments(stored: dict[str, Any], artifacts: Artifacts) -> dict[str, Any]:
    """Config id -> the environment its agent recorded (in the series document Collect wrote)."""
    found: dict[str, Any] = {}
    for config in decode_run(stored).configs:
        if config.state is not None:
            document = _optional_json(artifacts, series_key(config.state.item))
            if isinstance(document, dict) and isinstance(document.get("environment"), dict):
                found[config.config_id] = document["environment"]
    return found


def report_history(
    run: dict[str, Any],
    artifacts: Artifacts,
    store: ResultsStore,
    *,
    runs: int = TREND_RUNS,
    budget_s: float = TREND_BUDGET_S,
    clock: Callable[[], float] = time.monotonic,
) -> dict[str, Any]:
    """The suite's last ``runs`` runs before this one, for the report's trends: each run as the
    store holds it and its configs' recorded environments, newest first. A store error or the time
    budget ends the reading with a note the report prints (the trends then show fewer runs)."""
    suite, run_id, started_at = run.get("suite"), run.get("run_id"), run.get("started_at")
    history: dict[str, Any] = {"runs": [], "notes": [], "requested": runs}
    if not (isinstance(suite, str) and isinstance(run_id, str) and isinstance(started_at, str)):
        history["notes"].append("trends: the run names no suite or start time, so it has no history")
        return history
    deadline = clock() + budget_s
    try:
        earlier = earlier_runs(store, suite, run_id, started_at, runs)
        for done, entry in enumerate(earlier):
            if clock() > deadline:
                history["notes"].append(
                    f"trends: the {budget_s:g} s budget ran out after {done} of {len(earlier)} earlier runs"
                )
                break
            stored = store.get_run(str(entry.get("run_id")))
            history["runs"].append({"stored": stored, "environment": _environments(stored, artifacts)})
    except WorkflowError as exc:
        log.warning("history of suite %s not read", suite, exc_info=True)
        history["notes"].append(f"trends: the history could not be read: {type(exc).__name__}: {exc}")
    return history


def _optional_json(artifacts: Artifacts, key: str) -> Any:
    try:
        return artifacts.get_json(key)
    except KeyError:
        return None


def record_run_report(summary: RunSummary, services: Services) -> tuple[dict[str, str] | None, list[str]]:
    """The run's report in HTML, Markdown and CSV among its artifacts; their URIs by format."""
    from storagebench.report import build_report, render_csv, render_html, render_markdown

    try:
        stored = services.store.get_run(summary.run_id, histograms=True)  # the latency charts
        report = build_report(**report_inputs(stored, services.artifacts, services.store, summary))
        uris = {
            "html": services.artifacts.put_text(
                report_key(summary.run_id, "html"), render_html(report), "text/html"
            ),
            "markdown": services.artifacts.put_text(
                report_key(summary.run_id, "md"), render_markdown(report), "text/markdown"
            ),
            "csv": services.artifacts.put_text(
                report_key(summary.run_id, "csv"), render_csv(report), "text/csv"
            ),
        }
    except (WorkflowError, KeyError, ValueError) as exc:
        log.warning("report of run %s not written", summary.run_id, exc_info=True)
        return None, [f"report not written: {type(exc).__name__}: {exc}"]
    return uris, []


def notify_run(summary: RunSummary, services: Services) -> RunSummary:
    """Tell the operators how the run ended (and its regressions), once its status is recorded.

    A channel that refuses is logged at ERROR and kept in ``notification_notes`` (the handler counts
    it as NotificationFailures): it never fails a run whose measurements are stored."""
    delivery = deliver(services.notifier, run_notifications(summary, services.stack))
    return summary.model_copy(update={"notified": delivery.sent, "notification_notes": delivery.failed})

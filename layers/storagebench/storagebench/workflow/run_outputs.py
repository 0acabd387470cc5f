"""What Finalize leaves besides the run's status: its economics and its report.

Both are derived from what is already stored (results, config states, the request, the series),
so neither can lose a measurement; a failure here becomes a note on the run, never a failed run.
"""

from __future__ import annotations

import logging
from typing import Any

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

__all__ = ["notify_run", "record_run_economics", "record_run_report", "report_inputs"]


def record_run_economics(
    run_id: str, ended_at: str, services: Services
) -> tuple[dict[str, Any] | None, list[str]]:
    """Price the run and compare its configs with the baseline; keep the whole in the artifacts and
    the summary on the run item. A pricing or store problem becomes a note: costs must not fail a
    run whose measurements are stored."""
    try:
        request = parse_request(services.artifacts.get_json(request_key(run_id)))
        stored = services.store.get_run(run_id)
        economics = run_economics(request, stored, services.prices(request.region), ended_at=ended_at)
        key = economics_key(run_id)
        services.artifacts.put_json(key, economics.model_dump(mode="json"))
        summary = economics_summary(economics, services.artifacts.uri(key))
        services.store.record_economics(run_id, summary)
    except (WorkflowError, RequestError, PriceNotFound, KeyError, ValueError) as exc:
        log.warning("costs of run %s not computed", run_id, exc_info=True)
        return None, [f"costs not computed: {type(exc).__name__}: {exc}"]
    return summary, list(economics.notes)


def report_inputs(
    stored: dict[str, Any], artifacts: Artifacts, store: ResultsStore, summary: RunSummary | None = None
) -> dict[str, Any]:
    """The keyword arguments of ``report.build_report`` for a stored run, read from the store and
    the artifacts; ``summary`` (Finalize's, before the run item has it) overrides the run's
    status. Missing documents are left out: the report says what it lacks."""
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
    }


def _optional_json(artifacts: Artifacts, key: str) -> Any:
    try:
        return artifacts.get_json(key)
    except KeyError:
        return None


def record_run_report(summary: RunSummary, services: Services) -> tuple[dict[str, str] | None, list[str]]:
    """The run's report in HTML, Markdown and CSV among its artifacts; their URIs by format."""
    from storagebench.report import build_report, render_csv, render_html, render_markdown

    try:
        stored = services.store.get_run(summary.run_id)
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

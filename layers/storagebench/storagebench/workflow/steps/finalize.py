"""Finalize: the run's status from its configs' results, its regressions, economics and report;
record and notify (``functions/finalize``)."""

from __future__ import annotations

import logging
from typing import Any

from storagebench.analysis.regressions import compute_regressions
from storagebench.core.clock import iso
from storagebench.core.errors import WorkflowError
from storagebench.core.regression import Regression
from storagebench.core.state import ConfigResult, ConfigState, ErrorInfo, RunStatus, RunSummary
from storagebench.workflow.ports import Services
from storagebench.workflow.run_outputs import notify_run, record_run_economics, record_run_report
from storagebench.workflow.steps.cleanup import release
from storagebench.workflow.steps.shared import with_pending_errors

log = logging.getLogger(__name__)
REGRESSIONS_IN_SUMMARY = 100  # flagged verdicts the summary carries (the state's output stays small)


def result_after_failed_cleanup(document: dict[str, Any], services: Services) -> ConfigResult:
    """A config whose cleanup gave up reaches Finalize as its state plus the caught error.

    Finalize releases it once more, by its tags: a broken or throttled Cleanup for one config
    must not leave it running. What still fails is reported for the janitor.
    """
    state = with_pending_errors(ConfigState.model_validate(document))  # caught_cleanup and any earlier ones
    errors = list(state.errors)
    try:
        leftovers = release(state.item.run_id, state.item.config_id, state.resources, services).leftovers
    except WorkflowError as exc:
        errors.append(ErrorInfo(step="finalize", error=type(exc).__name__, cause=str(exc)))
        leftovers = [
            "cleanup did not finish: resources tagged with this run remain until the janitor removes them"
        ]
    records = state.collected.records if state.collected else 0
    return ConfigResult(
        run_id=state.item.run_id,
        config_id=state.item.config_id,
        status="partial" if records else "failed",
        records=records,
        errors=errors,
        leftovers=leftovers,
    )


def finalize(
    run_id: str, suite: str, started_at: str, entries: list[dict[str, Any]], services: Services
) -> RunSummary:
    configs = [
        result_after_failed_cleanup(e, services) if "item" in e else ConfigResult.model_validate(e)
        for e in entries
    ]
    statuses = {c.status for c in configs}
    status: RunStatus
    if statuses == {"succeeded"}:
        status = "SUCCEEDED"
    elif statuses <= {"failed"}:
        status = "FAILED"
    else:
        status = "PARTIAL"
    regressions, notes = run_regressions(run_id, suite, started_at, configs, services)
    ended_at = iso(services.clock.now())
    economics, economics_notes = record_run_economics(run_id, ended_at, services)
    summary = RunSummary(
        run_id=run_id,
        suite=suite,
        status=status,
        configs=configs,
        records=sum(c.records for c in configs),
        started_at=started_at,
        ended_at=ended_at,
        regressions=regressions,
        regression_notes=notes,
        economics=economics,
        economics_notes=economics_notes,
    )
    report, report_notes = record_run_report(summary, services)  # before the status: it is final
    summary = summary.model_copy(update={"report": report, "report_notes": report_notes})
    summary = notify_run(summary, services)  # links the report; never raises (a refusal is a note)
    services.store.finish_run(summary)
    return summary


def run_regressions(
    run_id: str, suite: str, started_at: str, configs: list[ConfigResult], services: Services
) -> tuple[list[Regression], list[str]]:
    """Compare what the succeeded and partial configs measured with the suite's last runs.

    Records every verdict in the store and returns the flagged ones (regressions first, at most
    REGRESSIONS_IN_SUMMARY) with notes. Never raises: regression detection must not fail a run,
    so a store error (or any other) becomes a note in the summary.
    """
    measured = [c.config_id for c in configs if c.status in ("succeeded", "partial")]
    if not measured:
        return [], []
    try:
        report = compute_regressions(services.store, run_id, suite, started_at, measured)
    except Exception as exc:  # never fail the run over its comparison with earlier ones
        log.warning("regressions of run %s not computed", run_id, exc_info=True)
        return [], [f"regressions not computed: {type(exc).__name__}: {exc}"]
    notes = list(report.notes)
    flagged = report.flagged
    if len(flagged) > REGRESSIONS_IN_SUMMARY:
        notes.append(
            f"{len(flagged) - REGRESSIONS_IN_SUMMARY} more flagged metric(s) are in the store "
            "(get_regressions)"
        )
    try:
        services.store.record_regressions(run_id, report.verdicts)
    except Exception as exc:  # likewise: the verdicts stay in the summary
        log.warning("regressions of run %s not recorded", run_id, exc_info=True)
        notes.append(f"regressions not recorded in the store: {type(exc).__name__}: {exc}")
    return flagged[:REGRESSIONS_IN_SUMMARY], notes

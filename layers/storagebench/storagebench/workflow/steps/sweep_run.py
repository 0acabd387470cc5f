"""SweepRun: the configs map failed or the run was stopped: release every config by its tags and
record the run FAILED (``functions/sweep_run``)."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from storagebench.core.clock import iso, parse_iso
from storagebench.core.state import CleanupReport, ConfigResult, ErrorInfo, Resources, RunSummary
from storagebench.workflow.ports import Services
from storagebench.workflow.run_outputs import notify_run
from storagebench.workflow.steps.cleanup import release
from storagebench.workflow.steps.shared import caught_cause


def cleanup_run(run_id: str, config_ids: list[str], services: Services) -> dict[str, CleanupReport]:
    """Release every config of a run by its tags: for an execution stopped or killed mid-way."""
    return {config_id: release(run_id, config_id, Resources(), services) for config_id in config_ids}


def abort_run(
    run_id: str,
    suite: str,
    started_at: str,
    config_ids: list[str],
    caught: dict[str, Any],
    services: Services,
    stopped_at: str | None = None,
) -> RunSummary:
    """The configs map failed, or the run was stopped: release everything by tag, keep what was
    measured, record FAILED.

    ``stopped_at``: when the execution stopped. A Provision or CheckReady invoked before then keeps
    running (Step Functions does not cancel it) and may launch after the first sweep; so once
    ``services.in_flight_s`` has passed since then, every config is swept again. The wait is measured
    from ``stopped_at``, so a retried sweep does not wait twice.
    """
    error = ErrorInfo(
        step="run",
        error=str(caught.get("Error", "States.Unknown")),
        cause=caught_cause(caught.get("Cause", "")),
    )
    reports = cleanup_run(run_id, config_ids, services)  # at once: what runs now stops costing now
    if stopped_at is not None:
        settled = parse_iso(stopped_at) + timedelta(seconds=services.in_flight_s)
        remaining = (settled - services.clock.now()).total_seconds()
        if remaining > 0:
            services.sleep(remaining)
        reports = cleanup_run(run_id, config_ids, services)
    stored = services.store.get_run(run_id)
    records: dict[str, int] = {}
    for result in stored.get("results", []):
        records[str(result.get("config_id"))] = records.get(str(result.get("config_id")), 0) + 1
    configs = [
        ConfigResult(
            run_id=run_id,
            config_id=config_id,
            status="partial" if records.get(config_id) else "failed",
            records=records.get(config_id, 0),
            errors=[error],
            leftovers=reports[config_id].leftovers,
        )
        for config_id in config_ids
    ]
    summary = RunSummary(
        run_id=run_id,
        suite=suite,
        status="FAILED",
        configs=configs,
        records=sum(c.records for c in configs),
        started_at=started_at,
        ended_at=iso(services.clock.now()),
    )
    summary = notify_run(summary, services)  # never raises: a refused notification is a note
    services.store.finish_run(summary)
    return summary

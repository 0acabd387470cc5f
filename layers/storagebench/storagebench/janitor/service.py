"""The janitor: sweep the stack's expired resources, fail its stuck runs, tell the operators.

The domain decides (``plan.plan_sweep``: what is a leak; ``stuck_runs``: which run is past its
deadline); the ports act (``TaggedResources`` deletes through the workflow's own EC2/EFS/FSx
adapters, ``RunRecords`` records the verdict conditionally). One failure never stops the rest of the
sweep; it is recorded in the report, and the handler raises at the end (``SweepIncompleteError``).
Every step is idempotent, so two sweeps at once, or a sweep retried, only repeat deletes of what is
already going.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from storagebench.core.clock import Clock, iso
from storagebench.core.errors import ResourceBusyError, WorkflowError
from storagebench.janitor.messages import leak_notification, stuck_run_notification
from storagebench.janitor.models import RESOURCE_KINDS, Leak, StuckRun, SweepReport, TaggedResource
from storagebench.janitor.plan import parse_time, plan_sweep
from storagebench.janitor.ports import RunExecutions, RunRecords, TaggedResources
from storagebench.notify import Notifier, deliver

log = logging.getLogger("storagebench.janitor")
RUNS_PAGE = 100


@dataclass
class Janitor:
    resources: TaggedResources
    runs: RunRecords
    notifier: Notifier
    stack: str
    clock: Clock
    # Stops a stuck run's execution, which may still be polling or about to launch more; None where
    # runs have no execution to stop (tests of the sweep alone).
    executions: RunExecutions | None = None

    def sweep(self) -> SweepReport:
        now = self.clock.now()
        report = SweepReport(stack=self.stack, swept_at=iso(now))
        found: list[TaggedResource] = []
        for kind in RESOURCE_KINDS:
            try:
                found.extend(self.resources.tagged(kind, self.stack))
            except WorkflowError as exc:
                log.error("janitor could not list %s", kind, exc_info=True)
                report.errors.append(f"list {kind}: {type(exc).__name__}: {exc}")
        plan = plan_sweep(found, self.stack, now)
        report.skipped = plan.skipped
        report.not_expired = plan.not_expired
        report.leaks = [self._delete(resource, leak) for resource, leak in plan.delete] + plan.settled
        report.stuck_runs = self._fail_stuck_runs(now, report)
        notifications = [leak_notification(leak, self.stack) for leak in report.leaks]
        notifications += [stuck_run_notification(run, self.stack) for run in report.stuck_runs]
        delivery = deliver(self.notifier, notifications)
        report.notified = delivery.sent
        report.notification_failures = delivery.failed
        for skipped in report.skipped:
            log.warning("janitor left %s %s alone: %s", skipped.kind, skipped.resource_id, skipped.reason)
        return report

    def _delete(self, resource: TaggedResource, leak: Leak) -> Leak:
        try:
            done = self.resources.delete(resource)
        except ResourceBusyError as exc:
            return leak.model_copy(
                update={"outcome": "pending", "detail": f"{exc}; the next sweep finishes it"}
            )
        except WorkflowError as exc:
            log.error("janitor could not delete %s %s", resource.kind, resource.resource_id, exc_info=True)
            return leak.model_copy(update={"outcome": "failed", "detail": f"{type(exc).__name__}: {exc}"})
        return leak.model_copy(update={"outcome": "deleted", "detail": done})

    def _fail_stuck_runs(self, now: datetime, report: SweepReport) -> list[StuckRun]:
        """Runs still RUNNING (or STOPPING) past their deadline (the request's max_run_hours) become FAILED.

        Every page is read before any run is failed: failing one takes it off the index being paged."""
        candidates: list[StuckRun] = []
        cursor: str | None = None
        while True:
            try:
                page, cursor = self.runs.runs_in_progress_page(limit=RUNS_PAGE, cursor=cursor)
            except WorkflowError as exc:
                log.error("janitor could not list runs in progress", exc_info=True)
                report.errors.append(f"list runs in progress: {type(exc).__name__}: {exc}")
                break
            candidates.extend(s for s in (self._stuck(run, now, report) for run in page) if s is not None)
            if cursor is None:
                break
        failed: list[StuckRun] = []
        for candidate in candidates:
            stuck = candidate.model_copy(update={"execution": self._stop_execution(candidate, report)})
            try:
                if self.runs.fail_stuck_run(stuck.run_id, stuck.reason, iso(now)):
                    failed.append(stuck)
            except WorkflowError as exc:
                log.error("janitor could not fail run %s", stuck.run_id, exc_info=True)
                report.errors.append(f"fail run {stuck.run_id}: {type(exc).__name__}: {exc}")
        return failed

    def _stop_execution(self, stuck: StuckRun, report: SweepReport) -> str:
        """Stopped first, so the execution cannot launch anything after its run is recorded FAILED;
        what it launched is expired and swept with the leaks (this sweep or the next)."""
        if self.executions is None:
            return "not asked"
        try:
            self.executions.stop(stuck.run_id, "StuckRun", f"stopped by the janitor: {stuck.reason}"[:32768])
        except WorkflowError as exc:
            log.error("janitor could not stop the execution of run %s", stuck.run_id, exc_info=True)
            report.errors.append(f"stop execution of {stuck.run_id}: {type(exc).__name__}: {exc}")
            return f"not stopped: {type(exc).__name__}: {exc}"
        return "stopped"

    @staticmethod
    def _stuck(run: dict[str, Any], now: datetime, report: SweepReport) -> StuckRun | None:
        run_id = str(run.get("run_id"))
        raw = str(run.get("expires_at") or "")
        deadline = parse_time(raw)
        if deadline is None:
            report.errors.append(f"run {run_id}: expires_at is {raw!r}, not an ISO 8601 time; left RUNNING")
            return None
        status = str(run.get("status", "RUNNING"))
        # STOPPING past the deadline: a stop whose SweepRun never ended the run (it failed for good)
        if deadline > now or status not in ("RUNNING", "STOPPING"):
            return None
        overdue = int((now - deadline).total_seconds())
        return StuckRun(
            run_id=run_id,
            suite=str(run["suite"]) if run.get("suite") else None,
            expires_at=raw,
            overdue_s=overdue,
            reason=(
                f"still {status} {overdue / 3600:.1f} h after its deadline {raw} (started "
                f"{run.get('started_at', '?')}, the request's timing.max_run_hours): no step recorded its "
                "end (its execution was stopped, or failed before Finalize, or outlived the deadline); "
                "what it left tagged is swept as leaks"
            ),
        )

"""What the janitor tells the operators: one notification per leak, one per stuck run failed."""

from __future__ import annotations

from storagebench.janitor.models import Leak, StuckRun
from storagebench.notify.models import Notification, subject_line

VERBS = {"deleted": "swept", "pending": "being swept", "failed": "NOT swept"}


def _age(seconds: int) -> str:
    hours = seconds / 3600
    return f"{hours:.1f} h" if hours >= 1 else f"{seconds // 60} min"


def leak_notification(leak: Leak, stack: str) -> Notification:
    owner = f"run {leak.run_id}" + (f" config {leak.config_id}" if leak.config_id else "")
    first = (
        f"leak {VERBS[leak.outcome]}: {leak.kind} {leak.resource_id} of {owner}, "
        f"{_age(leak.overdue_s)} past its expires-at {leak.expires_at}: {leak.detail}"
    )
    follow = (
        "It outlived its run: the run's Cleanup did not delete it (see the run's leftovers with "
        f"`storagebench results --run {leak.run_id}`)."
    )
    if leak.outcome == "failed":
        follow += " Delete it by hand; the janitor tries again on its next sweep."
    return Notification(
        kind="leak",
        subject=subject_line(
            f"storagebench {stack}: leak {VERBS[leak.outcome]}: {leak.kind} {leak.resource_id}"
        ),
        text=f"{first}\n{follow}",
        stack=stack,
        run_id=leak.run_id,
    )


def stuck_run_notification(run: StuckRun, stack: str) -> Notification:
    suite = f" of {run.suite}" if run.suite else ""
    return Notification(
        kind="stuck-run",
        subject=subject_line(f"storagebench {stack}: run {run.run_id}{suite} marked FAILED (stuck)"),
        text=f"run {run.run_id}{suite}: FAILED by the janitor: {run.reason}\nits execution: {run.execution}",
        stack=stack,
        run_id=run.run_id,
    )

"""What Finalize tells the operators about a run: finished (or failed), and its regressions.

The first line of each text is the whole story (status, configs ok/failed, the run's cost, the
headline verdicts, where the report is); the lines after it are the detail an operator acts on.
The report is named by its storage URI and the command that opens it, not by a presigned URL: a
URL signed with a Lambda role's session credentials stops working when they expire (hours), long
before an e-mail is read the next morning; the API's GET /runs/{id}/report signs a fresh one.
"""

from __future__ import annotations

from typing import Any

from storagebench.core.state import RunSummary
from storagebench.notify.models import Notification, subject_line

MAX_DETAIL_LINES = 20  # per notification: the rest is in the report and the store
HEADLINE_VERDICTS = 3


def run_notifications(summary: RunSummary, stack: str) -> list[Notification]:
    """run-finished (SUCCEEDED or PARTIAL) or run-failed (FAILED), then regression when any was found."""
    notifications = [_finished(summary, stack)]
    regressions = [r for r in summary.regressions if r.verdict == "regression"]
    if regressions:
        lines = [r.describe() for r in regressions]
        text = [
            f"{len(regressions)} regression(s) in run {summary.run_id} of {summary.suite} against the "
            "median of the suite's last runs (outside median ± max(4 MAD, 5 %)):",
            *_bounded(lines),
            _report_line(summary, stack),
        ]
        notifications.append(
            Notification(
                kind="regression",
                subject=subject_line(
                    f"storagebench {summary.suite}: {len(regressions)} regression(s) in {summary.run_id}"
                ),
                text="\n".join(text),
                stack=stack,
                run_id=summary.run_id,
            )
        )
    return notifications


def _finished(summary: RunSummary, stack: str) -> Notification:
    ok = sum(1 for c in summary.configs if c.status == "succeeded")
    partial = sum(1 for c in summary.configs if c.status == "partial")
    failed = sum(1 for c in summary.configs if c.status == "failed")
    counts = f"configs {ok} ok" + (f", {partial} partial" if partial else "") + f", {failed} failed"
    head = [f"run {summary.run_id} of {summary.suite}: {summary.status}", counts, _cost(summary.economics)]
    head.extend(_verdicts(summary.economics))
    head.append(_report_line(summary, stack))
    detail = []
    for config in summary.configs:
        if config.status != "succeeded":
            first = config.errors[0] if config.errors else None
            why = f": {first.step} {first.error}: {first.cause}" if first else ""
            detail.append(f"{config.config_id} {config.status}{why}")
        if config.leftovers:
            detail.append(f"{config.config_id} left {', '.join(config.leftovers)} (the janitor sweeps them)")
    detail.extend(summary.economics_notes + summary.report_notes + summary.regression_notes)
    kind = "run-failed" if summary.status == "FAILED" else "run-finished"
    return Notification(
        kind=kind,
        subject=subject_line(f"storagebench {summary.suite}: {summary.status} ({counts}) {summary.run_id}"),
        text="\n".join(["; ".join(part for part in head if part), *_bounded(detail)]),
        stack=stack,
        run_id=summary.run_id,
    )


def _cost(economics: dict[str, Any] | None) -> str:
    value = (economics or {}).get("run_cost_usd")
    return f"run cost ${value:,.2f}" if isinstance(value, int | float) else "run cost not computed"


def _verdicts(economics: dict[str, Any] | None) -> list[str]:
    configs = [c for c in (economics or {}).get("configs") or [] if isinstance(c, dict) and c.get("verdict")]
    shown = [f"{c.get('id')}: {c.get('verdict')}" for c in configs[:HEADLINE_VERDICTS]]
    if len(configs) > HEADLINE_VERDICTS:
        shown.append(f"{len(configs) - HEADLINE_VERDICTS} more verdict(s) in the report")
    return shown


def _report_line(summary: RunSummary, stack: str) -> str:
    where = (summary.report or {}).get("html")
    if where:  # the report on S3, which `report --stack` downloads through the API
        return f"report {where} (open it with `storagebench report --stack {stack} {summary.run_id} --open`)"
    return f"no report was written; `storagebench report {summary.run_id} --open` builds it from the store"


def _bounded(lines: list[str]) -> list[str]:
    if len(lines) <= MAX_DETAIL_LINES:
        return lines
    return [*lines[:MAX_DETAIL_LINES], f"... and {len(lines) - MAX_DETAIL_LINES} more"]

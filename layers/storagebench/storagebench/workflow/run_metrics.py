"""The numbers a finished run adds to the stack's CloudWatch metrics (emitted by Finalize's handler).

Runs<Status> (one per run), Configs and ConfigFailures, RunCostUSD (the run's own cost, when it
was priced), RegressionsFound and NotificationFailures. The dashboard and the alarms read these.
"""

from __future__ import annotations

from storagebench.core.state import RunSummary


def run_metrics(summary: RunSummary) -> dict[str, float]:
    values: dict[str, float] = {
        f"Runs{summary.status.title()}": 1,
        "Configs": len(summary.configs),
        "ConfigFailures": sum(1 for c in summary.configs if c.status == "failed"),
        "RegressionsFound": sum(1 for r in summary.regressions if r.verdict == "regression"),
        "NotificationFailures": len(summary.notification_notes),
    }
    cost = (summary.economics or {}).get("run_cost_usd")
    if isinstance(cost, int | float) and not isinstance(cost, bool):
        values["RunCostUSD"] = float(cost)
    return values

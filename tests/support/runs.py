"""A run as the workflow records it: each config's planned work, and the summary Finalize writes."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from storagebench.core.state import ConfigResult, RunSummary, StepTiming, WorkItem


def run_summary(
    run_id: str,
    suite: str,
    started_at: str,
    ended_at: str,
    *,
    status: str = "SUCCEEDED",
    configs: Sequence[ConfigResult] = (),
    records: int = 0,
    **fields: Any,
) -> RunSummary:
    """A run's end as Finalize records it; no configs and no records unless given."""
    ended = {"records": records, "started_at": started_at, "ended_at": ended_at}
    return RunSummary(run_id=run_id, suite=suite, status=status, configs=list(configs), **ended, **fields)


# The template's defaults: poll readiness every 30 s for 20 min, a heartbeat every 5 min, 2 h a command.
TIMING = StepTiming(ready_poll_s=30, ready_timeout_s=1200, heartbeat_s=300, command_timeout_s=7200)


def work_item(
    run_id: str,
    config_id: str,
    suite: str,
    region: str,
    started_at: str,
    expires_at: str,
    *,
    timing: StepTiming = TIMING,
    **fields: Any,
) -> WorkItem:
    """One config's work as Plan hands it on; its artifacts under ``runs/<run>/<config>/`` unless given."""
    fields.setdefault("artifacts_prefix", f"runs/{run_id}/{config_id}/")
    times = {"region": region, "started_at": started_at, "expires_at": expires_at, "timing": timing}
    return WorkItem(run_id=run_id, config_id=config_id, suite=suite, **times, **fields)

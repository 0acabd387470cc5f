"""Stored runs: the summary Finalize writes when a run ends."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from storagebench.core.state import ConfigResult, RunSummary


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
    return RunSummary(
        run_id=run_id,
        suite=suite,
        status=status,
        configs=list(configs),
        records=records,
        started_at=started_at,
        ended_at=ended_at,
        **fields,
    )

"""The report's line per record measured across a node's removal (``results.node_loss``): what the
I/O did when a controller was lost, in the words of the study (the pause, the recovery, the level
the survivors hold)."""

from __future__ import annotations

from collections.abc import Iterable

from storagebench.report.fmt import num
from storagebench.results.records import ResultRecord


def _s(value: float) -> str:
    return f"{value:.1f} s"


def node_loss_note(record: ResultRecord) -> str | None:
    """One line for a record carrying a node loss, None otherwise."""
    loss = record.node_loss
    if loss is None:
        return None
    f = loss.iops
    where = f"{record.config_id}/{record.workload} {record.phase} {record.direction}"
    where += f" (repetition {record.repetition})"
    head = f"{loss.role}[{loss.index}] removed {_s(loss.at_s)} into {where}: before {num(f.before)} IOPS"
    if f.pause_s > 0 and f.pause_start_s is not None:
        pause = f"I/O paused {_s(f.pause_s)} (from {f.pause_start_s:+.1f} s)"
    else:
        pause = f"no pause (no {f.interval_ms} ms interval at or under 5 % of before)"
    if not f.recovered:
        return (
            f"{head}; {pause}; I/O never came back: {num(f.after)} IOPS over the log's last "
            f"{_s(f.after_window_s)} (it ends {_s(f.log_end_s)} after fio's start)"
        )
    back = "never" if f.recovery_to_before_s is None else f"after {_s(f.recovery_to_before_s)}"
    return (
        f"{head}; {pause}; at 90 % of the survivors' level after {_s(f.recovery_s or 0.0)}: "
        f"{num(f.after)} IOPS, {num(f.after_pct_of_before)} % of before; back to 90 % of before: {back}"
    )


def node_loss_notes(records: Iterable[ResultRecord]) -> list[str]:
    """A line per record measured across a removal, in the order collected."""
    return [line for r in records if (line := node_loss_note(r)) is not None]

"""The report's line per pre-warmed target: what was read before the workloads, and what it showed.

A target read end to end (restored from a snapshot, or ``prewarm.volumes: all``) gets its bytes,
rate and time; a target given the cold-read check gets both passes and the first-access penalty
they measured (``results.cold_read``), so a reader sees the penalty measured rather than assumed.
"""

from __future__ import annotations

from collections.abc import Iterable

from storagebench.report.fmt import num, pct, seconds
from storagebench.results.records import ResultRecord

GIB = 1 << 30
MIB = 1 << 20


def _short(value: float) -> str:
    """``num`` without trailing zeros: 4 GiB, 2.5 %, not 4.00 GiB."""
    text = num(value)
    return text.rstrip("0").rstrip(".") if "." in text else text


def _size(value: int) -> str:
    return f"{_short(value / GIB)} GiB" if value >= GIB else f"{_short(value / MIB)} MiB"


def prewarm_note(record: ResultRecord) -> str:
    """One line: the cold-read check's cold and warm passes, or the full read's rate and time."""
    where = f"{record.config_id}/{record.target_id}"
    check = record.cold_read
    if check is not None:
        members = f" on each of {check.volumes} volumes" if check.volumes > 1 else ""
        share = f"{_short(check.volume_pct)} % of the volume, dd reads of {_size(check.block_bytes)}"
        return (
            f"pre-warm of {where}: cold-read check, {_size(check.bytes)} in {check.extents} extents"
            f"{members} ({share}): "
            f"cold {num(check.cold.mibps)} MiB/s, {num(check.cold.read_ms_mean)} ms per read; "
            f"warm {num(check.warm.mibps)} MiB/s, {num(check.warm.read_ms_mean)} ms; "
            f"first-access penalty {pct(check.penalty_pct)}"
        )
    method = next((label.split(":", 1)[1] for label in record.labels if label.startswith("prewarm:")), "dd")
    return (
        f"pre-warm of {where}: read end to end with {method}, {_size(record.bytes)} at "
        f"{num(record.bw_mibps)} MiB/s in {seconds(record.runtime_s)}"
    )


def prewarm_notes(records: Iterable[ResultRecord]) -> list[str]:
    """A line per pre-warm record, in the order collected."""
    return [prewarm_note(r) for r in records if r.phase == "prewarm" and r.workload == "prewarm"]

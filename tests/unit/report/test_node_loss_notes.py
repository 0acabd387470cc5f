"""The report's line for a record measured across a node's removal."""

from __future__ import annotations

from typing import Any

from tests.support import report_runs as fx

from storagebench.agent.node_loss import measure
from storagebench.report import build_report, render_markdown
from storagebench.report.node_loss_notes import node_loss_note, node_loss_notes
from storagebench.results.node_loss import NodeLoss
from storagebench.results.records import ResultRecord


def record(rates: dict[int, float] | None) -> ResultRecord:
    fields: dict[str, Any] = {
        "config_id": "vsan",
        "target_id": "data",
        "workload": "ctrl-loss",
        "profile": "randwrite-8k",
        "repetition": 1,
        "phase": "run",
        "direction": "write",
        "engine": "fio",
        "bytes": 1,
        "runtime_s": 10.0,
    }
    if rates is not None:
        figures = measure(rates, removed_at_ms=5_000)
        fields["node_loss"] = NodeLoss(role="controller", index=1, at_s=5.0, iops=figures)
    return ResultRecord(**fields)


def rates(*runs: tuple[float, int]) -> dict[int, float]:
    out: dict[int, float] = {}
    for rate, count in runs:
        for _ in range(count):
            out[len(out) + 1] = rate
    return out


def test_a_failover_line_names_the_pause_the_recovery_and_the_level() -> None:
    line = node_loss_note(record(rates((1000, 50), (0, 8), (500, 40))))
    assert line == (
        "controller[1] removed 5.0 s into vsan/ctrl-loss run write (repetition 1): before 1,000 IOPS; "
        "I/O paused 0.8 s (from +0.0 s); at 90 % of the survivors' level after 0.8 s: 500 IOPS, "
        "50.0 % of before; back to 90 % of before: never"
    )


def test_a_loss_never_recovered_says_so() -> None:
    line = node_loss_note(record(rates((1000, 50), (0, 40))))
    assert line is not None
    assert "I/O paused 4.0 s (from +0.0 s); I/O never came back: 0 IOPS over the log's last 3.0 s" in line


def test_records_without_a_loss_get_no_line() -> None:
    assert node_loss_notes([record(None), record(rates((1000, 50), (990, 40)))]) == [
        "controller[1] removed 5.0 s into vsan/ctrl-loss run write (repetition 1): before 1,000 IOPS; "
        "no pause (no 100 ms interval at or under 5 % of before); at 90 % of the survivors' level after "
        "0.0 s: 990 IOPS, 99.0 % of before; back to 90 % of before: after 0.0 s"
    ]


def test_the_built_report_and_its_markdown_carry_the_line() -> None:
    recs = fx.records()
    first = recs[0]
    figures = measure(rates((1000, 50), (0, 8), (500, 40)), removed_at_ms=5_000)
    recs[0] = first.model_copy(
        update={"node_loss": NodeLoss(role="controller", index=0, at_s=5.0, iops=figures)}
    )
    report = build_report(fx.stored(recs), request=fx.request())
    lines = [n for n in report.notes if n.startswith("controller[0] removed 5.0 s into ")]
    assert len(lines) == 1
    assert "I/O paused 0.8 s (from +0.0 s)" in lines[0]
    assert "I/O paused 0.8 s" in render_markdown(report)

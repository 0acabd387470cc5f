"""Too small to measure: the thresholds, and the warnings dd and command phases carry."""

from __future__ import annotations

from pathlib import Path

import pytest

from storagebench.agent.engines import PhaseContext, run_phase
from storagebench.protocol.measurable import MIN_IOS, MIN_RUNTIME_S, too_small


@pytest.mark.parametrize(
    ("runtime_s", "ios", "percentiles", "flagged"),
    [
        (0.007, 10, False, "0.007 s of I/O (under 1 s)"),  # the 10 dd writes in 0.007 s
        (MIN_RUNTIME_S, 10, False, None),  # dd: few I/Os over a real second is a fair throughput
        (3.0, MIN_IOS - 1, True, "999 I/Os (under 1,000 for latency percentiles)"),
        (3.0, MIN_IOS, True, None),
        (0.5, 200, True, "0.5 s of I/O (under 1 s) and 200 I/Os"),
        (None, None, True, None),  # nothing known, nothing judged
    ],
)
def test_thresholds(runtime_s: float | None, ios: int | None, percentiles: bool, flagged: str | None) -> None:
    why = too_small(runtime_s, ios, percentiles)
    if flagged is None:
        assert why is None
    else:
        assert why is not None and why.startswith("too small to measure: ") and flagged in why


def test_a_tiny_dd_phase_carries_the_warning(tmp_path: Path) -> None:
    workdir = tmp_path / "work"
    workdir.mkdir()
    context = PhaseContext(str(tmp_path), "filesystem", str(workdir), str(tmp_path / "phase"), None, False)
    phase = {"name": "w", "engine": "dd", "dd": {"direction": "write", "file": "f", "bs": "4k", "count": 10}}
    result = run_phase(phase, context)  # type: ignore[arg-type]
    assert result["status"] == "ok", result["error"]
    [warning] = result["warnings"]
    assert warning.startswith("dd write of 10 blocks: too small to measure: ")


def test_a_command_of_a_second_or_more_is_not_flagged(tmp_path: Path) -> None:
    workdir = tmp_path / "work"
    workdir.mkdir()
    context = PhaseContext(str(tmp_path), "filesystem", str(workdir), str(tmp_path / "phase"), None, False)
    quick = run_phase({"name": "q", "engine": "command", "command": {"script": "true"}}, context)  # type: ignore[arg-type]
    assert quick["warnings"][0].startswith("command: too small to measure")
    context.phase_dir = str(tmp_path / "phase-slow")
    slow = run_phase({"name": "s", "engine": "command", "command": {"script": "sleep 1.1"}}, context)  # type: ignore[arg-type]
    assert "warnings" not in slow

"""The pause and recovery of a node removed mid-run, measured on synthetic fio rate logs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from storagebench.agent.engines import _removed_at_ms
from storagebench.agent.node_loss import (
    NodeLossError,
    interval_series,
    measure,
    measure_directory,
    parse_rate_log,
)


def series(*runs: tuple[float, int]) -> dict[int, float]:
    """Intervals of 100 ms: (rate, how many intervals) in order, the first ending at 0.1 s."""
    out: dict[int, float] = {}
    index = 1
    for rate, count in runs:
        for _ in range(count):
            out[index] = rate
            index += 1
    return out


def test_clean_failover_pause_then_half_capacity() -> None:
    # 10 s at 1000 IOPS, removal at 10 s, 0.8 s stalled, then 500 IOPS (one of two controllers) for 5 s.
    result = measure(series((1000, 100), (0, 8), (500, 50)), removed_at_ms=10_000)
    assert result["before"] == pytest.approx(1000)
    assert result["after"] == pytest.approx(500)
    assert result["after_pct_of_before"] == pytest.approx(50)
    assert result["pause_s"] == pytest.approx(0.8)
    assert result["pause_start_s"] == pytest.approx(0.0)
    assert result["recovered"] is True
    assert result["recovery_s"] == pytest.approx(0.8)
    assert result["recovery_to_before_s"] is None  # half the capacity never gives back the whole rate
    assert result["log_end_s"] == pytest.approx(15.8)


def test_pause_ignores_noise_before_removal_and_fills_missing_intervals_from_neighbours() -> None:
    data = series((1000, 30), (0, 2), (1000, 68), (0, 3), (900, 40))
    del data[102]  # no sample in the middle of the pause: its neighbours are 0, so it stays stalled
    del data[50]  # a late sample before the removal: its neighbours are 1000, not a stall
    result = measure(data, removed_at_ms=10_000)
    assert result["pause_s"] == pytest.approx(0.3)  # the 0.2 s dip at 3 s is before the removal
    assert result["recovery_s"] == pytest.approx(0.3)
    assert result["recovery_to_before_s"] == pytest.approx(0.3)


def test_slow_ramp_recovery_is_the_first_second_at_90_percent_of_after() -> None:
    # After the stall throughput climbs 100 IOPS per 100 ms to 1000 and holds.
    ramp = [(float(100 * k), 1) for k in range(1, 11)]
    result = measure(series((1000, 50), (0, 5), *ramp, (1000, 40)), removed_at_ms=5_000)
    assert result["pause_s"] == pytest.approx(0.5)
    # The first interval at 900 (90 % of after) that holds a 1 s mean of 900 is 0.8 s into the ramp.
    assert result["recovery_s"] == pytest.approx(1.3)
    assert result["recovery_to_before_s"] == pytest.approx(1.3)


def test_a_lucky_interval_inside_the_stall_does_not_end_the_recovery() -> None:
    result = measure(series((1000, 50), (0, 3), (1000, 1), (0, 6), (1000, 40)), removed_at_ms=5_000)
    assert result["pause_s"] == pytest.approx(0.6)  # the longest stalled run
    assert result["pause_start_s"] == pytest.approx(0.4)
    assert result["recovery_s"] == pytest.approx(1.0)


def test_a_gap_in_the_log_is_a_stall() -> None:
    """fio logs nothing while no I/O completes: 1 s without samples is a 1 s pause."""
    data = series((1000, 50), (0, 10), (700, 40))
    for index in range(51, 61):
        del data[index]
    result = measure(data, removed_at_ms=5_000)
    assert result["pause_s"] == pytest.approx(1.0)
    assert result["pause_start_s"] == pytest.approx(0.0)
    assert result["recovery_s"] == pytest.approx(1.0)


def test_no_pause() -> None:
    data = series((1000, 50), (980, 50))
    del data[60]  # a sample late: not a pause
    result = measure(data, removed_at_ms=5_000)
    assert result["pause_s"] == 0.0
    assert result["pause_start_s"] is None
    assert result["recovered"] is True
    assert result["recovery_s"] == 0.0


def test_never_recovers_says_so() -> None:
    result = measure(series((1000, 50), (0, 60)), removed_at_ms=5_000)
    assert result["recovered"] is False
    assert result["recovery_s"] is None
    assert result["recovery_to_before_s"] is None
    assert result["pause_s"] == pytest.approx(6.0)  # to the end of the log
    assert result["after"] == 0.0


def test_log_too_short_before_the_removal() -> None:
    with pytest.raises(NodeLossError, match=r"too short before the removal: 0\.5 s"):
        measure(series((1000, 50)), removed_at_ms=500)


def test_log_too_short_after_the_removal() -> None:
    with pytest.raises(NodeLossError, match=r"too short after the removal: it ends at 6 s"):
        measure(series((1000, 60)), removed_at_ms=5_000)


def test_empty_and_idle_logs_are_errors() -> None:
    with pytest.raises(NodeLossError, match="no samples"):
        measure({}, removed_at_ms=5_000)
    with pytest.raises(NodeLossError, match="no iops in the 5 s before the removal"):
        measure(series((0, 100)), removed_at_ms=5_000)


def test_jobs_are_summed_per_interval_and_direction() -> None:
    job1 = parse_rate_log("100, 10, 0, 4096, 0\n200, 20, 0, 4096, 0\n200, 30, 1, 4096, 0\n")
    job2 = parse_rate_log("101, 5, 0, 4096, 0, 0\n")
    assert interval_series([job1, job2], 100) == {"read": {1: 15.0, 2: 20.0}, "write": {2: 30.0}}
    with pytest.raises(NodeLossError, match="line 1: non-numeric"):
        parse_rate_log("x, 1, 0, 4096, 0")


def test_measure_directory_reads_fio_logs(tmp_path: Path) -> None:
    lines = [f"{(i + 1) * 100}, {1000 if i < 50 or i >= 55 else 0}, 1, 4096, 0" for i in range(100)]
    (tmp_path / "sb_iops.1.log").write_text("\n".join(lines) + "\n")
    bw = [f"{(i + 1) * 100}, {4000 if i < 50 or i >= 55 else 0}, 1, 4096, 0" for i in range(100)]
    (tmp_path / "sb_bw.1.log").write_text("\n".join(bw) + "\n")
    (tmp_path / "sb_lat.1.log").write_text("100, 5, 1, 4096, 0\n")
    result = measure_directory(str(tmp_path), removed_at_ms=5_000)
    assert sorted(result) == ["write", "write_bw"]
    assert result["write"]["pause_s"] == pytest.approx(0.5)
    assert result["write_bw"]["metric"] == "bw_mibps"
    assert result["write_bw"]["before"] == pytest.approx(4000 / 1024)
    with pytest.raises(NodeLossError, match="no fio iops log"):
        measure_directory(str(tmp_path / ".."), removed_at_ms=5_000)


def test_the_removal_is_dated_on_fios_clock_from_the_primarys_word(tmp_path: Path) -> None:
    """fio reported at 1,000,012,000 ms (epoch) after its last sample at 12,000 ms: its log clock's 0
    (after its 2 s ramp) was at 1,000,000,000. The node took the word at 999,997,300, 700 ms before
    fio's start-up ended, and went 2 s of ramp + 4 s later: 3.3 s on fio's clock, not the planned 4."""
    (tmp_path / "ts").mkdir()
    lines = "".join(f"{t}, 100, 1, 4096, 0\n" for t in range(100, 12_100, 100))
    (tmp_path / "ts" / "sb_iops.1.log").write_text(lines)
    (tmp_path / "fio.json").write_text(json.dumps({"timestamp_ms": 1_000_012_000}))
    loss = {"role": "controller", "index": 0, "at_s": 4.0, "ramp_s": 2.0, "told_at_ms": 999_997_300.0}
    assert _removed_at_ms(loss, str(tmp_path)) == pytest.approx(3_300.0)  # type: ignore[arg-type]
    planned = {"role": "controller", "index": 0, "at_s": 4.0}  # no word: a phase outside a topology
    assert _removed_at_ms(planned, str(tmp_path)) == 4_000.0  # type: ignore[arg-type]

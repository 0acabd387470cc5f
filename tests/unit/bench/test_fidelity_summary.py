"""The fidelity bench's verdicts per emulator: goals met, worst errors, the twin's CPU."""

from __future__ import annotations

from typing import Any

from fidelity_latency import compare_latency, compare_limit
from fidelity_summary import best_prewarm, emulator_goals, summarize, table, twin_cpu_summary

GP3 = {"iops": 3000.0, "mibps": 125.0, "io_size_kib": 256}
MODEL = {"p50_ms": 2.65, "p95_ms": 3.13, "p99_ms": 3.4}


def row(
    emulator: str, measured: dict[str, float], iops: float | None, cpu: float | None = None
) -> dict[str, Any]:
    latency = compare_latency(measured, MODEL)
    limit = compare_limit(GP3, "iops", 4, iops) if iops is not None else None
    return {
        "volume": "gp3:100",
        "profile": "std-randread-4k" if iops is not None else "std-latency-4k-qd1",
        "emulator": emulator,
        "limit": limit,
        "latency": {"directions": {"read": latency}, "meets_goals": latency["meets_goals"]},
        "twin_cpu": {"pct_of_one_core_per_1000_iops": cpu, "cpu_share_pct_of_one_core": 30.0}
        if cpu
        else None,
        "cpu_pressure_some_pct": 12.5,
        "meets_goals": latency["meets_goals"] and (limit is None or limit["within_3pct"]),
    }


ROWS = [
    row("twin", {"p50": 2.64, "p95": 3.2, "p99": 3.65}, 2991.0, cpu=8.4),
    row("twin", {"p50": 2.64, "p95": 3.2, "p99": 4.5}, None, cpu=9.1),  # p99 +32 %
    row("throttle", {"p50": 0.064, "p95": 0.21, "p99": 97.0}, 3000.0),
]


def test_each_emulator_gets_its_goals_and_its_worst_errors() -> None:
    summary = summarize(ROWS)
    twin, throttle = summary["twin"], summary["throttle"]
    assert (twin["rows"], twin["rows_meeting_goals"]) == (2, 1)
    assert twin["limits_within_3pct"] is True
    assert twin["latency_within_goals"] is False
    assert twin["worst_latency_error"]["p99"] == {
        "error_pct": 32.35,
        "row": "gp3:100 std-latency-4k-qd1 twin read",
        "measured_ms": 4.5,
    }
    assert twin["missed"] == ["gp3:100 std-latency-4k-qd1 twin"]
    assert twin["worst_limit"] == {"row": "gp3:100 std-randread-4k twin", "ratio": 0.997}
    assert throttle["rows_meeting_goals"] == 0
    assert throttle["worst_latency_error"]["p50"]["error_pct"] == -97.58
    assert twin["max_cpu_pressure_some_pct"] == 12.5


def test_busy_rows_are_their_own_column() -> None:
    busy = [{**row, "load": "busy", "column": "twin busy"} for row in ROWS if row["emulator"] == "twin"]
    summary = summarize(ROWS + busy)
    assert set(summary) == set(summarize(ROWS)) | {"twin busy"}
    assert summary["twin busy"]["rows"] == summary["twin"]["rows"]
    assert all(name.endswith(" twin busy") for name in summary["twin busy"]["missed"])


def test_goals_name_the_parts_that_did_not_run() -> None:
    summary = summarize(ROWS)
    prewarm = [
        {"volume": "gp3:100", "emulator": "twin", "method": "dd", "ratio": 0.90},
        {"volume": "gp3:100", "emulator": "twin", "method": "fio", "ratio": 0.97},
    ]
    best = best_prewarm(prewarm)
    assert best[("gp3:100", "twin")]["method"] == "fio"
    knees = [{"emulator": "twin", "error_pct": 4.0}]
    goals = emulator_goals("twin", summary, best, knees)
    assert goals == {
        "profiles_within_3pct": True,
        "latency_within_goals": False,
        "rows_meeting_goals": "1/2",
        "prewarm_best_at_least_95pct": True,
        "knee_within_10pct": True,
    }
    assert emulator_goals("throttle", summary, best, [])["knee_within_10pct"] is None


def test_the_twins_cpu_summary_names_its_costliest_step() -> None:
    runs = {
        "twin": {"twin_cpu": [{"pct_of_one_core_per_1000_iops": 10.5}]},
        "twin busy": {"twin_cpu": [{"pct_of_one_core_per_1000_iops": 12.0}]},
        "throttle": {},
    }
    summary = twin_cpu_summary([{"volume": "gp3:100", "runs": runs}], ROWS)
    assert summary["runs"] == [
        {"volume": "gp3:100", "column": "twin", "pct_of_one_core_per_1000_iops": 10.5},
        {"volume": "gp3:100", "column": "twin busy", "pct_of_one_core_per_1000_iops": 12.0},
    ]
    assert summary["costliest_step_per_1000_iops"]["row"] == "gp3:100 std-latency-4k-qd1 twin"
    lines = table(ROWS)
    assert len(lines) == 1 + 3
    assert "+32.4%" in lines[2] and "9.1" in lines[2]

"""extract_series: fio's 1 s logs of an agent output directory into a small document, never raising."""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path
from typing import Any

import pytest

from storagebench.analysis.series import MAX_POINTS, MAX_TOTAL_POINTS, downsample, extract_series
from storagebench.results.fio_logs import read_timeseries

FIO_LOGS = Path(__file__).resolve().parents[2] / "data" / "fio" / "timeseries"


def phase(step_id: str, name: str = "run", status: str = "ok", **extra: Any) -> dict[str, Any]:
    return {
        "name": name,
        "engine": "fio",
        "dir": f"steps/{step_id}/{name}",
        "status": status,
        "started_at": "2026-11-21T03:00:00Z",
        **extra,
    }


def step(
    step_id: str, *phases: dict[str, Any], workload: str = "std-randread-4k", repetition: int = 1
) -> dict[str, Any]:
    return {
        "id": step_id,
        "workload": workload,
        "profile": workload,
        "variant": {"iodepth": 4},
        "repetition": repetition,
        "target": "ebs0",
        "status": "ok",
        "phases": list(phases) or [phase(step_id)],
    }


def output(root: Path, steps: list[dict[str, Any]]) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    manifest = {"manifest_version": 1, "config_id": "c1", "run_id": "r1", "steps": steps}
    (root / "manifest.json").write_text(json.dumps(manifest))
    return root


def write_log(
    directory: Path, name: str, values: list[float], direction: int = 0, every_ms: int = 1000
) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    lines = [f"{(i + 1) * every_ms}, {v:g}, {direction}, 4096, 0" for i, v in enumerate(values)]
    (directory / name).write_text("\n".join(lines) + "\n")


def test_the_real_fio_logs_become_per_direction_series_summed_over_jobs(tmp_path: Path) -> None:
    root = output(tmp_path / "out", [step("s1")])
    shutil.copytree(FIO_LOGS, root / "steps" / "s1" / "run" / "ts")
    document = extract_series(root)
    assert document["version"] == 1 and document["problems"] == []
    expected = read_timeseries(root / "steps" / "s1" / "run" / "ts")
    assert [e["direction"] for e in document["series"]] == ["read", "write"]
    for entry in document["series"]:
        assert entry | {"iops": None, "bw_mibps": None} == {
            "step_id": "s1",
            "target_id": "ebs0",
            "workload": "std-randread-4k",
            "profile": "std-randread-4k",
            "variant": {"iodepth": 4},
            "repetition": 1,
            "phase": "run",
            "direction": entry["direction"],
            "started_at": "2026-11-21T03:00:00Z",
            "t0_s": 1,
            "interval_s": 1,
            "iops": None,
            "bw_mibps": None,
            "knee_s": None,
        }
        iops = [v for _, v in expected.iops[entry["direction"]]]
        bw = [v for _, v in expected.bw_mibps[entry["direction"]]]
        assert entry["iops"] == pytest.approx(iops, rel=5e-4)  # 4 significant digits
        assert entry["bw_mibps"] == pytest.approx(bw, rel=5e-4)
    json.dumps(document, allow_nan=False)


def test_a_burst_knee_is_found_on_the_total_and_set_on_every_direction(tmp_path: Path) -> None:
    root = output(tmp_path / "out", [step("s1")])
    logs = root / "steps" / "s1" / "run" / "ts"
    write_log(logs, "job_iops.1.log", [1500.0] * 20 + [150.0] * 20, direction=0)
    write_log(logs, "job_iops.2.log", [1500.0] * 20 + [150.0] * 20, direction=1)
    write_log(logs, "job_bw.1.log", [6000.0] * 40, direction=0)
    document = extract_series(root)
    knees = {e["direction"]: e["knee_s"] for e in document["series"]}
    assert knees == {"read": 21.0, "write": 21.0}
    read = next(e for e in document["series"] if e["direction"] == "read")
    assert read["bw_mibps"] == pytest.approx([6000 / 1024] * 40, rel=5e-4)  # KiB/s -> MiB/s
    write = next(e for e in document["series"] if e["direction"] == "write")
    assert write["bw_mibps"] == [None] * 40  # no write bandwidth was logged


def test_a_bad_log_costs_only_itself(tmp_path: Path) -> None:
    root = output(tmp_path / "out", [step("s1"), step("s2", repetition=2)])
    write_log(root / "steps" / "s1" / "run" / "ts", "job_iops.1.log", [100.0] * 5)
    (root / "steps" / "s1" / "run" / "ts" / "job_iops.2.log").write_text("1000, lots, 0, 4096, 0\n")
    write_log(root / "steps" / "s2" / "run" / "ts", "job_iops.1.log", [200.0] * 5)
    document = extract_series(root)
    assert [(e["step_id"], e["iops"]) for e in document["series"]] == [("s1", [100] * 5), ("s2", [200] * 5)]
    (problem,) = document["problems"]
    assert problem.startswith("step s1 phase run:") and "job_iops.2.log" in problem and "line 1" in problem


def test_phases_without_logs_failed_phases_and_other_engines_are_skipped(tmp_path: Path) -> None:
    steps = [
        step("no-logs"),
        step("failed", phase("failed", status="failed")),
        step("dd", {**phase("dd"), "engine": "dd"}),
    ]
    root = output(tmp_path / "out", steps)
    write_log(root / "steps" / "failed" / "run" / "ts", "job_iops.1.log", [1.0] * 5)
    write_log(root / "steps" / "dd" / "run" / "ts", "job_iops.1.log", [1.0] * 5)
    assert extract_series(root) == {"version": 1, "series": [], "problems": [], "environment": {}}


def test_bad_output_is_a_problem_never_an_exception(tmp_path: Path) -> None:
    missing = extract_series(tmp_path / "nothing")
    assert missing["series"] == [] and "manifest.json" in missing["problems"][0]
    root = output(tmp_path / "out", [step("s1", phase("s1", dir="../../etc")), {"id": "x", "phases": "no"}])
    document = extract_series(root)
    assert document["series"] == []
    assert any("not inside the output directory" in p for p in document["problems"])
    assert any("steps[1]" in p for p in document["problems"])
    bw_only = output(tmp_path / "bw", [step("s1")])
    write_log(bw_only / "steps" / "s1" / "run" / "ts", "job_bw.1.log", [1.0] * 3)
    assert extract_series(bw_only)["problems"] == ["step s1 phase run: bandwidth logs but no IOPS logs"]


def test_downsample_keeps_window_means_and_gaps() -> None:
    assert downsample([1.0, 3.0, None, 5.0, None, None, 7.0], 2) == [2.0, 5.0, None, 7.0]
    assert downsample([1.0, 2.0], 1) == [1.0, 2.0]
    with pytest.raises(ValueError, match="at least 1"):
        downsample([1.0], 0)


def test_a_three_hour_run_stays_small(tmp_path: Path) -> None:
    """12 phases of 15 minutes, randrw (two directions), two jobs each: 3 hours of 1 s logs."""
    steps = [step(f"s{i:02d}", workload="fio-randrw-4k-25read", repetition=i % 3 + 1) for i in range(12)]
    root = output(tmp_path / "out", steps)
    seconds = 15 * 60
    for i in range(12):
        logs = root / "steps" / f"s{i:02d}" / "run" / "ts"
        for job in (1, 2):
            for direction in (0, 1):
                values = [1234.567 + 100 * math.sin(t / 7) for t in range(seconds)]
                suffix = f"{job}{direction}"
                write_log(logs, f"j{suffix}_iops.{job}.log", values, direction)
                write_log(logs, f"j{suffix}_bw.{job}.log", [v * 4 for v in values], direction)
    document = extract_series(root)
    text = json.dumps(document, separators=(",", ":"))
    assert len(document["series"]) == 24 and document["problems"] == []
    assert len(text.encode()) < 350_000, len(text)
    total = sum(len(e["iops"]) for e in document["series"])
    assert total <= MAX_TOTAL_POINTS
    for entry in document["series"]:
        assert len(entry["iops"]) <= MAX_POINTS and len(entry["iops"]) == len(entry["bw_mibps"])
        interval = entry["interval_s"]
        assert interval == math.ceil(24 * seconds / MAX_TOTAL_POINTS)
        # each point is the mean of its window of 1 s buckets (two jobs summed)
        first = [2 * (1234.567 + 100 * math.sin(t / 7)) for t in range(interval)]
        assert entry["iops"][0] == pytest.approx(sum(first) / interval, rel=5e-4)


def test_the_series_document_keeps_what_the_agent_ran_on(tmp_path: Path) -> None:
    root = output(tmp_path / "out", [step("no-logs")])
    manifest = json.loads((root / "manifest.json").read_text())
    manifest["system"] = {
        "fio_version": "fio-3.36",
        "kernel": "6.8.0-1009-aws",
        "os": None,
        "agent_version": "0.9.0",
        "instance": {"instanceType": "c6i.4xlarge", "imageId": "ami-0abc", "region": "us-east-1"},
    }
    (root / "manifest.json").write_text(json.dumps(manifest))
    assert extract_series(root)["environment"] == {
        "fio_version": "fio-3.36",
        "kernel": "6.8.0-1009-aws",
        "agent_version": "0.9.0",
        "instance_type": "c6i.4xlarge",
        "image_id": "ami-0abc",
    }

"""Time series and the report from a real agent run: fio's logs on a directory target, through
``analysis.series.extract_series`` and ``results.collect`` into the HTML, Markdown and CSV report."""

from __future__ import annotations

import csv
import io
from pathlib import Path
from typing import Any

import pytest
from agent_plans import fio_step

from storagebench.analysis.series import extract_series
from storagebench.report import build_report, render_csv, render_html, render_markdown
from storagebench.results.collect import collect
from storagebench.results.fio_logs import read_timeseries

pytestmark = pytest.mark.fio


def test_series_of_a_real_run_feed_the_report(agent_env: Any, tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    target = {"id": "here", "kind": "directory", "path": str(data)}
    steps = []
    for repetition in (1, 2):
        step = fio_step(
            f"s-randrw-r{repetition}",
            "here",
            {
                "job": {
                    "rw": "randrw",
                    "rwmixread": 50,
                    "bs": "4k",
                    "size": "4M",
                    "iodepth": 4,
                    "runtime": 3,
                    "time_based": 1,
                    "numjobs": 2,
                }
            },
            ioengine="libaio",
            direct=1,
        )
        step.update(workload="std-mixed-16k-70read", profile="std-mixed-16k-70read", repetition=repetition)
        steps.append(step)
    code, manifest = agent_env.run(agent_env.plan([target], steps))
    assert code == 0, manifest["error"]

    document = extract_series(agent_env.out)
    assert document["problems"] == []
    entries = document["series"]
    assert sorted((e["step_id"], e["direction"]) for e in entries) == [
        ("s-randrw-r1", "read"),
        ("s-randrw-r1", "write"),
        ("s-randrw-r2", "read"),
        ("s-randrw-r2", "write"),
    ]
    for entry in entries:
        logged = read_timeseries(agent_env.phase_dir(entry["step_id"], "p") / "ts")
        seconds = [t for t, _ in logged.iops[entry["direction"]]]
        assert entry["t0_s"] == min(seconds) and entry["interval_s"] == 1
        assert 2 <= len(entry["iops"]) <= 5  # a 3 s phase
        assert all(v is None or v > 0 for v in entry["iops"])
        assert entry["workload"] == "std-mixed-16k-70read" and entry["target_id"] == "here"
        assert entry["knee_s"] is None  # a directory has no burst bucket

    collection = collect(agent_env.out)
    assert collection.problems == [] and collection.records
    stored = {
        "run": {"run_id": agent_env.run_id, "suite": "local", "status": "SUCCEEDED", "configs": ["c1"]},
        "configs": [],
        "results": [
            {"config_id": r.config_id, "record": r.model_dump(mode="json")} for r in collection.records
        ],
    }
    report = build_report(stored, series={"c1": document})
    (chart,) = report.series
    assert [line.label for line in chart.lines] == ["repetition 1", "repetition 2"]
    (cell,) = report.configs[0].cells
    assert cell.value is not None and cell.value.n == 2  # IOPS, read+write total, two repetitions
    html = render_html(report)
    assert html.count('class="series-line"') == 2 and "directory:unthrottled" in html
    rows = list(csv.DictReader(io.StringIO(render_csv(report))))
    assert {r["direction"] for r in rows} == {"read", "write", "mixed"}
    assert agent_env.run_id in render_markdown(report)
    agent_env.assert_clean()

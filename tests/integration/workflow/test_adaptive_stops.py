"""How repetitions stopped, end to end: a local run (a directory target) with an adaptive series and
a fio workload under fio's steady-state detection. The agent decides the series and records it, and
fio its verdict; Collect reads both into the config's collect summary without a problem; the stored
document gives them to ``results --run``, the API's run document and the report alike."""

from __future__ import annotations

import pytest

from storagebench.api.run_view import config_progress
from storagebench.report import build_report, render_markdown
from storagebench.store.models import decode_run
from storagebench.store.repetitions import config_repetitions

from .conftest import Bench, command, request

pytestmark = [pytest.mark.root, pytest.mark.slow]


def test_the_series_and_the_verdict_reach_the_store_and_the_report(bench: Bench) -> None:
    document = request(
        "wf-adaptive",
        [bench.local("adaptive")],
        workloads=[
            # two sleeps of 0.3 s are within ±50 % of each other at once: precision after min
            {**command("tick", "sleep 0.3"), "repetitions": {"min": 2, "max": 4, "ci_pct": 50}},
            {
                "profile": "std-randread-4k",
                "scale": 0.01,
                "repetitions": 1,
                "steady_state": {
                    "metric": "iops",
                    "criterion": "deviation",
                    "threshold_pct": 50,
                    "duration_s": 10,
                },
            },
        ],
    )
    result = bench.run(document)
    assert result.status == "SUCCEEDED", result.execution
    stored = bench.store(result.run_id)
    (config,) = stored["configs"]
    collected = config["state"]["collected"]
    assert collected["problems"] == [], collected["problems"]
    (series,) = collected["series"]
    assert (series["series"], series["metric"], series["phase"]) == ("tick.main", "real_s", "run")
    assert (series["stopped"], series["spent"]) == ("precision", 2), series
    assert series["reason"].startswith("precision reached (±")
    verdicts = collected["steady_state"]  # one per fio job of the workload's phases that asked
    assert verdicts, collected
    assert {(v["criterion"], v["duration_s"], v["ramp_s"]) for v in verdicts} == {("iops:50%", 10, 0)}, (
        verdicts
    )

    decoded = decode_run(stored)
    (stops,), unread = config_repetitions(decoded.configs)
    assert unread == [] and stops.config_id == "adaptive"
    progress = config_progress(config, stops)  # the API's run document
    assert [s.series for s in progress.series] == ["tick.main"]
    assert [v.model_dump(mode="json") for v in progress.steady_state] == verdicts

    report = build_report(stored)
    assert [s.config_id for s in report.repetition_stops] == ["adaptive"]
    markdown = render_markdown(report)
    assert "## Adaptive repetitions and steady state" in markdown
    assert "| adaptive | tick.main | run time | 2 | 2..4, &lt; 50 % |" in markdown

"""How repetitions stopped, from the agent's record to what the store, the API and the report read:
the agent's own series record reads as a ``SeriesOutcome``, and a stored document's entries are read
one by one, an unreadable one named without hiding the others."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from storagebench.agent.adaptive import SeriesTracker
from storagebench.core.series import ConfigRepetitions, read_repetitions
from storagebench.protocol.adaptive import STOP_MAX, STOP_PRECISION
from storagebench.results.series import read_series, steady_states


def _tracker(real_s: list[float], minimum: int = 2, maximum: int = 4, ci_pct: float = 5.0) -> SeriesTracker:
    """A series of a command's wall time, fed the phase results the runner would hand it."""
    policy = {"series": "build.dir", "min": minimum, "max": maximum, "ci_pct": ci_pct}
    step = {
        "id": "build.dir.r1",
        "workload": "build",
        "target": "dir",
        "variant": {"jobs": 4},
        "adaptive": {**policy, "metric": "real_s", "phase": "run"},
        "phases": [{"name": "run", "engine": "command"}],
    }
    tracker = SeriesTracker(step)
    for seconds in real_s:
        result = {
            "phases": [{"name": "run", "engine": "command", "status": "ok", "timing": {"real_s": seconds}}]
        }
        tracker.add(step, result, "/nonexistent")
    return tracker


def test_the_agents_series_record_reads_as_an_outcome() -> None:
    tracker = _tracker([10.0, 10.1, 10.05])
    assert tracker.stopped == STOP_PRECISION
    series, problems = read_series({"adaptive": [dict(tracker.record())]})
    assert problems == []
    (outcome,) = series
    assert (outcome.series, outcome.phase, outcome.metric, outcome.spent) == ("build.dir", "run", "real_s", 3)
    assert outcome.variant == {"jobs": 4}
    assert outcome.bounds == "2..4, < 5 %"
    assert outcome.reached is not None and outcome.reached.startswith("±")
    assert outcome.decision == outcome.reason and outcome.reason.startswith("precision reached (±")


def test_a_series_the_run_cut_short_says_so() -> None:
    tracker = _tracker([10.0, 14.0], maximum=6, ci_pct=1.0)
    assert tracker.stopped is None
    (outcome,), _ = read_series({"adaptive": [dict(tracker.record())]})
    assert outcome.decision.startswith("undecided: the run ended first (running (±")


def test_a_series_without_two_values_has_no_precision() -> None:
    tracker = _tracker([10.0], minimum=2, maximum=2)
    tracker.add(
        {"adaptive": tracker.policy, "phases": []},
        {"phases": [{"name": "run", "status": "failed", "error": "exit 1"}]},
        "/nonexistent",
    )
    assert tracker.stopped == STOP_MAX
    (outcome,), _ = read_series({"adaptive": [dict(tracker.record())]})
    assert outcome.reached is None and outcome.spent == 2
    assert outcome.reason == "max reached (no interval from 1 value(s) after 2, 1 without a value)"


def _series_entry(name: str) -> dict[str, Any]:
    return dict(_tracker([10.0, 10.1, 10.05]).record()) | {"series": name}


def test_stored_entries_are_read_one_by_one_and_the_unreadable_named() -> None:
    verdict = {
        "step": "s-r1",
        "phase": "run",
        "job": "j",
        "criterion": "iops_slope:0.3%",
        "attained": False,
        "duration_s": 60,
    }
    documents = [
        ("gp3", {"series": [_series_entry("a.dir"), {"series": "b.dir"}], "steady_state": [verdict]}),
        ("gp2", {"series": [], "steady_state": []}),
        ("io1", {"series": "not a list", "status": "ok"}),
        ("st1", {}),
    ]
    found, problems = read_repetitions(documents)
    assert [c.config_id for c in found] == ["gp3"]
    (gp3,) = found
    assert [s.series for s in gp3.series] == ["a.dir"]
    assert gp3.steady_state[0].text == "s-r1 run j: steady state not attained (iops_slope:0.3% over 60 s)"
    assert problems == [
        "gp3: series[1]: workload: Field required",
        "io1: series: expected a list, got str",
    ]


def test_an_empty_document_reads_as_nothing_recorded() -> None:
    outcome, problems = ConfigRepetitions.read("gp3", {})
    assert outcome.empty and problems == []


def test_fios_verdict_reads_the_criterion_the_plan_put_in_the_global_section(tmp_path: Path) -> None:
    # fio 3.x's JSON for a job file whose [global] holds ss=, ss_dur=, ss_ramp= (as the plan writes it)
    (tmp_path / "p").mkdir()
    document = {
        "global options": {
            "steadystate": "iops:50%",
            "steadystate_duration": "10",
            "steadystate_ramp_time": "2",
        },
        "jobs": [
            {
                "jobname": "j",
                "job options": {"rw": "randread", "bs": "4k"},
                "job_runtime": 3000,
                "steadystate": {
                    "ss": "iops:50.000000%",
                    "duration": 10,
                    "attained": 0,
                    "criterion": "0.000000%",
                },
            },
            {"jobname": "no-ss", "job options": {}, "job_runtime": 3000},
        ],
    }
    (tmp_path / "p" / "fio.json").write_text(json.dumps(document), encoding="utf-8")
    verdicts, problems = steady_states(tmp_path, "w.main.r1", {"name": "run", "dir": "p"})
    assert problems == []
    (verdict,) = verdicts
    assert (verdict.criterion, verdict.ramp_s, verdict.duration_s, verdict.runtime_s) == (
        "iops:50%",
        2.0,
        10.0,
        3.0,
    )
    assert verdict.text == "w.main.r1 run j: steady state not attained (iops:50% over 10 s after 3 s)"

"""Trends with change points, and sweeps as latency-vs-load curves, in the report model, the HTML
and the Markdown; and the history ``report_inputs`` reads for them."""

from __future__ import annotations

import copy
import re
from typing import Any

import pytest
from tests.support import report_runs as fx

from storagebench.core.errors import WorkflowError
from storagebench.report import Report, build_report, render_html, render_markdown
from storagebench.workflow.run_outputs import report_history


@pytest.fixture(scope="module")
def report() -> Report:
    return build_report(**fx.everything_inputs())


def _trend(report: Report, config_id: str, workload: str) -> Any:
    return next(t for t in report.trends if t.config_id == config_id and t.workload == workload)


def test_each_headline_number_has_its_history_this_run_last(report: Report) -> None:
    assert report.trend_runs == fx.HISTORY_RUNS
    missed_sla = ("gp2", fx.SLA)  # not met even at the lowest rate: no IOPS to follow
    assert {(t.config_id, t.workload) for t in report.trends} == {
        (cid, w.id) for cid in ("gp2", "gp3", "io1") for w in report.workloads if (cid, w.id) != missed_sla
    }
    trend = _trend(report, "gp3", "std-randread-4k")
    assert len(trend.points) == fx.HISTORY_RUNS + 1
    assert [p.is_current for p in trend.points] == [False] * fx.HISTORY_RUNS + [True]
    assert trend.points[-1].run_id == fx.RUN_ID
    assert [p.started_at for p in trend.points] == sorted(p.started_at for p in trend.points)
    cell = next(
        c
        for row in report.configs
        if row.config_id == "gp3"
        for c in row.cells
        if c.workload == trend.workload
    )
    assert cell.value is not None and trend.points[-1].value == pytest.approx(cell.value.mean)
    assert trend.band is not None and trend.band[0] < trend.points[-1].value < trend.band[1]


def test_a_step_in_the_history_is_a_change_point_with_its_possible_cause(report: Report) -> None:
    trend = _trend(report, "io1", "std-randread-4k")
    (change,) = trend.changes
    assert change.index == fx.HISTORY_STEP - 1
    assert change.run_id == trend.points[fx.HISTORY_STEP - 1].run_id
    assert change.delta_pct == pytest.approx(25.0, abs=1.5)
    assert change.causes == ["fio 3.35 -> 3.36"]
    assert change.p_value <= 0.01
    # latency did not move: no change point, but the fio change is not mixed in silently
    latency = _trend(report, "io1", "std-latency-4k-qd1")
    assert latency.changes == []
    assert any(note.startswith("fio 3.35 -> 3.36 from run ") for note in latency.notes)


def test_an_instance_generation_change_is_named() -> None:
    inputs = fx.everything_inputs()
    history = copy.deepcopy(inputs["history"])
    for entry in history["runs"]:
        started = entry["stored"]["run"]["started_at"]
        if started < f"2026-11-{fx.HISTORY_STEP + 5:02d}":  # the runs before the step
            run = entry["stored"]["run"]  # a new request each: the runs share the fixtures' one
            configs = [{**c, "instance_type": "c4.4xlarge"} for c in run["request"]["configs"]]
            run["request"] = {**run["request"], "configs": configs}
    report = build_report(**{**inputs, "history": history})
    (change,) = _trend(report, "io1", "std-randread-4k").changes
    assert change.causes == ["fio 3.35 -> 3.36", "instance generation c4 -> c5 (c4.4xlarge -> c5.4xlarge)"]


def test_with_fewer_than_two_earlier_runs_there_is_no_history_yet() -> None:
    inputs = fx.full_report_inputs()
    report = build_report(**{**inputs, "history": fx.history(runs=1)})
    assert report.trends and not any(t.has_history for t in report.trends)
    assert all(t.changes == [] and t.band is None for t in report.trends)
    html, markdown = render_html(report), render_markdown(report)
    assert 'data-chart="trend"' not in html
    assert html.count("no history yet: 1 earlier run(s) of the suite measured this") == len(report.trends)
    assert "no history yet: 1 earlier run(s)" in markdown
    assert build_report(**inputs).trend_runs == 0


def test_sweeps_are_curves_with_their_knee_and_scaling(report: Report) -> None:
    assert [c.config_id for c in report.curves] == ["gp2", "gp3", "io1"]
    curve = report.curves[2]
    assert curve.workload == fx.SWEEP and curve.axis == "iodepth" and curve.axis_label == "queue depth"
    assert [p.load for p in curve.points] == list(fx.SWEEP_DEPTHS)
    assert curve.points[0].iops == pytest.approx(2000.0 * (1.0 + 0.97) / 2)  # the repetitions' mean
    assert curve.knee is not None and curve.knee.load == 2 and curve.knee.next_load == 4
    assert curve.p95_per_doubling is not None and 1.7 < curve.p95_per_doubling < 2.0
    assert curve.scaling == "saturated"
    assert curve.measurement == "read"


def test_the_html_draws_trends_and_curves_with_both_axes_titled(report: Report) -> None:
    html = render_html(report)
    charts = re.findall(r'<svg [^>]*data-chart="(trend|curve-iops|curve-latency)".*?</svg>', html, re.S)
    # the sweep is new in this run: its three trends have no history yet
    assert charts.count("trend") == sum(1 for t in report.trends if t.has_history) == 12
    assert charts.count("curve-iops") == charts.count("curve-latency") == 3
    for svg in re.findall(r'<svg [^>]*data-chart="(?:trend|curve-[a-z]+)".*?</svg>', html, re.S):
        assert '<g class="axis axis-x">' in svg and '<g class="axis axis-y">' in svg
        assert svg.count('class="axis-title"') == 2
    assert html.count('class="change"') == 3
    assert html.count('class="current"') == 12
    assert html.count('class="load-knee"') == 6
    assert html.count('class="band"') == 12
    assert "possible cause: fio 3.35 -&gt; 3.36" in html
    assert '<section id="curves"><h2>Latency against load</h2>' in html
    assert '<section id="trends"><h2>Trends and change points</h2>' in html


def test_the_markdown_lists_curves_and_change_points(report: Report) -> None:
    markdown = render_markdown(report)
    curves = markdown[markdown.index("## Latency against load") :]
    assert "| queue depth | IOPS | p50 ms | p95 ms | p99 ms | n |" in curves
    assert "knee (queue depth) at 2" in curves
    trends = markdown[markdown.index("## Trends and change points") :]
    assert trends.count("| io1 |") == 3
    assert "possible cause: fio 3.35 -&gt; 3.36" in trends


# ------------------------------------------------------------------ reading the history


class _Store:
    """The two reads ``report_history`` makes, over the fixtures' earlier runs."""

    def __init__(self, fail_on: str | None = None) -> None:
        self.runs = {e["stored"]["run"]["run_id"]: e["stored"] for e in fx.history()["runs"]}
        self.fail_on = fail_on
        self.read: list[str] = []

    def list_runs_page(
        self, suite: str, limit: int = 10, cursor: str | None = None
    ) -> tuple[list[Any], None]:
        runs = sorted((s["run"] for s in self.runs.values()), key=lambda r: r["started_at"], reverse=True)
        return [{"run_id": r["run_id"], "started_at": r["started_at"]} for r in runs], None

    def get_run(self, run_id: str) -> dict[str, Any]:
        if run_id == self.fail_on:
            raise WorkflowError(f"throttled reading {run_id}")
        self.read.append(run_id)
        return self.runs[run_id]


class _Artifacts:
    def get_json(self, key: str) -> Any:
        if key.endswith("/io1/series.json"):
            return {"version": 1, "series": [], "problems": [], "environment": {"fio_version": "fio-3.36"}}
        raise KeyError(key)


THIS_RUN = {"run_id": "r-20261125", "suite": "nightly-ebs", "started_at": "2026-11-25T03:00:00Z"}


def test_the_history_is_the_suites_earlier_runs_newest_first_with_their_environments() -> None:
    store = _Store()
    history = report_history(THIS_RUN, _Artifacts(), store, runs=4)  # type: ignore[arg-type]
    assert history["requested"] == 4 and history["notes"] == []
    assert store.read == [f"r-202611{run + 5:02d}-0300-nightly" for run in range(11, 7, -1)]
    assert [e["environment"] for e in history["runs"]] == [{}] * 4  # fixtures' config items name no run


def test_a_store_error_or_the_budget_ends_the_history_with_a_note() -> None:
    failing = _Store(fail_on="r-20261114-0300-nightly")
    history = report_history(THIS_RUN, _Artifacts(), failing, runs=5)  # type: ignore[arg-type]
    assert len(history["runs"]) == 2
    assert history["notes"] == [
        "trends: the history could not be read: WorkflowError: throttled reading r-20261114-0300-nightly"
    ]
    ticks = iter([0.0, 0.0, 0.0, 31.0])
    slow = report_history(THIS_RUN, _Artifacts(), _Store(), runs=5, clock=lambda: next(ticks))  # type: ignore[arg-type]
    assert len(slow["runs"]) == 2
    assert slow["notes"] == ["trends: the 30 s budget ran out after 2 of 5 earlier runs"]
    unnamed = report_history({"run_id": "r"}, _Artifacts(), _Store())  # type: ignore[arg-type]
    assert unnamed["runs"] == [] and unnamed["notes"] == [
        "trends: the run names no suite or start time, so it has no history"
    ]

"""``GET /runs/{id}`` carries how each config's repetitions stopped (adaptive series, fio's
steady-state verdicts), read from the config's collect summary as the workflow stored it, on moto;
``results --run --stack`` renders them from that document with the local view's renderer."""

from __future__ import annotations

from typing import Any

from tests.support.api_cli import cli, hooks, served  # noqa: F401 - the served API and its hooks are fixtures
from tests.support.api_events import call
from tests.support.api_stack import REGION, Stack
from tests.support.runs import work_item

from storagebench.agent.adaptive import SeriesTracker
from storagebench.api.models import RunDetail
from storagebench.core.series import SeriesOutcome, SteadyStateOutcome
from storagebench.core.state import CollectSummary, ConfigState, Resources

STARTED = "2030-01-02T03:04:05Z"


def _series(real_s: list[float]) -> SeriesOutcome:
    """A series of a command's wall time, as the agent's tracker records it."""
    step = {
        "workload": "build",
        "target": "dir",
        "adaptive": {
            "series": "build.dir",
            "min": 2,
            "max": 4,
            "ci_pct": 5.0,
            "metric": "real_s",
            "phase": "run",
        },
        "phases": [{"name": "run", "engine": "command"}],
    }
    tracker = SeriesTracker(step)
    for seconds in real_s:
        phase = {"name": "run", "engine": "command", "status": "ok", "timing": {"real_s": seconds}}
        tracker.add(step, {"phases": [phase]}, "/nonexistent")
    return SeriesOutcome.model_validate(dict(tracker.record()))


VERDICT = SteadyStateOutcome(
    step="build.dir.r1",
    phase="run",
    job="seq",
    criterion="bw_slope:0.5%",
    attained=True,
    duration_s=30,
    runtime_s=75,
)


def _state(config_id: str, collected: CollectSummary | None) -> ConfigState:
    item = work_item("demo-1", config_id, "local-demo", REGION, STARTED, "2030-01-03T03:04:05Z")
    return ConfigState(
        item=item, resources=Resources(instance_id="i-1", launched_at=STARTED), collected=collected
    )


def _record(stack: Stack) -> list[SeriesOutcome]:
    stack.store.start_run(
        "demo-1", "local-demo", {"name": "local-demo"}, STARTED, "2030-01-03T03:04:05Z", ["gp2", "gp3"]
    )
    series = [_series([10.0, 10.1, 10.05]), _series([10.0, 13.0, 9.0, 12.0])]
    summary = CollectSummary(status="ok", records=7, series=series, steady_state=[VERDICT])
    stack.store.put_config(_state("gp3", summary), "COLLECTED")
    stack.store.put_config(_state("gp2", None), "RUNNING")  # not collected yet: nothing to show
    return series


def test_the_run_document_carries_each_configs_series_and_verdicts(stack: Stack) -> None:
    series = _record(stack)
    status, body, _ = call(stack.handler, "GET", "/runs/demo-1")
    assert status == 200, body
    RunDetail.model_validate(body)  # the document is the model the OpenAPI document describes
    configs = {c["config_id"]: c for c in body["configs"]}
    assert configs["gp2"]["series"] == [] and configs["gp2"]["steady_state"] == []
    gp3 = configs["gp3"]
    assert [SeriesOutcome.model_validate(s) for s in gp3["series"]] == series
    assert [(s["stopped"], s["spent"]) for s in gp3["series"]] == [("precision", 3), ("max", 4)]
    assert gp3["steady_state"] == [VERDICT.model_dump(mode="json")]
    assert body["notes"] == []


def test_results_on_a_stack_shows_them_as_a_local_run_does(stack: Stack, served: tuple[str, Any]) -> None:  # noqa: F811
    _record(stack)
    url, signed = served
    result = cli("results", "--run", "demo-1", "--api-url", url, "--region", REGION)
    assert result.exit_code == 0, result.output
    words = " ".join(result.stdout.replace("│", " ").split())
    assert "adaptive repetitions" in words
    assert "precision reached (±" in words and "max reached (±" in words
    assert "gp3: build.dir.r1 run seq: steady state attained (bw_slope:0.5% over 30 s after 75 s)" in words
    assert signed.problems == []

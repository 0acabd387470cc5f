"""Issue 11 at the API: DELETE /runs/{id} records STOPPING before it stops the execution and tells
SweepRun when it stopped; POST /runs cannot carry a schedule's occurrence (the claim is the Scheduler's)."""

from __future__ import annotations

import json
from typing import Any

from tests.support.api_events import call
from tests.support.api_stack import EVENTS, Stack


def demo() -> dict[str, Any]:
    document: dict[str, Any] = json.loads((EVENTS / "local-demo.json").read_text(encoding="utf-8"))
    return document


def record_run(stack: Stack, run_id: str) -> None:
    stack.store.start_run(
        run_id, "local-demo", {"name": "local-demo"}, "2030-01-02T03:04:05Z", "2030-01-03T03:04:05Z", ["gp2"]
    )


def test_the_stop_records_stopping_before_the_execution_stops(stack: Stack, monkeypatch: Any) -> None:
    _, created, _ = call(stack.handler, "POST", "/runs", json_body=demo())
    run_id = created["run_id"]
    record_run(stack, run_id)
    seen: list[str | None] = []
    stop = stack.launcher.stop

    def stop_after_looking(run: str, error: str, cause: str) -> None:
        seen.append(stack.store.run_status(run))  # what a Provision finishing now would read
        stop(run, error, cause)

    monkeypatch.setattr(stack.launcher, "stop", stop_after_looking)
    status, body, _ = call(stack.handler, "DELETE", f"/runs/{run_id}")
    assert status == 202 and body["cleanup"] == "started", body
    assert seen == ["STOPPING"]
    (sweep,) = stack.sweeper.calls
    assert sweep["stopped_at"].endswith("Z")  # SweepRun sweeps again from then
    assert stack.store.run_status(run_id) == "STOPPING"  # SweepRun's finish_run makes it FAILED
    assert stack.store.runs_in_progress()[0]["status"] == "STOPPING"  # still in progress meanwhile


def test_a_run_plan_records_while_the_stop_is_under_way_is_stopped_and_swept(
    stack: Stack, monkeypatch: Any
) -> None:
    """The stop read no run, then Plan recorded it and the Map started a Provision before the
    execution stopped: that run is marked STOPPING and swept all the same."""
    _, created, _ = call(stack.handler, "POST", "/runs", json_body=demo())
    run_id = created["run_id"]
    stop = stack.launcher.stop

    def plan_records_first(run: str, error: str, cause: str) -> None:
        record_run(stack, run)
        stop(run, error, cause)

    monkeypatch.setattr(stack.launcher, "stop", plan_records_first)
    status, body, _ = call(stack.handler, "DELETE", f"/runs/{run_id}")
    assert status == 202 and body["cleanup"] == "started", body
    assert stack.store.run_status(run_id) == "STOPPING"
    (sweep,) = stack.sweeper.calls
    assert (sweep["run_id"], sweep["config_ids"], sweep["suite"]) == (run_id, ["gp2"], "local-demo")


def test_a_stopping_run_cannot_be_stopped_twice(stack: Stack) -> None:
    record_run(stack, "gone-1")  # no execution left: the store says STOPPING
    assert stack.store.mark_stopping("gone-1", "2030-01-02T04:00:00Z") is not None
    status, body, _ = call(stack.handler, "DELETE", "/runs/gone-1")
    assert status == 409 and "STOPPING" in body["error"]["message"]
    assert stack.sweeper.calls == []


def test_post_runs_refuses_a_schedules_occurrence(stack: Stack) -> None:
    """Else any caller of POST /runs could claim tonight's occurrence and so cancel the schedule's run."""
    occurrence = {
        "schedule_arn": "arn:aws:scheduler:us-east-1:123456789012:schedule/sb-schedules/nightly",
        "scheduled_time": "2030-01-02T02:00:00Z",
    }
    for path in ("/runs", "/runs?dry_run=true"):
        route, _, query = path.partition("?")
        status, body, _ = call(
            stack.handler,
            "POST",
            route,
            json_body={**demo(), "scheduled": occurrence},
            query=dict([query.split("=")]) if query else None,
        )
        assert status == 422, body
        (detail,) = body["error"]["details"]
        assert detail["field"] == "scheduled" and "schedule" in detail["message"]
    assert stack.launcher.started == []

"""Spot interruptions through the workflow's steps: recorded, measured steps kept, the rest relaunched."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from tests.support import workflow_fakes as wf

from storagebench.core.errors import ConfigInterruptedError, SpotInterruptionError
from storagebench.core.interruption import SPOT_TERMINATION_CODE
from storagebench.core.launch import client_token
from storagebench.core.state import AgentOutcome, ComputeStatus, ConfigState
from storagebench.workflow import interruptions
from storagebench.workflow.interruptions import completed_steps
from storagebench.workflow.steps.check_ready import check_ready
from storagebench.workflow.steps.cleanup import cleanup
from storagebench.workflow.steps.collect import collect
from storagebench.workflow.steps.provision import provision
from storagebench.workflow.steps.record_failure import record_failure
from storagebench.workflow.steps.start_agent import start_agent

StateOf = Callable[..., ConfigState]
NOTICE = {"action": "terminate", "action_time": "2026-11-21T17:10:00Z", "noticed_at": "2026-11-21T17:08:00Z"}


def started(state_of: StateOf, fakes: Any) -> ConfigState:
    state = provision(state_of("alpha"), fakes.services)
    state = check_ready(state, fakes.services)
    return start_agent(state, "token-1", fakes.services)


def planned_steps(fakes: Any, state: ConfigState) -> list[str]:
    plan = fakes.artifacts.get_json(f"{state.item.artifacts_prefix}plan.json")
    return [s["id"] for s in plan["steps"]]


def agent_report(stage: str = "workloads", step: str | None = "x", completed: int = 1) -> dict[str, str]:
    cause = json.dumps({"notice": {**NOTICE, "stage": stage, "step": step}, "completed_steps": completed})
    return {"Error": "SpotInterruptionError", "Cause": cause}


def output(fakes: Any, state: ConfigState, done: list[str], planned: list[str]) -> Path:
    """The interrupted agent's output: the plan it ran, ``done`` steps measured, the next one cut short."""
    directory = wf.agent_output_dir(fakes, state)
    shutil.rmtree(directory, ignore_errors=True)
    wf.write_agent_output(directory, "alpha", [])
    manifest = json.loads((directory / "manifest.json").read_text())
    for position, step_id in enumerate(done):
        phase_dir = directory / "steps" / step_id / "run"
        phase_dir.mkdir(parents=True)
        (phase_dir / "timing.json").write_text(json.dumps({"real_s": 1.0 + position}))
        manifest["steps"].append(
            {
                "id": step_id,
                "workload": "w",
                "profile": "command",
                "variant": {},
                "repetition": position + 1,
                "target": "main",
                "status": "ok",
                "phases": [
                    {"name": "run", "engine": "command", "dir": f"steps/{step_id}/run", "status": "ok"}
                ],
            }
        )
    manifest["status"] = "failed"
    (directory / "manifest.json").write_text(json.dumps(manifest))
    (directory / "plan.json").write_text(json.dumps({"steps": [{"id": s} for s in planned]}))
    return directory


def interrupted_and_collected(state_of: StateOf, fakes: Any, kept: int = 1) -> ConfigState:
    state = started(state_of, fakes)
    planned = planned_steps(fakes, state)
    assert len(planned) > kept
    state = record_failure(state, agent_report(completed=kept), fakes.services)
    output(fakes, state, planned[:kept], planned)
    return collect(state, fakes.services)


def test_the_agents_report_is_recorded_as_an_interruption_not_an_error(state_of: StateOf, fakes: Any) -> None:
    state = record_failure(started(state_of, fakes), agent_report(), fakes.services)
    assert state.errors == []
    [interruption] = state.interruptions
    assert (interruption.attempt, interruption.detected_by, interruption.stage) == (1, "notice", "workloads")
    assert (interruption.action, interruption.action_time) == ("terminate", NOTICE["action_time"])
    assert interruption.relaunched and interruption.instance_id == state.resources.instance_id
    assert state.outcome is not None and state.outcome.status == "failed"
    assert fakes.store.statuses("alpha")[-1] == "INTERRUPTED"


def test_collect_keeps_the_completed_steps_and_names_the_rest(state_of: StateOf, fakes: Any) -> None:
    state = interrupted_and_collected(state_of, fakes, kept=1)
    planned = planned_steps(fakes, state)
    [interruption] = state.interruptions
    assert interruption.steps_kept == planned[:1]
    assert interruption.steps_rerun == planned[1:]
    assert interruption.records_kept == 1 and len(fakes.store.results) == 1


def test_cleanup_releases_then_relaunches_and_provision_starts_the_next_attempt(
    state_of: StateOf, fakes: Any
) -> None:
    state = interrupted_and_collected(state_of, fakes, kept=1)
    planned = planned_steps(fakes, state)
    with pytest.raises(ConfigInterruptedError, match=r"attempt 1 was interrupted .* 1 step\(s\) kept"):
        cleanup(state, fakes.services)
    assert fakes.compute.terminated and fakes.store.statuses("alpha")[-1] == "INTERRUPTED"
    # The state machine catches it back to Provision, with Cleanup's input and the error
    caught = {"Error": "ConfigInterruptedError", "Cause": "attempt 1 was interrupted"}
    relaunched = provision(state.model_copy(update={"interrupted": caught}), fakes.services)
    assert relaunched.item.attempt == 2 and relaunched.interrupted is None
    assert relaunched.resources.instance_id != state.resources.instance_id
    assert fakes.compute.launches[-1].client_token == client_token("run-1", "alpha#attempt2")
    assert relaunched.interruptions == state.interruptions and relaunched.collected is None
    # The relaunch runs only what the first attempt did not measure
    relaunched = start_agent(check_ready(relaunched, fakes.services), "token-2", fakes.services)
    assert planned_steps(fakes, relaunched) == planned[1:]
    # It completes: the config has every planned step, none twice, and says it was interrupted
    relaunched = relaunched.model_copy(update={"outcome": AgentOutcome(status="completed", exit_code=0)})
    directory = output(fakes, relaunched, planned[1:], planned[1:])
    manifest = json.loads((directory / "manifest.json").read_text())
    (directory / "manifest.json").write_text(json.dumps({**manifest, "status": "ok"}))
    result = cleanup(collect(relaunched, fakes.services), fakes.services)
    assert (result.status, result.errors, result.records) == ("succeeded", [], len(planned))
    assert [i.attempt for i in result.interruptions] == [1]


def terminated(reason_code: str, reason: str | None = None) -> ComputeStatus:
    """What EC2 says of an instance terminated for ``reason_code``: checks failed, volumes detached."""
    return ComputeStatus(
        instance_state="terminated",
        status_checks_ok=False,
        volumes_in_use=False,
        reason=reason,
        reason_code=reason_code,
    )


def test_an_instance_reclaimed_before_it_is_ready_is_relaunched(state_of: StateOf, fakes: Any) -> None:
    state = provision(state_of("alpha"), fakes.services)
    fakes.compute.status_value = terminated(
        SPOT_TERMINATION_CODE, reason="Server.SpotInstanceTermination: Spot instance termination"
    )
    with pytest.raises(SpotInterruptionError, match="reclaimed for Spot"):
        check_ready(state, fakes.services)
    caught = {"Error": "SpotInterruptionError", "Cause": "reclaimed"}
    state = record_failure(state, caught, fakes.services)
    [interruption] = state.interruptions
    assert (interruption.stage, interruption.detected_by, interruption.steps_rerun) == (
        "ready",
        "instance-state",
        None,
    )
    with pytest.raises(ConfigInterruptedError, match="every step to run on attempt 2"):
        cleanup(state, fakes.services)


def test_lost_heartbeats_of_a_reclaimed_instance_are_an_interruption(state_of: StateOf, fakes: Any) -> None:
    state = started(state_of, fakes)
    fakes.compute.status_value = terminated(SPOT_TERMINATION_CODE)
    state = record_failure(state, {"Error": "States.HeartbeatTimeout", "Cause": ""}, fakes.services)
    assert state.errors == [] and state.interruptions[0].detected_by == "instance-state"
    assert state.interruptions[0].stage == "agent"


def test_a_user_terminated_instance_stays_a_failure(state_of: StateOf, fakes: Any) -> None:
    state = started(state_of, fakes)
    fakes.compute.status_value = terminated("Client.UserInitiatedShutdown")
    state = record_failure(state, {"Error": "States.HeartbeatTimeout", "Cause": ""}, fakes.services)
    assert state.interruptions == [] and [e.error for e in state.errors] == ["States.HeartbeatTimeout"]


def test_a_notice_once_every_step_is_done_relaunches_nothing(state_of: StateOf, fakes: Any) -> None:
    state = started(state_of, fakes)
    planned = planned_steps(fakes, state)
    state = record_failure(state, agent_report("teardown", None, len(planned)), fakes.services)
    output(fakes, state, planned, planned)
    result = cleanup(collect(state, fakes.services), fakes.services)
    assert result.errors == [] and result.records == len(planned)
    [interruption] = result.interruptions
    assert (interruption.stage, interruption.relaunched, interruption.steps_rerun) == ("teardown", False, [])


def test_past_the_bound_the_config_fails_by_name_and_keeps_what_it_measured(
    state_of: StateOf, fakes: Any
) -> None:
    state = started(state_of, fakes)
    planned = planned_steps(fakes, state)
    last = state.model_copy(
        update={"item": state.item.model_copy(update={"attempt": interruptions.MAX_ATTEMPTS})}
    )
    last = record_failure(last, agent_report(completed=1), fakes.services)
    output(fakes, last, planned[:1], planned)
    result = cleanup(collect(last, fakes.services), fakes.services)
    assert result.status == "failed" and result.records == 1
    [error] = result.errors
    assert error.error == "SpotInterruptionError"
    assert f"interrupted on each of its {interruptions.MAX_ATTEMPTS} attempts" in error.cause
    assert "1 completed step(s) are kept" in error.cause


def test_an_unreadable_notice_is_still_an_interruption(state_of: StateOf, fakes: Any) -> None:
    state = record_failure(
        started(state_of, fakes), {"Error": "SpotInterruptionError", "Cause": "not json"}, fakes.services
    )
    assert state.interruptions[0].stage == "agent" and state.errors == []


def test_the_runs_record_reads_back_what_was_interrupted(state_of: StateOf, fakes: Any) -> None:
    """Finalize's config results carry the interruptions; the store's reader (CLI, report) words them."""
    from storagebench.store.models import ConfigOutcome

    state = record_failure(started(state_of, fakes), agent_report(), fakes.services)
    document = {"config_id": "alpha", "status": "succeeded", "records": 3}
    document["interruptions"] = [i.model_dump(mode="json") for i in state.interruptions]
    [line] = ConfigOutcome.decode(document).interruptions
    assert line.startswith("attempt 1 on on-demand interrupted during workloads (step x) (Spot notice at ")
    assert f"terminate at {NOTICE['action_time']}" in line and line.endswith("relaunched for every step")


def test_a_relaunch_keeps_the_earlier_attempts_series_and_export_rows(state_of: StateOf, fakes: Any) -> None:
    from storagebench.workflow.artifact_keys import export_key

    state = interrupted_and_collected(state_of, fakes, kept=1)
    kept = state.interruptions[0].steps_kept
    second = state.model_copy(update={"item": state.item.model_copy(update={"attempt": 2})})
    earlier = {"series": [{"step_id": kept[0]}, {"step_id": "cut-short"}], "problems": ["a"]}
    later = {"version": 1, "series": [{"step_id": "rerun"}], "problems": []}
    merged = interruptions.merged_series(second, earlier, later)
    assert [e["step_id"] for e in merged["series"]] == [kept[0], "rerun"] and merged["problems"] == ["a"]
    assert interruptions.merged_series(state, earlier, later) is later  # attempt 1: its own only
    assert export_key(second.item) != export_key(state.item)
    assert export_key(second.item).endswith("/alpha.attempt2.jsonl")


def test_the_relaunch_is_a_catch_path_off_the_healthy_one() -> None:
    """Cleanup's ConfigInterruptedError goes back to Provision, caught before the catch-all; no
    Choice is added, so a config never interrupted takes the same 7 transitions."""
    definition = json.loads((Path(__file__).parents[3] / "statemachines" / "benchmark.asl.json").read_text())
    branch = definition["States"]["Configs"]["ItemProcessor"]["States"]
    first, *rest = branch["Cleanup"]["Catch"]
    assert first == {
        "ErrorEquals": ["ConfigInterruptedError"],
        "ResultPath": "$.interrupted",
        "Next": "Provision",
    }
    assert any("States.ALL" in c["ErrorEquals"] for c in rest)
    assert "interrupted" in ConfigState.model_fields
    assert [n for n, s in branch.items() if s["Type"] == "Choice"] == ["IsReady"]


def test_a_stopped_adaptive_series_is_not_owed_to_the_relaunch(tmp_path: Path) -> None:
    """Repetitions an adaptive series skipped because it had stopped are decided, not lost."""
    series = {"series": "w.t", "min": 2, "max": 4, "ci_pct": 2.0}
    plan = {
        "steps": [{"id": f"w.t.r{n}", "adaptive": series} for n in range(1, 5)]
        + [{"id": f"x.t.r{n}", "adaptive": {**series, "series": "x.t"}} for n in range(1, 5)]
    }
    manifest = {
        "steps": [{"id": i, "status": "ok"} for i in ("w.t.r1", "w.t.r2", "x.t.r1")],
        "adaptive": [{"series": "w.t", "stopped": "precision"}, {"series": "x.t", "stopped": None}],
    }
    (tmp_path / "plan.json").write_text(json.dumps(plan))
    (tmp_path / "manifest.json").write_text(json.dumps(manifest))
    done, planned = completed_steps(tmp_path)
    assert [s for s in planned if s not in done] == ["x.t.r2", "x.t.r3", "x.t.r4"]

"""Spot interruption notices: read from IMDSv2, acted on like a cancel, reported apart from failures."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from test_agent_task import arguments, uploaded
from tests.support.agent_task import directory_plan
from tests.support.fake_aws import FakeAws

from storagebench.agent import interruption
from storagebench.agent.interruption import InterruptionWatcher, NoticeError, parse_notice, read_notice
from storagebench.agent.log import Progress
from storagebench.agent.runner import EXIT_INTERRUPTED
from storagebench.agent.task import main

NOTICE = {"action": "terminate", "time": "2026-11-25T20:05:44Z"}


@pytest.fixture
def fake(fake: FakeAws, monkeypatch: pytest.MonkeyPatch) -> FakeAws:
    """The agent on the fake AWS, its interruption watcher polling every 0.1 s from a clean slate."""
    monkeypatch.setattr(interruption, "POLL_S", 0.1)
    monkeypatch.setattr(interruption, "_STOP", {})
    return fake


def test_no_notice_is_a_404_and_a_notice_is_its_action_and_time(fake: FakeAws) -> None:
    assert read_notice(fake.url) is None
    fake.spot_notice = NOTICE
    assert read_notice(fake.url) == NOTICE
    assert "/latest/meta-data/spot/instance-action" in fake.imds_reads  # with the IMDSv2 token


@pytest.mark.parametrize(
    ("body", "named"),
    [
        ("not json", "not JSON"),
        ("[]", "a JSON object expected"),
        ('{"action": "explode", "time": "t"}', "action 'explode', one of terminate, stop, hibernate"),
        ('{"action": "stop"}', "time None"),
    ],
)
def test_a_document_that_is_no_notice_is_named(body: str, named: str) -> None:
    with pytest.raises(NoticeError, match=named):
        parse_notice(body)


def test_the_watcher_records_the_stage_and_stops_the_plan(fake: FakeAws, tmp_path: Path) -> None:
    progress = Progress(str(tmp_path))
    progress.update(stage="workloads", current="s2")
    stopped: list[str] = []
    watcher = InterruptionWatcher(progress, lambda _: None, interval=0.05, stop_agent=stopped.append)
    watcher.start()
    fake.spot_notice = NOTICE
    watcher.join(5)
    notice = watcher.stop()
    assert notice is not None
    assert (notice["stage"], notice["step"], notice["action"], notice["action_time"]) == (
        "workloads",
        "s2",
        "terminate",
        NOTICE["time"],
    )
    assert stopped and "terminate at 2026-11-25T20:05:44Z" in stopped[0]


def test_a_notice_during_teardown_stops_nothing(fake: FakeAws, tmp_path: Path) -> None:
    progress = Progress(str(tmp_path))
    progress.update(stage="teardown")
    stopped: list[str] = []
    fake.spot_notice = NOTICE
    watcher = InterruptionWatcher(progress, lambda _: None, interval=0.05, stop_agent=stopped.append)
    watcher.start()
    watcher.join(5)
    assert watcher.stop() is not None and stopped == []


def test_an_unanswered_poll_is_counted_and_polling_goes_on(tmp_path: Path) -> None:
    watcher = InterruptionWatcher(
        Progress(str(tmp_path)), lambda _: None, interval=0.01, endpoint="http://127.0.0.1:9"
    )
    watcher.start()
    time.sleep(0.3)
    assert watcher.stop() is None and watcher.misses >= 2


def _plan(tmp_path: Path) -> dict[str, Any]:
    def step(step_id: str, repetition: int, script: str) -> dict[str, Any]:
        phase = {"name": "run", "engine": "command", "command": {"script": script}}
        return {"id": step_id, "target": "main", "repetition": repetition, "phases": [phase]}

    return directory_plan(
        tmp_path, [step("s1", 1, "echo measured"), step("s2", 2, "sleep 30"), step("s3", 3, "echo never")]
    )


def test_a_notice_mid_plan_keeps_the_completed_step_and_is_reported_as_an_interruption(
    fake: FakeAws, tmp_path: Path
) -> None:
    out = tmp_path / "out"

    def notice_once_step_two_runs() -> None:
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            try:
                progress = json.loads((out / "progress.json").read_text())
            except (OSError, ValueError):
                progress = {}
            if progress.get("current") == "s2":
                fake.spot_notice = NOTICE
                return
            time.sleep(0.05)

    threading.Thread(target=notice_once_step_two_runs, daemon=True).start()
    started = time.monotonic()
    assert main(arguments(fake, tmp_path, _plan(tmp_path))) == EXIT_INTERRUPTED
    assert time.monotonic() - started < 20  # s2's 30 s sleep was stopped
    [(error, cause)] = [(b["error"], b["cause"]) for a, b in fake.calls if a == "SendTaskFailure"]
    assert error == "SpotInterruptionError"
    reported = json.loads(cause)
    assert reported["completed_steps"] == 1
    assert (reported["notice"]["stage"], reported["notice"]["step"]) == ("workloads", "s2")
    assert "manifest.json" in uploaded(fake)
    manifest = json.loads(fake.objects["artifacts/runs/r-task/c1/agent/manifest.json"])
    assert manifest["interruption"]["action_time"] == NOTICE["time"]
    steps = {s["id"]: s for s in manifest["steps"]}
    assert steps["s1"]["status"] == "ok"
    assert steps["s2"]["status"] == "failed" and "Spot interruption notice" in steps["s2"]["error"]
    assert "s3" not in steps
    assert manifest["cleanup"]["status"] != "pending"  # torn down

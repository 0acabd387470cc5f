"""The agent as a Step Functions task: each step completes or is reported by name; output before callback."""

from __future__ import annotations

import argparse
import hashlib
import json
from pathlib import Path
from typing import Any

import pytest
from tests.support.agent_task import directory_plan, task_arguments
from tests.support.fake_aws import FakeAws

from storagebench.agent.task import EXIT_FAILED, EXIT_GONE, EXIT_UNREPORTED, EXIT_USAGE, main

TOKEN = "task-token-1"
TOKEN_KEY = "artifacts/runs/r-task/c1/instances/AROAROLE:i-1/task-token"


def plan(tmp_path: Path) -> dict[str, Any]:
    phase = {"name": "hello", "engine": "command", "command": {"script": "echo measured"}}
    return directory_plan(tmp_path, [{"id": "s1", "target": "main", "repetition": 1, "phases": [phase]}])


def arguments(fake: FakeAws, tmp_path: Path, document: dict[str, Any], **changes: Any) -> argparse.Namespace:
    fake.objects[TOKEN_KEY] = TOKEN.encode()
    token = {"token_uri": f"s3://{TOKEN_KEY}", "token_sha256": hashlib.sha256(TOKEN.encode()).hexdigest()}
    where = {"plan_path": "/runs/r-task/c1/plan.json", "output_uri": "s3://artifacts/runs/r-task/c1/agent/"}
    return task_arguments(fake, tmp_path, document, **{**where, **token, **changes})


def failure_cause(fake: FakeAws) -> str:
    [cause] = [body["cause"] for action, body in fake.calls if action == "SendTaskFailure"]
    return str(cause)


def uploaded(fake: FakeAws) -> list[str]:
    return sorted(key.split("/agent/", 1)[1] for key in fake.objects if "/agent/" in key)


def test_a_plan_runs_uploads_then_reports_success(fake: FakeAws, tmp_path: Path) -> None:
    assert main(arguments(fake, tmp_path, plan(tmp_path))) == 0
    actions = fake.actions()
    assert actions[0] == "SendTaskHeartbeat" and actions[-1] == "SendTaskSuccess"
    assert json.loads(fake.calls[-1][1]["output"]) == {"status": "completed", "exit_code": 0}
    assert "manifest.json" in uploaded(fake) and "plan.json" in uploaded(fake)
    manifest = json.loads(fake.objects["artifacts/runs/r-task/c1/agent/manifest.json"])
    assert manifest["status"] == "ok" and manifest["packages"] == {}  # a command step needs no package
    assert fake.unsigned == []


def test_a_directory_target_is_named_as_such_in_the_commands_output(
    fake: FakeAws, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """What SSM's command output (the instance's stderr) says before anything is measured."""
    assert main(arguments(fake, tmp_path, plan(tmp_path))) == 0
    warning = capsys.readouterr().err.splitlines()[0]
    assert warning.startswith("storagebench-agent: warning: directory target (main: ")
    assert "not any cloud storage" in warning


def test_a_plan_with_the_wrong_digest_is_refused_by_name(fake: FakeAws, tmp_path: Path) -> None:
    args = arguments(fake, tmp_path, plan(tmp_path), plan_sha256="0" * 64)
    assert main(args) == EXIT_FAILED
    assert failure_cause(fake).startswith("step 'verify plan' failed: the plan's SHA-256 is ")
    assert uploaded(fake) == []  # nothing ran, nothing to upload


def test_an_expired_plan_address_is_a_fetch_failure(fake: FakeAws, tmp_path: Path) -> None:
    args = arguments(fake, tmp_path, plan(tmp_path), plan_url=fake.url + "/expired.json")
    assert main(args) == EXIT_FAILED
    assert failure_cause(fake) == "step 'fetch plan' failed: GET of the plan failed (HTTP 403 Forbidden)"


def test_an_invalid_plan_is_named(fake: FakeAws, tmp_path: Path) -> None:
    broken = plan(tmp_path)
    broken["steps"][0]["target"] = "nowhere"
    assert main(arguments(fake, tmp_path, broken)) == EXIT_FAILED
    assert "step 'verify plan' failed: the plan is invalid" in failure_cause(fake)


def test_a_failed_upload_is_reported_after_retries(fake: FakeAws, tmp_path: Path) -> None:
    fake.missing_buckets.add("artifacts")
    assert main(arguments(fake, tmp_path, plan(tmp_path))) == EXIT_FAILED
    assert failure_cause(fake).startswith("step 'upload output' failed: PutObject s3://artifacts/")
    assert "NoSuchBucket" in failure_cause(fake)
    assert (tmp_path / "out" / "manifest.json").is_file()  # still on the instance


def test_a_refused_callback_leaves_the_output_uploaded(fake: FakeAws, tmp_path: Path) -> None:
    fake.fail["SendTaskSuccess"] = 500
    assert main(arguments(fake, tmp_path, plan(tmp_path))) == EXIT_UNREPORTED
    assert "manifest.json" in uploaded(fake)
    assert fake.actions().count("SendTaskSuccess") == 5  # retried, then given up


def test_a_task_nobody_waits_for_stops_at_once(fake: FakeAws, tmp_path: Path) -> None:
    fake.fail["SendTaskHeartbeat"] = 400  # TaskTimedOut
    assert main(arguments(fake, tmp_path, plan(tmp_path))) == EXIT_GONE
    assert fake.actions() == ["SendTaskHeartbeat"]


def test_bad_arguments_are_reported_on_the_token(fake: FakeAws, tmp_path: Path) -> None:
    args = arguments(fake, tmp_path, plan(tmp_path), plan_sha256="xyz", heartbeat_s=0, output_uri="/tmp/out")
    assert main(args) == EXIT_USAGE
    cause = failure_cause(fake)
    assert cause.startswith("step 'arguments' failed: --plan-sha256 'xyz': 64 hexadecimal digits expected")
    assert "--heartbeat-s 0: 1..999 expected" in cause and "--output-uri: not an s3:// address" in cause


def test_the_token_is_read_signed_from_the_instance_prefix_and_reported_on(
    fake: FakeAws, tmp_path: Path
) -> None:
    assert main(arguments(fake, tmp_path, plan(tmp_path))) == 0
    assert fake.gets[0] == TOKEN_KEY and fake.unsigned == []
    assert {body["taskToken"] for _, body in fake.calls} == {TOKEN}


@pytest.mark.parametrize(
    ("change", "said"),
    [
        (lambda fake: fake.objects.update({TOKEN_KEY: b"a-later-attempt"}), "the task token's SHA-256 is "),
        (lambda fake: fake.objects.pop(TOKEN_KEY), "NoSuchKey"),
    ],
    ids=["replaced", "missing"],
)
def test_a_token_that_cannot_be_read_ends_the_command_by_name_without_a_call(
    fake: FakeAws, tmp_path: Path, capsys: pytest.CaptureFixture[str], change: Any, said: str
) -> None:
    args = arguments(fake, tmp_path, plan(tmp_path))
    change(fake)
    assert main(args) == EXIT_UNREPORTED
    assert fake.calls == [] and uploaded(fake) == []  # nothing to report on, nothing ran
    line = capsys.readouterr().err.strip().splitlines()[-1]
    assert "step 'fetch task token' failed: " in line and said in line

"""``storagebench run/results --stack``: the SigV4 client against the API served on 127.0.0.1.

The server turns each HTTP request into an HTTP API v2 event for the real handler (on moto) and
first checks the call is signed as API Gateway's IAM authoriser expects: an AWS4-HMAC-SHA256
Authorization header for service execute-api, whose signature it recomputes from the request.
"""

from __future__ import annotations

import json
from pathlib import Path

import boto3
import pytest
from botocore.auth import SigV4Auth
from botocore.awsrequest import AWSRequest
from tests.support.api_cli import Hook, Signed, cli, verify
from tests.support.api_stack import BUCKET, EVENTS, REGION, Stack

from storagebench.adapters.aws.api_client import ApiClientError, api_url_of_stack
from storagebench.cli import stack_runs
from storagebench.core.guardrails import Guardrails


def test_run_on_a_stack_starts_the_run_with_a_signed_call(stack: Stack, served: tuple[str, Signed]) -> None:
    url, signed = served
    result = cli(
        "run", "--suite", str(EVENTS / "local-demo.json"), "--api-url", url, "--region", REGION, "--json"
    )
    assert result.exit_code == 0, result.output
    answer = json.loads(result.stdout)
    assert answer["status"] == "STARTED" and stack.launcher.started == [answer["run_id"]]
    assert signed.checked == ["POST /runs"] and signed.problems == []


def test_a_dry_run_on_a_stack_starts_nothing(stack: Stack, served: tuple[str, Signed]) -> None:
    url, signed = served
    result = cli(
        "run", "--suite", str(EVENTS / "local-demo.json"), "--api-url", url, "--region", REGION, "--dry-run"
    )
    assert result.exit_code == 0, result.output
    assert "expected " in result.stdout and "at most $" in result.stdout and "snapshot" in result.stdout
    assert "h expected" in result.stdout  # one line per config
    assert stack.launcher.started == [] and signed.problems == []


def test_a_request_over_the_stacks_limit_exits_2_naming_it(stack: Stack, served: tuple[str, Signed]) -> None:
    url, _ = served
    stack.service.guardrails = Guardrails(max_run_cost_usd=1)
    result = cli("run", "--suite", str(EVENTS / "local-demo.json"), "--api-url", url, "--region", REGION)
    assert result.exit_code == 2
    assert "422 over_limit" in result.stderr and "MaxRunCostUsd" in result.stderr
    assert stack.launcher.started == []


def test_a_request_with_shell_goes_to_the_privileged_route(
    stack: Stack, served: tuple[str, Signed], tmp_path: Path
) -> None:
    url, signed = served
    document = json.loads((EVENTS / "local-demo.json").read_text(encoding="utf-8"))
    document["configs"][0]["setup"] = "echo hello"
    suite = tmp_path / "hooked.json"
    suite.write_text(json.dumps(document), encoding="utf-8")
    refused = cli("run", "--suite", str(suite), "--api-url", url, "--region", REGION)
    assert refused.exit_code == 2 and "403 privileged_runs_disabled" in refused.stderr
    stack.service.guardrails = Guardrails(allow_privileged=True)
    started = cli("run", "--suite", str(suite), "--api-url", url, "--region", REGION, "--json")
    assert started.exit_code == 0, started.output
    assert signed.checked == ["POST /runs/privileged", "POST /runs/privileged"] and signed.problems == []
    assert len(stack.launcher.started) == 1


def test_results_on_a_stack_reads_the_suite_and_the_run(stack: Stack, served: tuple[str, Signed]) -> None:
    url, signed = served
    stack.store.start_run("demo-1", "local-demo", {}, "2030-01-02T00:00:00Z", "2030-01-03T00:00:00Z", ["gp2"])
    result = cli("results", "--suite", "local-demo", "--api-url", url, "--region", REGION, "--json")
    assert result.exit_code == 0, result.output
    assert [r["run_id"] for r in json.loads(result.stdout)["runs"]] == ["demo-1"]
    result = cli("results", "--run", "demo-1", "--api-url", url, "--region", REGION)
    assert result.exit_code == 0, result.output
    assert "demo-1" in result.stdout and "RUNNING" in result.stdout
    result = cli("results", "--run", "nope", "--api-url", url, "--region", REGION)
    assert result.exit_code == 2 and "404 run_not_found" in result.stderr
    assert signed.checked == ["GET /runs", "GET /runs/demo-1", "GET /runs/nope"] and signed.problems == []


def test_the_api_url_is_the_stacks_output(stack: Stack) -> None:
    cloudformation = boto3.client("cloudformation", region_name=REGION)
    template = {
        "Resources": {"Topic": {"Type": "AWS::SNS::Topic"}},
        "Outputs": {"ApiUrl": {"Value": "https://abc123.execute-api.us-east-1.amazonaws.com"}},
    }
    cloudformation.create_stack(StackName="storagebench", TemplateBody=json.dumps(template))
    cloudformation.create_stack(
        StackName="other", TemplateBody=json.dumps({"Resources": template["Resources"]})
    )
    session = boto3.session.Session(region_name=REGION)
    assert api_url_of_stack("storagebench", session) == "https://abc123.execute-api.us-east-1.amazonaws.com"
    with pytest.raises(ApiClientError, match="has no ApiUrl output"):
        api_url_of_stack("other", session)
    with pytest.raises(ApiClientError, match="cannot read stack 'missing'"):
        api_url_of_stack("missing", session)


def test_run_needs_local_or_a_stack() -> None:
    result = cli("run", "--suite", str(EVENTS / "local-demo.json"))
    assert result.exit_code == 2 and "--stack" in result.stderr


def test_the_signature_check_catches_a_changed_body(stack: Stack) -> None:
    request = AWSRequest(
        method="POST",
        url="http://127.0.0.1:1/runs",
        data=b'{"a": 1}',
        headers={"Content-Type": "application/json"},
    )
    credentials = boto3.session.Session().get_credentials().get_frozen_credentials()
    SigV4Auth(credentials, "execute-api", REGION).add_auth(request)
    headers = {k.lower(): v for k, v in request.headers.items()}
    headers["host"] = "127.0.0.1:1"
    good, bad = Signed(), Signed()
    verify("POST", "http://127.0.0.1:1/runs", headers, b'{"a": 1}', good)
    verify("POST", "http://127.0.0.1:1/runs", headers, b'{"a": 2}', bad)
    assert good.problems == [] and len(bad.problems) == 1 and "does not match" in bad.problems[0]


def start(url: str) -> str:
    result = cli(
        "run", "--suite", str(EVENTS / "local-demo.json"), "--api-url", url, "--region", REGION, "--json"
    )
    assert result.exit_code == 0, result.output
    run_id: str = json.loads(result.stdout)["run_id"]
    return run_id


class NoSleep:
    """``stack_runs.time``: the polls follow one another at once."""

    def __init__(self) -> None:
        self.slept: list[float] = []

    def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)

    def monotonic(self) -> float:
        return sum(self.slept)


def test_wait_follows_the_execution_until_it_ends(
    stack: Stack, served: tuple[str, Signed], hooks: list[Hook], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Polled RUNNING twice, then the execution is stopped outside the CLI: exit 1, status ABORTED."""
    url, signed = served
    polls: list[str] = []

    def stop_after_two_polls(method: str, path: str) -> None:
        if method == "GET" and path.startswith("/runs/"):
            polls.append(path)
            if len(polls) == 3:
                (execution,) = stack.sfn.list_executions(stateMachineArn=stack.launcher.state_machine_arn)[
                    "executions"
                ]
                stack.sfn.stop_execution(executionArn=execution["executionArn"])

    hooks.append(stop_after_two_polls)
    pauses = NoSleep()
    monkeypatch.setattr(stack_runs, "time", pauses)
    args = ["--api-url", url, "--region", REGION, "--wait", "--poll-seconds", "5"]
    result = cli("run", "--suite", str(EVENTS / "local-demo.json"), *args)
    assert result.exit_code == 1, result.output
    (run_id,) = stack.launcher.started
    assert signed.checked == ["POST /runs", *[f"GET /runs/{run_id}"] * 3] and signed.problems == []
    assert pauses.slept == [5, 5]
    assert f"run {run_id}: ABORTED" in result.stdout
    assert "RUNNING" in result.stderr and "ABORTED" in result.stderr


def test_cancel_stops_a_running_run_through_the_api(stack: Stack, served: tuple[str, Signed]) -> None:
    url, signed = served
    run_id = start(url)
    stack.store.start_run(run_id, "local-demo", {}, "2030-01-02T00:00:00Z", "2030-01-03T00:00:00Z", ["gp2"])
    result = cli("cancel", run_id, "--api-url", url, "--region", REGION)
    assert result.exit_code == 0, result.output
    assert result.stdout.strip() == f"run {run_id}: STOPPING, cleanup started"
    assert stack.store.run_status(run_id) == "STOPPING"
    assert [call["run_id"] for call in stack.sweeper.calls] == [run_id]
    again = cli("cancel", run_id, "--api-url", url, "--region", REGION)
    assert again.exit_code == 2
    assert f"409 run_finished: run {run_id} is ABORTED" in " ".join(again.stderr.split())
    assert signed.checked == ["POST /runs", f"DELETE /runs/{run_id}", f"DELETE /runs/{run_id}"]
    assert signed.problems == []


def test_the_report_link_is_the_one_finalize_wrote(stack: Stack, served: tuple[str, Signed]) -> None:
    url, signed = served
    stack.store.start_run("demo-1", "local-demo", {}, "2030-01-02T00:00:00Z", "2030-01-03T00:00:00Z", ["gp2"])
    args = ["report", "--api-url", url, "--region", REGION, "demo-1", "--link", "-f", "html", "--json"]
    missing = cli(*args)
    assert missing.exit_code == 2
    assert "404 report_not_found: run demo-1 has no html report" in " ".join(missing.stderr.split())
    stack.s3.put_object(Bucket=BUCKET, Key="runs/demo-1/report.html", Body=b"<html/>")
    found = cli(*args)
    assert found.exit_code == 0, found.output
    link = json.loads(found.stdout)["links"]["html"]
    assert "/runs/demo-1/report.html?" in link and "Signature=" in link
    assert signed.checked == ["GET /runs/demo-1/report"] * 2 and signed.problems == []

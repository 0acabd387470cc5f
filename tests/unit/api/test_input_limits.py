"""What POST /runs and ``storagebench run --stack`` check before anything starts (issue 11).

A request over Step Functions' StartExecution input limit (262,144 bytes of UTF-8) is a 413 naming
the limit, from the API and from the CLI alike, instead of the 503 "retry later" AWS's refusal
became; ``--idempotency-key`` sends the Idempotency-Key header, checked first by the API's own rule.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from botocore.exceptions import ClientError
from tests.support.api_cli import Signed, cli, hooks, served
from tests.support.api_events import call
from tests.support.api_stack import EVENTS, REGION, Stack

from storagebench.adapters.aws.stepfunctions import StepFunctionsLauncher
from storagebench.api.ports import EXECUTION_INPUT_LIMIT, execution_input
from storagebench.core.guardrails import Guardrails

__all__ = ["hooks", "served"]  # a fixture, used by name
WIDE = chr(0x20000)  # a CJK letter outside the BMP: 4 bytes of UTF-8, 12 in json.dumps' \u escapes


def oversized() -> dict[str, Any]:
    """A valid request of ~100 KB as UTF-8 whose execution input (json.dumps) passes 256 KiB."""
    document: dict[str, Any] = json.loads((EVENTS / "local-demo.json").read_text(encoding="utf-8"))
    document["description"] = WIDE * 2000
    document["tags"] = {chr(0x20000 + n) + WIDE * 127: WIDE * 256 for n in range(42)}
    template = document["configs"][0]
    while len(execution_input(document).encode()) <= EXECUTION_INPUT_LIMIT:
        config = {**template, "id": f"more{len(document['configs'])}", "description": WIDE * 500}
        document["configs"].append(config)
    return document


def _post(stack: Stack, document: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    body = json.dumps(document, ensure_ascii=False)  # what a client sends: UTF-8, under the body limit
    assert len(body.encode()) < EXECUTION_INPUT_LIMIT // 2
    status, answer, _ = call(stack.handler, "POST", "/runs", body=body)
    return status, answer


def test_a_request_over_the_step_functions_input_limit_is_a_413_naming_it(stack: Stack) -> None:
    document = oversized()
    size = len(execution_input(document).encode())
    status, answer = _post(stack, document)
    assert status == 413, answer
    error = answer["error"]
    assert error["code"] == "request_too_large"
    assert f"{size:,} bytes" in error["message"] and "262,144 bytes" in error["message"]
    assert error["details"][0]["field"] == "(body)" and error["details"][0]["value"] == size
    assert stack.launcher.started == []


class RefusingSfn:
    """Step Functions on moto, but StartExecution answers as AWS does an input over its limit (which
    botocore does not check)."""

    def __init__(self, sfn: Any, code: str, message: str) -> None:
        self.sfn = sfn
        self.error = {"Error": {"Code": code, "Message": message}}

    def start_execution(self, **_: Any) -> dict[str, Any]:
        raise ClientError(self.error, "StartExecution")

    def __getattr__(self, name: str) -> Any:
        return getattr(self.sfn, name)


@pytest.mark.parametrize(
    ("code", "message"),
    [
        (
            "ValidationException",
            "1 validation error detected: Value at 'input' failed to satisfy constraint: "
            "Member must have length less than or equal to 262144",
        ),
        ("InvalidExecutionInput", "The input size exceeds the maximum allowed"),
    ],
)
def test_step_functions_own_size_refusal_is_a_413_too_not_a_503(
    stack: Stack, code: str, message: str
) -> None:
    arn = stack.launcher.state_machine_arn
    stack.service.launcher = StepFunctionsLauncher(RefusingSfn(stack.sfn, code, message), arn)
    document = json.loads((EVENTS / "local-demo.json").read_text(encoding="utf-8"))
    for headers in (None, {"Idempotency-Key": "k-1"}):  # both start paths
        status, answer, _ = call(stack.handler, "POST", "/runs", json_body=document, headers=headers)
        assert status == 413 and answer["error"]["code"] == "request_too_large", answer
        assert "262,144 bytes" in answer["error"]["message"]


def test_the_cli_shows_the_same_413_with_exit_2_and_sends_nothing(
    stack: Stack, served: tuple[str, Signed], tmp_path: Path
) -> None:
    url, signed = served
    document = oversized()
    suite = tmp_path / "big.json"
    suite.write_text(json.dumps(document, ensure_ascii=False), encoding="utf-8")
    result = cli("run", "--suite", str(suite), "--api-url", url, "--region", REGION)
    assert result.exit_code == 2, result.output
    _, answer = _post(stack, document)
    expected = f"413 request_too_large: {answer['error']['message']}"
    assert expected in " ".join(result.stderr.split())  # the API's words (rich may wrap them)
    assert signed.checked == [] and stack.launcher.started == []


def _suite(tmp_path: Path, **changes: Any) -> str:
    document = json.loads((EVENTS / "local-demo.json").read_text(encoding="utf-8"))
    document.update(changes)
    path = tmp_path / f"request-{len(list(tmp_path.iterdir()))}.json"
    path.write_text(json.dumps(document), encoding="utf-8")
    return str(path)


def test_the_cli_idempotency_key_starts_one_run_and_refuses_another_body(
    stack: Stack, served: tuple[str, Signed], tmp_path: Path
) -> None:
    url, signed = served
    suite = _suite(tmp_path)
    start = ("run", "--suite", suite, "--api-url", url, "--region", REGION, "--idempotency-key", "nightly-1")
    first = cli(*start, "--json")
    assert first.exit_code == 0, first.output
    again = cli(*start)
    assert again.exit_code == 0, again.output
    run_id = json.loads(first.stdout)["run_id"]
    assert f"run {run_id} was started by this idempotency key already" in again.stdout
    assert stack.launcher.started == [run_id]
    other = cli(*start[:2], _suite(tmp_path, repetitions=1), *start[3:])
    assert other.exit_code == 2 and "409 idempotency_conflict" in other.stderr
    assert stack.launcher.started == [run_id] and signed.problems == []


@pytest.mark.parametrize("key", ["", "tab\there", "k" * 256, "clé"])
def test_a_bad_idempotency_key_is_refused_by_the_apis_rule_before_sending(
    stack: Stack, served: tuple[str, Signed], tmp_path: Path, key: str
) -> None:
    url, signed = served
    result = cli("run", "--suite", _suite(tmp_path), "--api-url", url, "--idempotency-key", key)
    assert result.exit_code == 2, result.output
    message = " ".join(result.stderr.split())
    assert (
        "--idempotency-key: 400 bad_header: the Idempotency-Key header must be 1-255 printable ASCII"
        in message
    )
    assert signed.checked == [] and stack.launcher.started == []


def test_the_idempotency_key_is_documented_and_for_stack_runs_only(tmp_path: Path) -> None:
    help_text = " ".join(cli("run", "--help").stdout.replace("│", " ").split())  # rich boxes the help
    assert "--idempotency-key" in help_text and "1-255 printable ASCII" in help_text
    local = cli("run", "--suite", _suite(tmp_path), "--local", "--idempotency-key", "k")
    assert local.exit_code == 2 and "--idempotency-key goes with --stack" in local.stderr


def test_guardrails_are_untouched_by_the_size_check(stack: Stack) -> None:
    """A request under the limit starts as before (the check adds no refusal of its own)."""
    stack.service.guardrails = Guardrails()
    document = json.loads((EVENTS / "local-demo.json").read_text(encoding="utf-8"))
    status, answer, _ = call(stack.handler, "POST", "/runs", json_body=document)
    assert status == 202 and len(stack.launcher.started) == 1, answer

"""GET /runs/{id}/recommendation through the handler on moto, and ``storagebench recommend --stack``
through the signed client: 200 with the answer, 400 naming the bad requirement, 404 for no run."""

from __future__ import annotations

import json
from typing import Any

import pytest
from tests.support.api_cli import Signed, cli, hooks, served
from tests.support.api_events import call
from tests.support.api_stack import EVENTS, REGION, Stack
from tests.support.records import repetitions

__all__ = ["hooks", "served"]  # the fixture, imported for these tests

RUN = "local-demo-20301102T030405Z-abcd"
STARTED = "2030-11-02T03:04:05Z"
IOPS = {"gp2": [3000.0, 3010.0], "gp3": [3005.0, 3011.0], "io1": [3999.0, 4003.0]}
MONTHLY = {"gp2": 507.04, "gp3": 505.04, "io1": 769.54}


def record_run(stack: Stack, requirements: list[str] | None = None) -> None:
    document: dict[str, Any] = json.loads((EVENTS / "local-demo.json").read_text(encoding="utf-8"))
    document.pop("requirements", None)  # the shipped demo has some; each test says what it wants
    if requirements is not None:
        document["requirements"] = requirements
    stack.store.start_run(RUN, "local-demo", document, STARTED, "2030-11-03T03:04:05Z", list(IOPS))
    for config_id, values in IOPS.items():
        records = repetitions({config_id: values})
        stack.store.put_results(RUN, config_id, records, STARTED, {"storage_option": f"ebs:{config_id}"})
    configs = [{"id": c, "monthly_usd": usd, "cost_partial": False} for c, usd in MONTHLY.items()]
    stack.store.record_economics(RUN, {"configs": configs})


def get(stack: Stack, run_id: str = RUN, **query: str) -> tuple[int, dict[str, Any]]:
    status, body, _ = call(stack.handler, "GET", f"/runs/{run_id}/recommendation", query=query or None)
    return status, body


def test_the_cheapest_config_meeting_the_requirement_with_runners_up_and_reasons(stack: Stack) -> None:
    record_run(stack)
    status, body = get(stack, require="std-randread-4k:iops>=3500")
    assert status == 200, body
    assert body["run_id"] == RUN and body["requirements"] == ["std-randread-4k:iops>=3500"]
    assert body["recommended"]["config_id"] == "io1" and body["recommended"]["monthly_usd"] == 769.54
    assert [v["config_id"] for v in body["failed"]] == ["gp3", "gp2"]
    assert "not >= 3,500" in body["failed"][0]["checks"][0]["reason"]
    assert body["emulated"] is False


def test_repeated_requirements_arrive_joined_with_commas_and_are_all_judged(stack: Stack) -> None:
    record_run(stack)
    # API Gateway's payload 2.0 joins ?require=A&require=B into "A,B"
    status, body = get(stack, require="std-randread-4k:iops>=3500,std-randread-4k:read:iops>=5000")
    assert status == 200, body
    assert len(body["requirements"]) == 2 and body["recommended"] is None
    assert body["summary"] == "no config meets all 2 requirements"


def test_without_require_the_requests_requirements_are_judged(stack: Stack) -> None:
    record_run(stack, requirements=["std-randread-4k:iops>=3000"])
    status, body = get(stack)
    assert status == 200, body
    assert body["requirements"] == ["std-randread-4k:iops>=3000"]


@pytest.mark.parametrize(
    ("require", "code", "message"),
    [
        ("std-randread-4k:iop>=1", "bad_requirement", "unknown metric 'iop'"),
        ("std-randwrite-4k:iops>=1", "bad_requirement", "workloads: std-randread-4k, std-seqread-1m"),
        (None, "no_requirements", "has no requirements"),
    ],
)
def test_a_requirement_that_cannot_be_judged_is_a_400_naming_it(
    stack: Stack, require: str | None, code: str, message: str
) -> None:
    record_run(stack)
    status, body = get(stack, **({"require": require} if require else {}))
    assert status == 400, body
    error = body["error"]
    assert error["code"] == code and message in error["message"]
    assert error["details"][0]["field"] == "require"
    if require:
        assert error["details"][0]["value"] == require


def test_an_unknown_run_is_a_404(stack: Stack) -> None:
    status, body = get(stack, "no-such-run", require="std-randread-4k:iops>=1")
    assert status == 404 and body["error"]["code"] == "run_not_found"


def test_an_unknown_parameter_is_refused(stack: Stack) -> None:
    record_run(stack)
    status, body = get(stack, requires="std-randread-4k:iops>=1")
    assert status == 400 and body["error"]["details"][0]["field"] == "requires"


# ------------------------------------------------------------------------------ the CLI on a stack


@pytest.mark.parametrize(
    ("requires", "exit_code", "shown"),
    [
        (["std-randread-4k:iops>=3500"], 0, "io1 at $769.54/month is the cheapest config"),
        (["std-randread-4k:iops>=5000", "std-randread-4k:read:iops>=1"], 1, "no config meets all 2"),
        (["std-randread-4k:iops=>1"], 2, "did you mean >="),
    ],
)
def test_recommend_on_a_stack_exits_on_the_answer(
    stack: Stack, served: tuple[str, Signed], requires: list[str], exit_code: int, shown: str
) -> None:
    record_run(stack)
    url, signed = served
    flags = [arg for text in requires for arg in ("--require", text)]
    result = cli("recommend", "--run", RUN, *flags, "--api-url", url, "--region", REGION)
    assert result.exit_code == exit_code, result.output
    assert shown in " ".join(result.output.split())
    assert signed.checked == [f"GET /runs/{RUN}/recommendation"] and signed.problems == []


def test_recommend_on_a_stack_as_json_is_the_apis_answer(stack: Stack, served: tuple[str, Signed]) -> None:
    record_run(stack)
    url, _ = served
    result = cli(
        "recommend",
        "--run",
        RUN,
        "-r",
        "std-randread-4k:iops>=3500",
        "--api-url",
        url,
        "--region",
        REGION,
        "--json",
    )
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["recommended"]["config_id"] == "io1"

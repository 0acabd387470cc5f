"""GET /runs/{id}/compare?against=ID through the handler on moto, its example event, every route in
template.yaml, and ``storagebench compare --api-url`` through the signed client."""

from __future__ import annotations

import json
from typing import Any

import pytest
import yaml
from tests.support.api_cli import Signed, cli, hooks, served
from tests.support.api_events import Context, call
from tests.support.api_stack import EVENTS, REGION, REPO, Stack
from tests.support.records import repetitions
from tests.support.runs import run_summary

from storagebench.api.routes import ROUTES
from storagebench.core.state import ConfigResult

__all__ = ["hooks", "served"]  # the fixture, imported for these tests

OLD = "local-demo-20301101T030405Z-abcd"
NEW = "local-demo-20301102T030405Z-abcd"
IOPS = {
    OLD: {"gp3": [3000.0, 3010.0, 2990.0], "io1": [3999.0, 4003.0, 4001.0]},
    NEW: {"gp3": [3300.0, 3310.0, 3290.0], "io1": [3998.0, 4004.0, 4002.0]},
}


def record_run(stack: Stack, run_id: str) -> None:
    started = f"{run_id[11:15]}-{run_id[15:17]}-{run_id[17:19]}T03:04:05Z"
    document: dict[str, Any] = json.loads((EVENTS / "local-demo.json").read_text(encoding="utf-8"))
    stack.store.start_run(run_id, "local-demo", document, started, "2030-12-01T00:00:00Z", list(IOPS[run_id]))
    for config_id, values in IOPS[run_id].items():
        records = repetitions({config_id: values})
        option = f"c5.4xlarge/ebs:{config_id}:100GiB:xfs"
        stack.store.put_results(run_id, config_id, records, started, {"storage_option": option})
    configs = [ConfigResult(run_id=run_id, config_id=c, status="succeeded", records=3) for c in IOPS[run_id]]
    summary = run_summary(
        run_id, "local-demo", started, started.replace("T03", "T04"), configs=configs, records=6
    )
    stack.store.finish_run(summary)


def get(stack: Stack, run_id: str = NEW, **query: str) -> tuple[int, dict[str, Any]]:
    status, body, _ = call(stack.handler, "GET", f"/runs/{run_id}/compare", query=query or None)
    return status, body


def test_a_run_against_another_metric_by_metric(stack: Stack) -> None:
    record_run(stack, OLD)
    record_run(stack, NEW)
    status, body = get(stack, against=OLD)
    assert status == 200, body
    assert (body["a"]["run_id"], body["b"]["run_id"]) == (OLD, NEW)
    assert body["a"]["started_at"] == "2030-11-01T03:04:05Z"
    by_subject = {m["subject"]: m for m in body["measurements"]}
    gp3 = {x["metric"]: x for x in by_subject["c5.4xlarge/ebs:gp3:100GiB:xfs"]["metrics"]}
    assert gp3["iops"]["verdict"] == "faster" and gp3["iops"]["delta_pct"] == pytest.approx(10.0)
    assert gp3["iops"]["p_value"] < 0.001
    io1 = {x["metric"]: x for x in by_subject["c5.4xlarge/ebs:io1:100GiB:xfs"]["metrics"]}
    assert io1["iops"]["better"] is None and io1["iops"]["verdict"] in (
        "no significant difference",
        f"too few repetitions (need {io1['iops']['repetitions_needed']})",
    )
    assert body["only_in_a"] == [] and body["only_in_b"] == []


def test_the_minimum_effect_changes_the_plan(stack: Stack) -> None:
    record_run(stack, OLD)
    record_run(stack, NEW)
    _, five = get(stack, against=OLD)
    _, tenth = get(stack, against=OLD, min_effect_pct="0.1")
    io1 = [
        next(
            x
            for m in body["measurements"]
            if "io1" in m["subject"]
            for x in m["metrics"]
            if x["metric"] == "iops"
        )
        for body in (five, tenth)
    ]
    assert five["min_effect_pct"] == 5.0 and tenth["min_effect_pct"] == 0.1
    assert io1[1]["repetitions_needed"] > (io1[0]["repetitions_needed"] or 0)


@pytest.mark.parametrize(
    ("run_id", "query", "status", "field", "message"),
    [
        (NEW, {"against": "no-such-run"}, 404, "against", "no run 'no-such-run' (against)"),
        ("no-such-run", {"against": OLD}, 404, "run_id", "no run 'no-such-run' (run_id)"),
        (NEW, {}, 400, "against", "against: required"),
        (NEW, {"against": NEW}, 400, "against", "against: is the run itself"),
        (NEW, {"against": "not a run id"}, 400, "against", "against: String should match pattern"),
        (NEW, {"against": OLD, "min_effect_pct": "-1"}, 400, "min_effect_pct", "greater than or equal to 0"),
        (NEW, {"against": OLD, "versus": OLD}, 400, "versus", "unknown query parameter"),
    ],
)
def test_bad_requests_name_the_parameter(
    stack: Stack, run_id: str, query: dict[str, str], status: int, field: str, message: str
) -> None:
    record_run(stack, OLD)
    record_run(stack, NEW)
    got, body = get(stack, run_id, **query)
    assert got == status, body
    assert message in body["error"]["message"]
    assert body["error"]["details"][0]["field"] == field


def test_the_example_event_for_sam_local_invoke(stack: Stack) -> None:
    event = json.loads((EVENTS / "api" / "get-run-compare.json").read_text(encoding="utf-8"))
    assert event["queryStringParameters"] == {"against": OLD} and event["rawPath"] == f"/runs/{NEW}/compare"
    assert stack.handler(event, Context())["statusCode"] == 404  # before the runs exist
    record_run(stack, OLD)
    record_run(stack, NEW)
    response = stack.handler(event, Context())
    assert response["statusCode"] == 200, response["body"]
    assert json.loads(response["body"])["b"]["run_id"] == NEW


def test_every_route_reaches_the_function_on_aws() -> None:
    """An HTTP API sends only the routes it declares to the integration: each route of the table is an
    HttpApi event of ApiFunction in template.yaml, and nothing else is."""

    class Loader(yaml.SafeLoader):
        pass

    Loader.add_multi_constructor("!", lambda loader, suffix, node: None)
    template = yaml.load((REPO / "template.yaml").read_text(encoding="utf-8"), Loader=Loader)
    events = template["Resources"]["ApiFunction"]["Properties"]["Events"]
    declared = {
        (e["Properties"]["Method"], e["Properties"]["Path"])
        for e in events.values()
        if e["Type"] == "HttpApi"
    }
    assert declared == {(r.method, r.path) for r in ROUTES}


# ------------------------------------------------------------------------------ the CLI on a stack


def test_compare_on_a_stack(stack: Stack, served: tuple[str, Signed]) -> None:
    record_run(stack, OLD)
    record_run(stack, NEW)
    url, signed = served
    result = cli("compare", OLD, NEW, "--api-url", url, "--region", REGION, "--format", "json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["b"]["run_id"] == NEW
    assert signed.checked == [f"GET /runs/{NEW}/compare"] and signed.problems == []


def test_compare_a_suite_on_a_stack(stack: Stack, served: tuple[str, Signed]) -> None:
    record_run(stack, OLD)
    record_run(stack, NEW)
    url, signed = served
    result = cli("compare", "--suite", "local-demo", "--api-url", url, "--region", REGION)
    assert result.exit_code == 0, result.output
    assert f"run A: {OLD}" in result.stdout and f"run B: {NEW}" in result.stdout
    assert signed.checked == ["GET /runs", f"GET /runs/{NEW}/compare"]


def test_an_unknown_run_on_a_stack_exits_2_with_the_apis_words(
    stack: Stack, served: tuple[str, Signed]
) -> None:
    record_run(stack, NEW)
    url, _ = served
    result = cli("compare", OLD, NEW, "--api-url", url, "--region", REGION)
    assert result.exit_code == 2
    assert f"no run '{OLD}' (against)" in " ".join(result.output.split())

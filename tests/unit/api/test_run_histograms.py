"""``GET /runs/{id}?histograms=true``: each record's latency histogram, read from the store's own
histogram items only on request, equal to what the agent measured; the default stays without them.
On moto, with records parsed from real fio output; ``results --run --stack --histograms`` asks
for them through the same parameter."""

from __future__ import annotations

import json
from typing import Any

import pytest
from test_api_routes import assert_error, demo
from tests.support.api_cli import cli, hooks, served  # noqa: F401 - the served API and its hooks are fixtures
from tests.support.api_events import call
from tests.support.api_stack import REGION, Stack
from tests.support.fio_runs import measured
from tests.support.records import result_record

from storagebench.api.models import RecordHistogram, RunDetail
from storagebench.api.openapi import build_openapi
from storagebench.results.records import ResultRecord

STARTED = "2030-01-02T03:04:05Z"
LABELS = {"storage_option": "m6i.large/ebs:gp3:100GiB:xfs", "suite": "local-demo"}


def dd_read() -> ResultRecord:
    """A measurement without a latency histogram."""
    return result_record(workload="seqread-dd", profile="dd", engine="dd", runtime_s=4.2, bw_mibps=243.8)


@pytest.fixture
def written(stack: Stack) -> list[ResultRecord]:
    """Run demo-1 with what Collect wrote: two repetitions of one workload, a workload of two job
    groups (read and write each), and a dd read."""
    stack.store.start_run("demo-1", "local-demo", {"name": "local-demo"}, STARTED, STARTED, ["gp3"])
    records = [
        *measured("numjobs4", "randread-4k", 1, STARTED, variant={"iodepth": 32}),
        *measured("single_randread", "randread-4k", 2, STARTED, variant={"iodepth": 32}),
        *measured("new_group", "two-groups", 1, STARTED, variant={"iodepth": 32}),
        dd_read(),
    ]
    assert stack.store.put_results("demo-1", "gp3", records, STARTED, LABELS) == len(records)
    return records


def identity(entry: dict[str, Any]) -> tuple[Any, ...]:
    return tuple(entry[k] for k in ("workload", "phase", "direction", "group", "repetition"))


def test_the_default_leaves_the_histograms_out(stack: Stack, written: list[ResultRecord]) -> None:
    for query in (None, {"histograms": "false"}):
        status, body, _ = call(stack.handler, "GET", "/runs/demo-1", query=query)
        assert status == 200, body
        assert body["histograms"] is None
        assert len(body["results"]) == 6  # the measurements are all there, aggregated
        RunDetail.model_validate(body)


def test_histograms_true_brings_back_exactly_what_the_agent_measured(
    stack: Stack, written: list[ResultRecord]
) -> None:
    status, body, _ = call(stack.handler, "GET", "/runs/demo-1", query={"histograms": "true"})
    assert status == 200, body
    RunDetail.model_validate(body)
    got = {identity(h): h for h in body["histograms"]}
    with_histogram = [r for r in written if r.histogram]
    assert len(with_histogram) == 6 and len(got) == len(body["histograms"]) == 6  # the dd read has none
    for record in with_histogram:
        entry = got[(record.workload, record.phase, record.direction, record.group, record.repetition)]
        assert entry["buckets"] == [b.model_dump(mode="json") for b in record.histogram or []]
        assert RecordHistogram.model_validate(entry) == RecordHistogram.of(record)
        assert (entry["config_id"], entry["target_id"], entry["variant"]) == ("gp3", "ebs0", "iodepth=32")
    # each histogram names the aggregate it belongs to, as ``results`` names it
    fields = ("config_id", "target_id", "workload", "variant", "phase", "direction", "group")
    keys = {tuple(r[k] for k in fields) for r in body["results"]}
    assert {tuple(h[k] for k in fields) for h in body["histograms"]} <= keys
    # the rest of the document is the default one
    _, default, _ = call(stack.handler, "GET", "/runs/demo-1")
    assert {k: v for k, v in body.items() if k != "histograms"} == {
        k: v for k, v in default.items() if k != "histograms"
    }


def test_a_run_not_recorded_yet_has_no_histograms_to_give(stack: Stack) -> None:
    _, created, _ = call(stack.handler, "POST", "/runs", json_body=demo())
    status, body, _ = call(stack.handler, "GET", f"/runs/{created['run_id']}", query={"histograms": "true"})
    assert status == 200, body
    assert body["run"] is None and body["histograms"] == []


@pytest.mark.parametrize("value", ["maybe", "1", "yes", "True", ""])
def test_a_bad_histograms_value_is_a_400_naming_it(
    stack: Stack, written: list[ResultRecord], value: str
) -> None:
    status, body, _ = call(stack.handler, "GET", "/runs/demo-1", query={"histograms": value})
    assert status == 400, body
    error = assert_error(body, 400, "bad_query")
    (item,) = error["details"]
    assert item == {
        "field": "histograms",
        "value": value,
        "message": "must be true or false",
        "allowed": ["true", "false"],
        "limit": None,
    }
    assert "histograms: must be true or false" in error["message"]


def test_an_unknown_run_is_still_a_404_with_histograms(stack: Stack) -> None:
    status, body, _ = call(stack.handler, "GET", "/runs/nope", query={"histograms": "true"})
    assert status == 404 and assert_error(body, 404, "run_not_found")


def test_the_openapi_document_describes_the_parameter_and_the_field() -> None:
    document = build_openapi()
    operation = document["paths"]["/runs/{run_id}"]["get"]
    (parameter,) = [p for p in operation["parameters"] if p["name"] == "histograms"]
    assert parameter["in"] == "query" and not parameter.get("required")
    assert parameter["schema"]["type"] == "boolean" and parameter["schema"]["default"] is False
    assert "latency histogram" in parameter.get("description", parameter["schema"].get("description", ""))
    detail = document["components"]["schemas"]["RunDetail"]["properties"]["histograms"]
    assert "histograms=true" in detail["description"]
    assert "RecordHistogram" in document["components"]["schemas"]


# ----------------------------------------------------------------------------- the CLI, on a stack


def test_results_on_a_stack_asks_for_histograms_only_with_the_option(
    stack: Stack,
    written: list[ResultRecord],
    served: tuple[str, Any],  # noqa: F811
) -> None:
    url, signed = served
    base = ("results", "--run", "demo-1", "--api-url", url, "--region", REGION, "--format", "json")
    plain = cli(*base)
    assert plain.exit_code == 0, plain.output
    assert json.loads(plain.stdout)["histograms"] is None
    asked = cli(*base, "--histograms")
    assert asked.exit_code == 0, asked.output
    histograms = json.loads(asked.stdout)["histograms"]
    expected = [RecordHistogram.of(r) for r in written if r.histogram]
    assert sorted((RecordHistogram.model_validate(h) for h in histograms), key=repr) == sorted(
        expected, key=repr
    )
    assert signed.problems == [] and signed.checked == ["GET /runs/demo-1"] * 2

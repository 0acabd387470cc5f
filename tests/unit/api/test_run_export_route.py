"""GET /runs/{id}/export on moto: a presigned link to each config file Collect wrote under the run's
export prefix, by config and attempt, and nothing of another run."""

from __future__ import annotations

import json
from urllib.parse import parse_qs, unquote, urlparse

import requests
from export_files import record_demo_run, write_config_export
from test_api_routes import assert_error
from tests.support.api_events import Context, call
from tests.support.api_stack import BUCKET, EVENTS, Stack

PREFIX = "exports/suite=local-demo/date=2030-01-02/run=demo-1/"


def test_a_run_not_collected_yet_has_no_file_and_says_which_configs(stack: Stack) -> None:
    record_demo_run(stack.store, "demo-1")
    status, body, _ = call(stack.handler, "GET", "/runs/demo-1/export")
    assert status == 200, body
    assert body["prefix"] == PREFIX and body["files"] == [] and body["status"] == "RUNNING"
    assert body["configs_without_rows"] == ["gp2", "gp3", "io1"] and body["notes"] == []


def test_each_config_and_attempt_has_its_link_in_config_then_attempt_order(stack: Stack) -> None:
    record_demo_run(stack.store, "demo-1")
    record_demo_run(stack.store, "demo-10")  # its prefix starts with demo-1's name
    written = {
        ("gp3", 1): write_config_export(stack.s3, "demo-1", "gp3", [3100.0, 3090.0]),
        ("gp2", 2): write_config_export(stack.s3, "demo-1", "gp2", [1500.0], attempt=2, first_repetition=2),
        ("gp2", 1): write_config_export(stack.s3, "demo-1", "gp2", [1510.0]),
    }
    write_config_export(stack.s3, "demo-10", "io1", [4000.0])
    stack.s3.put_object(Bucket=BUCKET, Key=PREFIX + "README.txt", Body=b"not an export")
    status, body, _ = call(stack.handler, "GET", "/runs/demo-1/export")
    assert status == 200, body
    assert [(f["config_id"], f["attempt"]) for f in body["files"]] == [("gp2", 1), ("gp2", 2), ("gp3", 1)]
    assert [f["key"] for f in body["files"]] == [
        written[("gp2", 1)],
        written[("gp2", 2)],
        written[("gp3", 1)],
    ]
    assert written[("gp2", 2)] == PREFIX + "gp2.attempt2.jsonl"
    assert body["configs_without_rows"] == ["io1"]
    assert body["notes"] == [
        f"{PREFIX}README.txt: not a config's export (<config>[.attempt<N>].jsonl); left out"
    ]
    assert body["expires_in_s"] == 900
    for file in body["files"]:
        url = urlparse(file["url"])
        assert unquote(url.path).endswith(file["key"]) and {"Signature", "X-Amz-Signature"} & set(
            parse_qs(url.query)
        )
        # the link is the file: moto answers presigned GETs made with requests
        served = requests.get(file["url"], timeout=10)
        assert served.status_code == 200
        stored = stack.s3.get_object(Bucket=BUCKET, Key=file["key"])["Body"].read()
        assert served.content == stored and stored.count(b"\n") == len(stored.splitlines()) >= 1


def test_an_unknown_run_is_404_and_a_query_parameter_is_400(stack: Stack) -> None:
    status, body, _ = call(stack.handler, "GET", "/runs/nope/export")
    assert status == 404 and assert_error(body, 404, "run_not_found")["details"][0]["value"] == "nope"
    record_demo_run(stack.store, "demo-1")
    status, body, _ = call(stack.handler, "GET", "/runs/demo-1/export", query={"format": "csv"})
    assert status == 400 and assert_error(body, 400, "bad_query")["details"][0]["field"] == "format"


def test_the_example_event_for_sam_local_invoke(stack: Stack) -> None:
    event = json.loads((EVENTS / "api" / "get-run-export.json").read_text(encoding="utf-8"))
    run_id = "local-demo-20300102T030405Z-abcd"
    assert event["rawPath"] == f"/runs/{run_id}/export"
    assert stack.handler(event, Context())["statusCode"] == 404  # before the run exists
    record_demo_run(stack.store, run_id)
    key = write_config_export(stack.s3, run_id, "io1", [4000.0, 4010.0])
    response = stack.handler(event, Context())
    assert response["statusCode"] == 200, response["body"]
    assert [f["key"] for f in json.loads(response["body"])["files"]] == [key]

"""moto_fixes: a Distributed Map's child executions on moto's interpreter, as AWS shows them.

Each item runs as a child execution with its own history (ExecutionStarted, its states, its end),
listed by the map run (``ListExecutions(mapRunArn=...)``) and described like any execution; the
parent's history keeps only the Map's own events. No network: moto in-process.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import Any

import pytest

pytest.importorskip("moto", reason="moto (the local extra) is not installed")

import boto3
from moto import mock_aws

from storagebench_local import moto_fixes

BUCKET = "items-bucket"
DEFINITION: dict[str, Any] = {
    "StartAt": "Each",
    "States": {
        "Each": {
            "Type": "Map",
            "ItemReader": {
                "Resource": "arn:aws:states:::s3:getObject",
                "ReaderConfig": {"InputType": "JSON"},
                "Parameters": {"Bucket": BUCKET, "Key.$": "$.key"},
            },
            "MaxConcurrencyPath": "$.at_once",
            "ItemSelector": {"item.$": "$$.Map.Item.Value"},
            "ItemProcessor": {
                "ProcessorConfig": {"Mode": "DISTRIBUTED", "ExecutionType": "STANDARD"},
                "StartAt": "Look",
                "States": {
                    "Look": {"Type": "Pass", "Next": "Answer"},
                    "Answer": {"Type": "Pass", "Parameters": {"id.$": "$.item.id"}, "End": True},
                },
            },
            "ResultPath": "$.results",
            "End": True,
        }
    },
}


@pytest.fixture
def sfn(monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    for name, value in {"AWS_ACCESS_KEY_ID": "x", "AWS_SECRET_ACCESS_KEY": "x"}.items():
        monkeypatch.setenv(name, value)
    moto_fixes.apply()
    with mock_aws(config={"stepfunctions": {"execute_state_machine": True}}):  # type: ignore[arg-type]
        s3 = boto3.client("s3", region_name="us-east-1")
        s3.create_bucket(Bucket=BUCKET)
        s3.put_object(Bucket=BUCKET, Key="items.json", Body=json.dumps([{"id": f"c{i}"} for i in range(5)]))
        yield boto3.client("stepfunctions", region_name="us-east-1")


def _run(sfn: Any) -> str:
    machine = sfn.create_state_machine(
        name="machine", definition=json.dumps(DEFINITION), roleArn="arn:aws:iam::123456789012:role/r"
    )["stateMachineArn"]
    arn: str = sfn.start_execution(
        stateMachineArn=machine, input=json.dumps({"key": "items.json", "at_once": 2})
    )["executionArn"]
    deadline = time.monotonic() + 30
    while sfn.describe_execution(executionArn=arn)["status"] == "RUNNING":
        assert time.monotonic() < deadline, "the execution did not end"
        time.sleep(0.05)
    return arn


def test_every_item_is_a_child_execution_with_its_own_history(sfn: Any) -> None:
    arn = _run(sfn)
    output = json.loads(sfn.describe_execution(executionArn=arn)["output"])
    assert sorted(r["id"] for r in output["results"]) == [f"c{i}" for i in range(5)]
    (map_run,) = sfn.list_map_runs(executionArn=arn)["mapRuns"]
    children = sfn.list_executions(mapRunArn=map_run["mapRunArn"])["executions"]
    assert len(children) == 5 and {c["status"] for c in children} == {"SUCCEEDED"}
    seen = set()
    for child in children:
        assert child["mapRunArn"] == map_run["mapRunArn"] and ":execution:machine/" in child["executionArn"]
        events = sfn.get_execution_history(executionArn=child["executionArn"])["events"]
        kinds = [e["type"] for e in events]
        assert kinds == [
            "ExecutionStarted",
            "PassStateEntered",
            "PassStateExited",
            "PassStateEntered",
            "PassStateExited",
            "ExecutionSucceeded",
        ]
        assert [e["id"] for e in events] == list(range(1, 7))
        assert [e["previousEventId"] for e in events] == list(range(0, 6))
        started = json.loads(events[0]["executionStartedEventDetails"]["input"])
        assert set(started) == {"item"}  # what the ItemSelector made of the item, as on AWS
        described = sfn.describe_execution(executionArn=child["executionArn"])
        assert json.loads(described["output"]) == {"id": started["item"]["id"]}
        seen.add(started["item"]["id"])
    assert seen == {f"c{i}" for i in range(5)}


def test_the_parents_history_keeps_only_the_maps_events(sfn: Any) -> None:
    arn = _run(sfn)
    kinds = [e["type"] for e in sfn.get_execution_history(executionArn=arn)["events"]]
    assert "PassStateEntered" not in kinds
    assert kinds[:4] == ["ExecutionStarted", "MapStateEntered", "MapStateStarted", "MapRunStarted"]
    assert kinds[-1] == "ExecutionSucceeded"


def test_a_state_machine_arn_still_lists_its_executions(sfn: Any) -> None:
    arn = _run(sfn)
    machine = sfn.describe_execution(executionArn=arn)["stateMachineArn"]
    assert [e["executionArn"] for e in sfn.list_executions(stateMachineArn=machine)["executions"]] == [arn]

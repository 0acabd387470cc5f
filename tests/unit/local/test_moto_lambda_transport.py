"""moto_fixes: a Lambda task whose call never reaches Lambda fails ``Lambda.SdkClientException``.

moto 5.2.5 names any failure below HTTP ``States.Runtime``, which no Retry of the workflow names;
Step Functions reports it as ``Lambda.SdkClientException``, which the workflow retries. The
endpoint here is a port nobody listens on: connection refused, as a reset or a backlog overflow
of the local Lambda endpoint would be on a loaded machine.
"""

from __future__ import annotations

import json
import socket
import time
from collections.abc import Iterator
from typing import Any

import pytest

pytest.importorskip("moto", reason="moto (the local extra) is not installed")

import boto3
from moto import mock_aws

from storagebench_local import moto_fixes

DEFINITION: dict[str, Any] = {
    "StartAt": "Call",
    "States": {
        "Call": {
            "Type": "Task",
            "Resource": "arn:aws:states:::lambda:invoke",
            "Parameters": {"FunctionName": "f", "Payload.$": "$"},
            "Retry": [{"ErrorEquals": ["Lambda.SdkClientException"], "IntervalSeconds": 1, "MaxAttempts": 1}],
            "Catch": [{"ErrorEquals": ["States.ALL"], "ResultPath": "$.caught", "Next": "Caught"}],
            "End": True,
        },
        "Caught": {"Type": "Pass", "End": True},
    },
}


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
    return port


@pytest.fixture
def sfn(monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    for name, value in {
        "AWS_ACCESS_KEY_ID": "x",
        "AWS_SECRET_ACCESS_KEY": "x",
        "AWS_ENDPOINT_URL_LAMBDA": f"http://127.0.0.1:{_closed_port()}",
    }.items():
        monkeypatch.setenv(name, value)
    moto_fixes.apply()
    with mock_aws(config={"stepfunctions": {"execute_state_machine": True}}):  # type: ignore[arg-type]
        yield boto3.client("stepfunctions", region_name="us-east-1")


def test_a_refused_connection_is_an_sdk_client_exception_the_workflow_retries(sfn: Any) -> None:
    machine = sfn.create_state_machine(
        name="m", definition=json.dumps(DEFINITION), roleArn="arn:aws:iam::123456789012:role/r"
    )["stateMachineArn"]
    arn = sfn.start_execution(stateMachineArn=machine, input="{}")["executionArn"]
    deadline = time.monotonic() + 30
    while (described := sfn.describe_execution(executionArn=arn))["status"] == "RUNNING":
        assert time.monotonic() < deadline, "the execution did not end"
        time.sleep(0.05)
    caught = json.loads(described["output"])["caught"]
    assert caught["Error"] == moto_fixes.SDK_CLIENT_EXCEPTION, caught
    assert caught["Cause"].startswith("EndpointConnectionError: "), caught
    events = sfn.get_execution_history(executionArn=arn)["events"]
    failed = [e for e in events if e["type"] == "TaskFailed"]
    assert len(failed) == 2  # the first attempt and the retry its Retry allows


def _named(ex: Exception) -> str:
    from unittest import mock

    from moto.stepfunctions.parser.asl.component.state.exec.state_task.service import (
        state_task_service_lambda as service_lambda,
    )

    task = service_lambda.StateTaskServiceLambda.__new__(service_lambda.StateTaskServiceLambda)
    task.resource = mock.MagicMock()
    with (
        mock.patch.object(task, "_get_sfn_resource", return_value="invoke"),
        mock.patch.object(task, "_get_sfn_resource_type", return_value="lambda"),
    ):
        failure = task._from_error(mock.MagicMock(), ex)
    return str(failure.error_name.error_name)


def test_moto_s_own_timeouts_keep_their_names() -> None:
    """A heartbeat timeout is a TimeoutError (an OSError) inside moto: not a transport failure."""
    from botocore.exceptions import EndpointConnectionError
    from moto.stepfunctions.parser.asl.eval.callback.callback import HeartbeatTimeoutError

    moto_fixes.apply()
    assert _named(HeartbeatTimeoutError()) in ("States.HeartbeatTimeout", "States.Timeout")  # moto's name
    assert (
        _named(EndpointConnectionError(endpoint_url="http://127.0.0.1:9")) == moto_fixes.SDK_CLIENT_EXCEPTION
    )

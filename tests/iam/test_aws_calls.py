"""The recorder of a local run's AWS calls (storagebench_local.aws_calls), on moto, without a run."""

from __future__ import annotations

import io
import json
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import boto3
import pytest
from moto import mock_aws
from tests.support.moto_env import moto_credentials

from storagebench_local.aws_calls import FUNCTION, INSTANCE, STATE_MACHINE, AwsCallRecorder, load_calls

from .call_checks import Stack, UnknownOperationError, checks_of

REGION = "us-east-1"
BUCKET = "recorded-bucket"


@pytest.fixture
def recorder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[AwsCallRecorder]:
    moto_credentials(monkeypatch, REGION)
    with mock_aws():
        boto3.client("s3", region_name=REGION).create_bucket(Bucket=BUCKET)
        recorder = AwsCallRecorder(REGION, tmp_path / "calls.jsonl")
        with recorder.recording():
            yield recorder


def _as(recorder: AwsCallRecorder, function: str, work: Any) -> None:
    """Run ``work`` on a thread of its own, as the local Lambda endpoint runs a handler."""
    failures: list[BaseException] = []

    def handler() -> None:
        recorder.invoking(function)
        try:
            work()
        except BaseException as error:  # reported on the test's thread
            failures.append(error)

    thread = threading.Thread(target=handler)
    thread.start()
    thread.join()
    assert not failures, failures


def test_a_handlers_calls_are_its_functions(recorder: AwsCallRecorder, tmp_path: Path) -> None:
    s3 = boto3.client("s3", region_name=REGION)

    def handler() -> None:
        s3.put_object(Bucket=BUCKET, Key="runs/r1/request.json", Body=b"{}")
        s3.download_file(BUCKET, "runs/r1/request.json", str(tmp_path / "request.json"))  # s3transfer threads
        s3.generate_presigned_url("get_object", Params={"Bucket": BUCKET, "Key": "runs/r1/request.json"})

    _as(recorder, "PlanFunction", handler)
    s3.list_buckets()  # the test's own call: no principal of the stack
    calls = [(c.kind, c.principal, c.operation, c.via) for c in recorder.calls]
    assert ("function", "PlanFunction", "PutObject", "sdk") in calls
    assert ("function", "PlanFunction", "HeadObject", "sdk") in calls  # made on an s3transfer thread
    assert ("function", "PlanFunction", "GetObject", "presign") in calls
    assert {c[1] for c in calls} == {"PlanFunction"}
    assert recorder.unattributed["s3.ListBuckets"] == 1
    put = next(c for c in recorder.calls if c.operation == "PutObject")
    assert put.params["Body"] == "<BytesIO>"  # bodies are never kept
    assert put.site.startswith("tests/iam/test_aws_calls.py:"), put.site


def test_tags_are_read_at_the_time_of_the_call(recorder: AwsCallRecorder) -> None:
    ec2 = boto3.client("ec2", region_name=REGION)
    image = ec2.describe_images(Owners=["amazon"])["Images"][0]["ImageId"]
    tags = [{"Key": "storagebench:stack", "Value": "s"}]
    instance = ec2.run_instances(
        ImageId=image,
        MinCount=1,
        MaxCount=1,
        TagSpecifications=[{"ResourceType": "instance", "Tags": tags}],
    )["Instances"][0]["InstanceId"]
    _as(recorder, "CleanupFunction", lambda: ec2.terminate_instances(InstanceIds=[instance]))
    ec2.delete_tags(Resources=[instance])
    (terminate,) = [c for c in recorder.calls if c.operation == "TerminateInstances"]
    assert terminate.facts[instance]["tags"] == {"storagebench:stack": "s"}
    (check,) = checks_of(terminate, Stack("123456789012", REGION, "arn:aws:iam::123456789012:role/r"))
    assert check.resource == f"arn:aws:ec2:{REGION}:123456789012:instance/{instance}"
    assert check.context == {"aws:ResourceTag/storagebench:stack": "s"}


def test_an_instances_requests_are_the_instances(recorder: AwsCallRecorder) -> None:
    seen: list[dict[str, Any]] = []

    def app(environ: dict[str, Any], start_response: Any) -> list[bytes]:
        seen.append({"body": environ["wsgi.input"].read()})
        start_response("200 OK", [])
        return [b""]

    wrapped = recorder._middleware(app)
    scope = "Credential=ASIALOCALINSTANCE/20260101/us-east-1/{}/aws4_request, SignedHeaders=host"
    token = {"HTTP_X_AMZ_SECURITY_TOKEN": "local-instance-token-i-0123456789abcdef0"}
    key = "runs/r1/c1/instances/AROA:i-0123456789abcdef0/agent/x"
    presigned = "X-Amz-Credential=local%2F20260101%2Fus-east-1%2Fs3%2Faws4_request&X-Amz-Signature=x"
    body = json.dumps({"taskToken": "t", "output": "{}"}).encode()
    requests: list[dict[str, Any]] = [
        {"REQUEST_METHOD": "PUT", "PATH_INFO": f"/{BUCKET}/{key}",
         "HTTP_AUTHORIZATION": "AWS4-HMAC-SHA256 " + scope.format("s3"), **token},
        {"REQUEST_METHOD": "POST", "PATH_INFO": "/", "HTTP_X_AMZ_TARGET": "AWSStepFunctions.SendTaskSuccess",
         "CONTENT_LENGTH": str(len(body)), "wsgi.input": io.BytesIO(body),
         "HTTP_AUTHORIZATION": "AWS4-HMAC-SHA256 " + scope.format("states"), **token},
        {"REQUEST_METHOD": "GET", "PATH_INFO": f"/{BUCKET}/agent/a.pyz",  # presigned by a handler
         "QUERY_STRING": presigned},
    ]  # fmt: skip
    for environ in requests:
        environ.setdefault("wsgi.input", io.BytesIO(b""))
        wrapped(environ, lambda *args: None)
    put, success = recorder.calls
    assert (put.kind, put.principal, put.service, put.operation) == (
        INSTANCE,
        "i-0123456789abcdef0",
        "s3",
        "PutObject",
    )
    assert put.params == {"Bucket": BUCKET, "Key": key}
    assert (success.service, success.operation, success.params["taskToken"]) == (
        "stepfunctions",
        "SendTaskSuccess",
        "t",
    )
    assert seen[1]["body"] == body  # the app behind still reads the whole body
    assert recorder.unattributed["http:presigned:s3"] == 1
    assert not recorder.errors


def test_the_state_machines_invocations_and_the_dump(recorder: AwsCallRecorder, tmp_path: Path) -> None:
    with pytest.raises(Exception):  # noqa: B017 - moto has no such function: the call is recorded anyway
        boto3.client("lambda", region_name=REGION).invoke(FunctionName="PlanFunction", Payload=b"{}")
    (invoke,) = recorder.calls
    assert (invoke.kind, invoke.principal) == (STATE_MACHINE, "BenchmarkStateMachine")
    recorder.dump(tmp_path / "dump.jsonl")
    assert load_calls(tmp_path / "dump.jsonl") == recorder.calls


def test_an_operation_the_table_does_not_know_fails(recorder: AwsCallRecorder) -> None:
    ec2 = boto3.client("ec2", region_name=REGION)
    _as(recorder, "CleanupFunction", ec2.describe_regions)
    (call,) = recorder.calls
    assert call.kind == FUNCTION
    with pytest.raises(UnknownOperationError, match="DescribeRegions"):
        checks_of(call, Stack("123456789012", REGION, "arn:aws:iam::123456789012:role/r"))

"""The local Lambda Invoke endpoint: Lambda's answers for results, errors, unknown functions and
Event invocations, and a state machine run on moto's interpreter whose tasks it serves."""

from __future__ import annotations

import base64
import json
import os
import sys
import textwrap
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from storagebench_local.lambda_endpoint import LocalFunction, LocalLambda
from storagebench_local.template import Template

boto3 = pytest.importorskip("boto3", reason="boto3 is not installed (the aws extra)")
botocore_config = pytest.importorskip("botocore.config")

REGION = "us-east-1"

FUNCTIONS = {
    "Echo": """
        import os

        def handler(event, context):
            return {
                "event": event,
                "greeting": os.environ.get("GREETING"),
                "name": context.function_name,
                "arn": context.invoked_function_arn,
                "memory": context.memory_limit_in_mb,
                "request_id": context.aws_request_id,
                "remaining_ms": context.get_remaining_time_in_millis(),
                "module": __name__,
            }
    """,
    "Boom": """
        class BoomError(Exception):
            pass

        def handler(event, context):
            raise BoomError(f"boom on {event.get('what')}")
    """,
    "Flaky": """
        calls = 0

        class FlakyError(Exception):
            pass

        def handler(event, context):
            global calls
            calls += 1
            if calls <= 2:
                raise FlakyError(f"attempt {calls} failed")
            return {"attempts": calls, "input": event}
    """,
    "Fatal": """
        class FatalError(Exception):
            pass

        def handler(event, context):
            raise FatalError("cannot go on")
    """,
    "Recover": """
        def handler(event, context):
            return {"recovered": event}
    """,
    "Slow": """
        import time
        from pathlib import Path

        def handler(event, context):
            release = Path(event["release"])
            deadline = time.monotonic() + 30
            while not release.exists() and time.monotonic() < deadline:
                time.sleep(0.01)
            Path(event["marker"]).write_text("done" if release.exists() else "never released")
            return None
    """,
    "BadImport": """
        import no_such_module_anywhere  # noqa

        def handler(event, context):
            return 1
    """,
    "NoHandler": """
        def something_else(event, context):
            return 1
    """,
    "Unserialisable": """
        def handler(event, context):
            return {"when": object()}
    """,
    "UsesLayer": """
        from helper import double  # a sibling module of app.py
        import storagebench

        def handler(event, context):
            return {"double": double(event["n"]), "version": storagebench.__version__}
    """,
}


def write_function(root: Path, name: str, source: str) -> Path:
    code_dir = root / "functions" / name.lower()
    code_dir.mkdir(parents=True)
    (code_dir / "app.py").write_text(textwrap.dedent(source))
    if name == "UsesLayer":
        (code_dir / "helper.py").write_text("def double(n):\n    return 2 * n\n")
    return code_dir


@pytest.fixture
def functions(tmp_path: Path) -> list[LocalFunction]:
    return [
        LocalFunction(name, write_function(tmp_path, name, source), environment={"GREETING": "hello"})
        for name, source in FUNCTIONS.items()
    ]


@pytest.fixture
def endpoint(functions: list[LocalFunction]) -> Iterator[LocalLambda]:
    with LocalLambda(functions) as running:
        yield running


def lambda_client(endpoint: LocalLambda) -> Any:
    return boto3.client(
        "lambda",
        endpoint_url=endpoint.endpoint_url,
        region_name=REGION,
        aws_access_key_id="local",
        aws_secret_access_key="local",
        config=botocore_config.Config(retries={"max_attempts": 0}),
    )


def invoke(endpoint: LocalLambda, name: str, event: Any = None, **kwargs: Any) -> tuple[dict[str, Any], Any]:
    response = lambda_client(endpoint).invoke(FunctionName=name, Payload=json.dumps(event or {}), **kwargs)
    body = response["Payload"].read()
    return response, json.loads(body) if body else None


# ---------------------------------------------------------------------- Lambda's answers
def test_success_returns_the_result_with_lambda_headers(endpoint: LocalLambda) -> None:
    response, result = invoke(endpoint, "Echo", {"a": 1})
    assert response["StatusCode"] == 200
    assert "FunctionError" not in response
    assert response["ExecutedVersion"] == "$LATEST"
    headers = response["ResponseMetadata"]["HTTPHeaders"]
    assert headers["x-amzn-requestid"] == result["request_id"]
    assert result["event"] == {"a": 1}
    assert result["greeting"] == "hello"
    assert result["name"] == "Echo"
    assert result["arn"] == endpoint.arn("Echo")
    assert result["memory"] == 128
    assert 0 < result["remaining_ms"] <= 3000
    assert result["module"] == "_sblocal_Echo__app"  # one module per function, though every file is app.py
    [record] = endpoint.invocations
    assert (record.function, record.ok, record.cold_start, record.invocation_type) == (
        "Echo",
        True,
        True,
        "RequestResponse",
    )
    assert record.request_id == result["request_id"]
    invoke(endpoint, "Echo")
    assert endpoint.invocations[-1].cold_start is False


@pytest.mark.parametrize(
    "identifier",
    [
        "Echo",
        "Echo:$LATEST",
        "arn:aws:lambda:us-east-1:123456789012:function:Echo",
        "arn:aws:lambda:us-east-1:123456789012:function:Echo:live",
        "123456789012:function:Echo",
    ],
)
def test_names_arns_and_qualifiers_reach_the_function(endpoint: LocalLambda, identifier: str) -> None:
    _, result = invoke(endpoint, identifier, {"x": identifier})
    assert result["event"] == {"x": identifier}


def test_an_exception_is_an_unhandled_function_error_named_by_its_class(endpoint: LocalLambda) -> None:
    response, error = invoke(endpoint, "Boom", {"what": "purpose"})
    assert response["StatusCode"] == 200
    assert response["FunctionError"] == "Unhandled"
    assert error["errorType"] == "BoomError"
    assert error["errorMessage"] == "boom on purpose"
    assert error["requestId"] == response["ResponseMetadata"]["HTTPHeaders"]["x-amzn-requestid"]
    assert any("raise BoomError" in line for line in error["stackTrace"])
    assert endpoint.invocations[-1].error_type == "BoomError"


@pytest.mark.parametrize(
    ("name", "error_type", "message"),
    [
        ("BadImport", "Runtime.ImportModuleError", "Unable to import module 'app': No module named"),
        ("NoHandler", "Runtime.HandlerNotFound", "Handler 'handler' missing on module 'app'"),
        ("Unserialisable", "Runtime.MarshalError", "Unable to marshal response"),
    ],
)
def test_runtime_errors(endpoint: LocalLambda, name: str, error_type: str, message: str) -> None:
    response, error = invoke(endpoint, name)
    assert response["FunctionError"] == "Unhandled"
    assert error["errorType"] == error_type
    assert message in error["errorMessage"]


def test_unknown_function_is_resource_not_found(endpoint: LocalLambda) -> None:
    client = lambda_client(endpoint)
    with pytest.raises(client.exceptions.ResourceNotFoundException) as raised:
        client.invoke(FunctionName="arn:aws:lambda:us-east-1:123456789012:function:Nope", Payload=b"{}")
    error = raised.value.response
    assert error["ResponseMetadata"]["HTTPStatusCode"] == 404
    assert (
        "Function not found: arn:aws:lambda:us-east-1:123456789012:function:Nope" in error["Error"]["Message"]
    )
    assert endpoint.invocations == []


def test_event_invocation_answers_202_and_runs_in_a_thread(endpoint: LocalLambda, tmp_path: Path) -> None:
    marker, release = tmp_path / "slow.done", tmp_path / "slow.release"
    event = {"marker": str(marker), "release": str(release)}
    response, body = invoke(endpoint, "Slow", event, InvocationType="Event")
    assert response["StatusCode"] == 202
    assert body is None
    # answered before the handler finished: it cannot, until the release exists (an order, not a time)
    assert not marker.exists()
    release.write_text("go")
    assert endpoint.wait_for_events(30)
    assert marker.read_text() == "done"
    [record] = endpoint.invocations_of("Slow")
    assert record.invocation_type == "Event"
    assert record.ok and record.duration_s > 0


def test_dry_run_tail_and_bad_payloads(endpoint: LocalLambda) -> None:
    client = lambda_client(endpoint)
    assert client.invoke(FunctionName="Echo", InvocationType="DryRun")["StatusCode"] == 204
    response = client.invoke(FunctionName="Echo", Payload=b"{}", LogType="Tail")
    assert base64.b64decode(response["LogResult"]).decode().startswith("REPORT RequestId: ")
    with pytest.raises(client.exceptions.InvalidRequestContentException):
        client.invoke(FunctionName="Echo", Payload=b"{not json")


def test_sibling_modules_and_the_storagebench_layer_import(endpoint: LocalLambda) -> None:
    import storagebench

    _, result = invoke(endpoint, "UsesLayer", {"n": 21})
    assert result == {"double": 42, "version": storagebench.__version__}
    assert str(endpoint.functions["UsesLayer"].code_dir) not in sys.path  # only while loading
    assert "helper" in sys.modules
    endpoint.stop()
    assert "helper" not in sys.modules  # forgotten with the function's module
    assert "_sblocal_UsesLayer__app" not in sys.modules


def test_summary_counts_invocations_errors_and_durations(endpoint: LocalLambda) -> None:
    for _ in range(3):
        invoke(endpoint, "Flaky")
    summary = endpoint.summary()["Flaky"]
    assert summary["invocations"] == 3
    assert summary["errors"] == {"FlakyError": 2}
    assert summary["cold_starts"] == 1
    assert summary["max_s"] >= summary["mean_s"] > 0


def test_before_invoke_hook_can_inject_a_fault(functions: list[LocalFunction]) -> None:
    class InjectedError(Exception):
        pass

    seen: list[tuple[str, Any]] = []

    def hook(name: str, event: Any) -> None:
        seen.append((name, event))
        if event.get("fail"):
            raise InjectedError(f"injected into {name}")

    with LocalLambda(functions, before_invoke=hook) as endpoint:
        _, ok = invoke(endpoint, "Echo", {"fail": False})
        response, error = invoke(endpoint, "Echo", {"fail": True})
    assert ok["event"] == {"fail": False}
    assert response["FunctionError"] == "Unhandled"
    assert error["errorType"] == "InjectedError"
    assert seen == [("Echo", {"fail": False}), ("Echo", {"fail": True})]


# ---------------------------------------------------------------------- environment
def test_shared_environment_is_set_once_and_restored(
    functions: list[LocalFunction], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("GREETING", raising=False)
    monkeypatch.setenv("EXTRA", "before")
    endpoint = LocalLambda(functions, environment={"EXTRA": "during"})
    assert endpoint.env_mode == "shared"
    with endpoint:
        assert os.environ["GREETING"] == "hello"
        assert os.environ["EXTRA"] == "during"
    assert "GREETING" not in os.environ
    assert os.environ["EXTRA"] == "before"


def test_existing_variables_win_over_template_values_unless_told(
    functions: list[LocalFunction], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GREETING", "from the caller")
    with LocalLambda(functions) as endpoint:
        assert invoke(endpoint, "Echo")[1]["greeting"] == "from the caller"
    with LocalLambda(functions, keep_existing=False) as endpoint:
        assert invoke(endpoint, "Echo")[1]["greeting"] == "hello"
    assert os.environ["GREETING"] == "from the caller"


def test_conflicting_values_are_applied_per_invocation(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("GREETING", raising=False)
    monkeypatch.delenv("A", raising=False)
    source = FUNCTIONS["Echo"]
    functions = [
        LocalFunction(
            "En", write_function(tmp_path, "En", source), environment={"GREETING": "hello", "A": "1"}
        ),
        LocalFunction(
            "Fr", write_function(tmp_path, "Fr", source), environment={"GREETING": "bonjour", "A": "1"}
        ),
        LocalFunction("None", write_function(tmp_path, "None", source), environment={"A": "1"}),
    ]
    endpoint = LocalLambda(functions)
    assert endpoint.env_mode == "per-invocation"
    assert endpoint.conflicting_variables == {"GREETING"}
    with endpoint:
        assert os.environ["A"] == "1"
        assert os.environ["GREETING"] == ""  # present, empty between invocations
        assert invoke(endpoint, "En")[1]["greeting"] == "hello"
        assert invoke(endpoint, "Fr")[1]["greeting"] == "bonjour"
        assert invoke(endpoint, "None")[1]["greeting"] == ""  # lacking it reads as unset: empty
        assert os.environ["GREETING"] == ""
    assert "A" not in os.environ
    assert "GREETING" not in os.environ


def test_per_invocation_variables_never_leave_the_environment_while_threads_read_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # moto's interpreter and botocore copy os.environ from other threads: a key removed between
    # their listing and their read raised KeyError('ACTIVATOR_FUNCTION') mid-run (40 configs)
    monkeypatch.delenv("GREETING", raising=False)
    source = FUNCTIONS["Echo"]
    functions = [
        LocalFunction("En", write_function(tmp_path, "En", source), environment={"GREETING": "hello"}),
        LocalFunction("Fr", write_function(tmp_path, "Fr", source), environment={"GREETING": "bonjour"}),
        LocalFunction("None", write_function(tmp_path, "None", source), environment={}),
    ]
    endpoint = LocalLambda(functions)
    assert endpoint.conflicting_variables == {"GREETING"}
    seen: list[BaseException] = []
    done = threading.Event()

    def copy_environment() -> None:
        while not done.is_set():
            try:
                if "GREETING" not in dict(os.environ):
                    raise AssertionError("GREETING left os.environ during an invocation")
            except (KeyError, AssertionError) as exc:
                seen.append(exc)
                return

    with endpoint:
        reader = threading.Thread(target=copy_environment)
        reader.start()
        try:
            for _ in range(40):
                for name in ("En", "Fr", "None"):
                    invoke(endpoint, name)
        finally:
            done.set()
            reader.join()
    assert seen == []


# ---------------------------------------------------------------------- end to end on moto
TEMPLATE = """
Transform: AWS::Serverless-2016-10-31
Globals:
  Function:
    Timeout: 10
    MemorySize: 256
    Environment:
      Variables:
        GREETING: !Sub "hello from ${AWS::StackName}"
Resources:
  FlakyFunction:
    Type: AWS::Serverless::Function
    Properties: {CodeUri: functions/flaky/, Handler: app.handler}
  FatalFunction:
    Type: AWS::Serverless::Function
    Properties: {CodeUri: functions/fatal/, Handler: app.handler}
  RecoverFunction:
    Type: AWS::Serverless::Function
    Properties: {CodeUri: functions/recover/, Handler: app.handler}
  BoomFunction:
    Type: AWS::Serverless::Function
    Properties: {CodeUri: functions/boom/, Handler: app.handler}
  Flow:
    Type: AWS::Serverless::StateMachine
    Properties:
      DefinitionUri: flow.asl.json
      DefinitionSubstitutions:
        FlakyArn: !GetAtt FlakyFunction.Arn
        FatalArn: !GetAtt FatalFunction.Arn
        RecoverArn: !GetAtt RecoverFunction.Arn
        BoomArn: !GetAtt BoomFunction.Arn
"""

FLOW = {
    "StartAt": "Flaky",
    "States": {
        "Flaky": {
            "Type": "Task",
            "Resource": "arn:aws:states:::lambda:invoke",
            "Parameters": {"FunctionName": "${FlakyArn}", "Payload.$": "$"},
            "OutputPath": "$.Payload",
            "Retry": [
                {"ErrorEquals": ["FlakyError"], "IntervalSeconds": 1, "MaxAttempts": 3, "BackoffRate": 1}
            ],
            "Next": "Fatal",
        },
        "Fatal": {
            "Type": "Task",
            "Resource": "${FatalArn}",
            "Retry": [{"ErrorEquals": ["SomethingElse"], "MaxAttempts": 5}],
            "Catch": [{"ErrorEquals": ["FatalError"], "ResultPath": "$.error", "Next": "Recover"}],
            "Next": "Unreachable",
        },
        "Recover": {
            "Type": "Task",
            "Resource": "arn:aws:states:::lambda:invoke",
            "Parameters": {"FunctionName": "${RecoverArn}", "Payload.$": "$"},
            "OutputPath": "$.Payload",
            "Next": "Choose",
        },
        "Choose": {
            "Type": "Choice",
            "Choices": [{"Variable": "$.recovered.input.boom", "BooleanEquals": True, "Next": "Boom"}],
            "Default": "Done",
        },
        "Boom": {"Type": "Task", "Resource": "${BoomArn}", "Next": "Done"},
        "Done": {"Type": "Succeed"},
        "Unreachable": {"Type": "Fail", "Error": "Unreachable"},
    },
}


@pytest.fixture
def aws_credentials(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("AWS_PROFILE", "AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_STEPFUNCTIONS"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    monkeypatch.setenv("AWS_DEFAULT_REGION", REGION)


def run_execution(sfn: Any, machine: str, name: str, payload: dict[str, Any]) -> dict[str, Any]:
    arn = sfn.start_execution(stateMachineArn=machine, name=name, input=json.dumps(payload))["executionArn"]
    deadline = time.monotonic() + 60
    while True:
        described: dict[str, Any] = sfn.describe_execution(executionArn=arn)
        if described["status"] != "RUNNING":
            break
        assert time.monotonic() < deadline, "the execution did not finish within 60 s"
        time.sleep(0.1)
    described["history"] = sfn.get_execution_history(executionArn=arn, maxResults=1000)["events"]
    return described


@pytest.mark.usefixtures("aws_credentials")
def test_state_machine_on_moto_retries_and_catches_by_error_name(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    moto = pytest.importorskip(
        "moto", reason="moto is not installed (the local extra: pip install -e '.[local]')"
    )
    pytest.importorskip("yaml", reason="PyYAML is not installed (the local extra: pip install -e '.[local]')")
    for name in ("Flaky", "Fatal", "Recover", "Boom"):
        write_function(tmp_path, name, FUNCTIONS[name])
    (tmp_path / "template.yaml").write_text(TEMPLATE)
    (tmp_path / "flow.asl.json").write_text(json.dumps(FLOW))
    template = Template(tmp_path / "template.yaml", stack_name="e2e")
    definition = template.state_machine("Flow")
    monkeypatch.delenv("GREETING", raising=False)
    before = dict(os.environ)

    with LocalLambda.from_template(template) as endpoint:
        assert endpoint.functions["FlakyFunction"].timeout_s == 10
        assert endpoint.functions["FlakyFunction"].memory_mb == 256
        assert os.environ["GREETING"] == "hello from e2e"
        monkeypatch.setenv("AWS_ENDPOINT_URL_LAMBDA", endpoint.endpoint_url)
        with moto.mock_aws(config={"stepfunctions": {"execute_state_machine": True}}):
            sfn = boto3.client("stepfunctions", region_name=REGION)
            machine = sfn.create_state_machine(
                name="flow", definition=definition, roleArn="arn:aws:iam::123456789012:role/flow"
            )["stateMachineArn"]
            recovered = run_execution(sfn, machine, "recovered", {"run": 1})
            failed = run_execution(sfn, machine, "failed", {"run": 2, "boom": True})
        monkeypatch.delenv("AWS_ENDPOINT_URL_LAMBDA")
    assert dict(os.environ) == before  # everything LocalLambda set is gone again

    assert recovered["status"] == "SUCCEEDED", recovered.get("cause")
    output = json.loads(recovered["output"])
    assert output["recovered"]["attempts"] == 3
    assert output["recovered"]["input"] == {"run": 1}
    assert output["recovered"]["error"]["Error"] == "FatalError"
    assert json.loads(output["recovered"]["error"]["Cause"])["errorMessage"] == "cannot go on"
    failures = [
        event["lambdaFunctionFailedEventDetails"]["error"]
        for event in recovered["history"]
        if event["type"] == "LambdaFunctionFailed"
    ]
    task_failures = [
        event["taskFailedEventDetails"]["error"]
        for event in recovered["history"]
        if event["type"] == "TaskFailed"
    ]
    assert task_failures == ["FlakyError", "FlakyError"]
    assert failures == ["FatalError"]

    # an error no Retry or Catch matches fails the execution with the exception's class name
    assert failed["status"] == "FAILED"
    assert failed["error"] == "BoomError"
    assert json.loads(failed["cause"])["errorMessage"] == "boom on None"

    summary = endpoint.summary()
    assert summary["FlakyFunction"]["invocations"] == 4  # 3 for the first execution, 1 for the second
    assert summary["FlakyFunction"]["errors"] == {"FlakyError": 2}
    assert summary["FatalFunction"]["errors"] == {"FatalError": 2}
    assert summary["RecoverFunction"]["invocations"] == 2
    assert summary["BoomFunction"]["errors"] == {"BoomError": 1}

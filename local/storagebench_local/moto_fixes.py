"""Fixes to moto 5.2.5 that local mode needs to behave as AWS does.

* ``SendTaskFailure`` drops its ``cause``: ``StepFunctionResponse.send_task_failure`` passes only
  the token and the error to the backend, whose parser-based implementation accepts a cause
  too. On AWS the cause reaches the state's Catch (``$.caught.Cause``); the workflow records it
  as the config's error ("step 'verify plan' failed: ..."), so local mode must carry it.
* A Distributed Map's child executions leave no trace: moto's ``DistributedItemProcessorWorker`` runs
  each item's program in the parent's environment with a throw-away ``EventManager``, so their
  events are lost, and ``ListExecutions(mapRunArn=...)`` fails (it only takes a state machine ARN).
  On AWS every item is a child execution with its own history (``ExecutionStarted`` ... its states
  ... ``ExecutionSucceeded``), listed by its map run. The fix runs each item in a frame of its own
  with its own event history, keeps it as a child execution of the map run
  (``<execution:state machine/label:id>``), and answers ``ListExecutions(mapRunArn=...)``,
  ``DescribeExecution`` and ``GetExecutionHistory`` for children as AWS does. The tests count the
  state transitions of each config from those histories, child executions included.
* ``SendTaskHeartbeat`` on a token whose task has not yet begun waiting answers ``InvalidToken``:
  the task registers its token, invokes its resource, and only once the invocation returns sets up
  the heartbeat timer, which ``CallbackEndpoint.notify_heartbeat`` needs. An agent started by that
  invocation can heartbeat first (a loaded machine delays the invocation's return), and an agent
  told its token is invalid stops ("nobody waits for this task"). On AWS the token is valid from
  the moment the task is scheduled. The fix accepts such a heartbeat: the timer it would have
  reset has not started.
* A Lambda task whose call never reaches Lambda (connection refused, or not made in time; clients
  created while another thread creates one from boto3's default session, which is not
  thread-safe, fail too) ends ``States.Runtime``, which no Retry of the workflow names: moto's
  ``StateTaskServiceLambda`` maps only the function's own error and ``ClientError``. Step Functions
  reports an SDK failure reaching Lambda as ``Lambda.SdkClientException``, which the workflow
  retries; the fix names it so (cause: the exception), and creates the ASL's clients one at a time.
  Seen once in CI: a Cleanup failing ``States.Runtime`` after a Provision failure, 14 s into a run.
"""

from __future__ import annotations

import json
import threading
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

_APPLIED: list[bool] = []
_CHILDREN_LOCK = threading.Lock()


@dataclass
class ChildExecution:
    """One child execution of a Distributed Map run, as AWS lists and describes it."""

    arn: str
    name: str
    map_run_arn: str
    state_machine_arn: str
    input: str
    start_date: datetime
    status: str = "RUNNING"
    stop_date: datetime | None = None
    output: str | None = None
    error: str | None = None
    cause: str | None = None
    events: list[dict[str, Any]] = field(default_factory=list)


# map run ARN -> its children, and child ARN -> child (what the patched responses answer from)
CHILDREN: dict[str, list[ChildExecution]] = {}
CHILD_BY_ARN: dict[str, ChildExecution] = {}


def _child_arn(map_run_arn: str, name: str) -> str:
    """``arn:...:mapRun:<machine>/<label>:<run id>`` -> ``arn:...:execution:<machine>/<label>:<name>``."""
    prefix = map_run_arn.replace(":mapRun:", ":execution:", 1).rsplit(":", 1)[0]
    return f"{prefix}:{name}"


def apply() -> None:
    if _APPLIED:
        return
    import inspect

    from moto.core.responses import EmptyResult
    from moto.stepfunctions.responses import StepFunctionResponse

    def send_task_failure(self: Any) -> Any:
        backend = self.stepfunction_backend
        extra = {}
        if "cause" in inspect.signature(backend.send_task_failure).parameters:  # the ASL-running backend
            extra["cause"] = self._get_param("cause")
        backend.send_task_failure(self._get_param("taskToken"), error=self._get_param("error"), **extra)
        return EmptyResult()

    StepFunctionResponse.send_task_failure = send_task_failure  # type: ignore[method-assign]
    _heartbeat_before_the_wait()
    _lambda_transport_failures_are_sdk_client_exceptions()
    _record_distributed_children()
    _answer_for_children(StepFunctionResponse)
    _APPLIED.append(True)


def _heartbeat_before_the_wait() -> None:
    from moto.stepfunctions.parser.asl.eval.callback.callback import CallbackEndpoint

    original = CallbackEndpoint.notify_heartbeat

    def notify_heartbeat(self: Any) -> bool:
        if self._heartbeat_endpoint is None:
            return True  # the token is registered; its heartbeat timer starts once the task waits
        return bool(original(self))

    CallbackEndpoint.notify_heartbeat = notify_heartbeat  # type: ignore[method-assign]


SDK_CLIENT_EXCEPTION = "Lambda.SdkClientException"
_CLIENTS_LOCK = threading.Lock()


def _lambda_transport_failures_are_sdk_client_exceptions() -> None:
    from botocore.exceptions import ConnectTimeoutError, EndpointConnectionError
    from moto.stepfunctions.parser.api import HistoryEventType, TaskFailedEventDetails
    from moto.stepfunctions.parser.asl.component.common.error_name.custom_error_name import CustomErrorName
    from moto.stepfunctions.parser.asl.component.common.error_name.failure_event import FailureEvent
    from moto.stepfunctions.parser.asl.component.state.exec.state_task import lambda_eval_utils
    from moto.stepfunctions.parser.asl.component.state.exec.state_task.service import (
        state_task_service_lambda as service_lambda,
    )
    from moto.stepfunctions.parser.asl.eval.event.event_detail import EventDetails

    create = lambda_eval_utils.boto_client_for  # type: ignore[attr-defined]

    def boto_client_for(*args: Any, **kwargs: Any) -> Any:
        with _CLIENTS_LOCK:
            return create(*args, **kwargs)

    lambda_eval_utils.boto_client_for = boto_client_for  # type: ignore[attr-defined]
    original = service_lambda.StateTaskServiceLambda._from_error

    def _from_error(self: Any, env: Any, ex: Exception) -> Any:
        # Only a call that never reached Lambda (no connection): a read timeout or a connection
        # closed mid-answer may have run the handler, and a retry would run it twice beside itself.
        # moto's own heartbeat and task timeouts are TimeoutErrors (OSError): the callback names them.
        if not isinstance(ex, EndpointConnectionError | ConnectTimeoutError):
            return original(self, env, ex)
        return FailureEvent(
            env=env,
            error_name=CustomErrorName(SDK_CLIENT_EXCEPTION),
            event_type=HistoryEventType.TaskFailed,
            event_details=EventDetails(  # type: ignore[typeddict-item]
                taskFailedEventDetails=TaskFailedEventDetails(
                    error=SDK_CLIENT_EXCEPTION,
                    cause=f"{type(ex).__name__}: {ex}",
                    resource=self._get_sfn_resource(),
                    resourceType=self._get_sfn_resource_type(),
                )
            ),
        )

    service_lambda.StateTaskServiceLambda._from_error = _from_error  # type: ignore[method-assign]


def _record_distributed_children() -> None:
    from moto.stepfunctions.parser.api import HistoryEventType
    from moto.stepfunctions.parser.asl.component.state.exec.state_map.iteration.itemprocessor import (
        distributed_item_processor_worker as worker_module,
    )
    from moto.stepfunctions.parser.asl.eval.event.event_manager import EventHistoryContext, EventManager
    from moto.stepfunctions.parser.asl.eval.program_state import ProgramError, ProgramStopped

    worker_class = worker_module.DistributedItemProcessorWorker
    original = worker_class._eval_job

    def eval_job(self: Any, env: Any, job: Any) -> None:
        record = self._map_run_record
        name = str(uuid.uuid4())
        child = ChildExecution(
            arn=_child_arn(record.map_run_arn, name),
            name=name,
            map_run_arn=record.map_run_arn,
            state_machine_arn=record.map_state_machine_arn,
            input=json.dumps(job.job_input, separators=(",", ":")),
            start_date=datetime.now(UTC),
        )
        frame = env.open_inner_frame(event_history_context=EventHistoryContext.of_program_start())
        frame.event_manager = EventManager()  # the child's own history, ids from 1
        frame.event_manager.add_event(
            context=frame.event_history_context,
            event_type=HistoryEventType.ExecutionStarted,
            event_details=_details(
                "executionStartedEventDetails",
                {
                    "input": child.input,
                    "inputDetails": {"truncated": False},
                    "roleArn": env.aws_execution_details.role_arn,
                },
            ),
        )
        with _CHILDREN_LOCK:
            CHILDREN.setdefault(record.map_run_arn, []).append(child)
            CHILD_BY_ARN[child.arn] = child
        try:
            original(self, frame, job)
        finally:
            state = frame.program_state()
            if job.job_output is not None and not isinstance(state, (ProgramError, ProgramStopped)):
                child.status, child.output = "SUCCEEDED", json.dumps(job.job_output, separators=(",", ":"))
                kind = HistoryEventType.ExecutionSucceeded
                details = _details(
                    "executionSucceededEventDetails",
                    {"output": child.output, "outputDetails": {"truncated": False}},
                )
            elif isinstance(state, ProgramStopped):
                child.status = "ABORTED"
                kind, details = (
                    HistoryEventType.ExecutionAborted,
                    _details("executionAbortedEventDetails", {}),
                )
            else:
                error: dict[str, Any] = dict(state.error or {}) if isinstance(state, ProgramError) else {}
                child.status, child.error, child.cause = "FAILED", error.get("error"), error.get("cause")
                kind, details = (
                    HistoryEventType.ExecutionFailed,
                    _details("executionFailedEventDetails", error),
                )
            frame.event_manager.add_event(
                context=frame.event_history_context, event_type=kind, event_details=details
            )
            child.stop_date = datetime.now(UTC)
            child.events = _with_selected_input(child, frame.event_manager.get_event_history())
            env.delete_frame(frame)

    worker_class._eval_job = eval_job  # type: ignore[method-assign]


def _details(kind: str, values: dict[str, Any]) -> Any:
    """moto's ``EventDetails`` (a TypedDict of every kind of details) holding one kind."""
    from moto.stepfunctions.parser.asl.eval.event.event_detail import EventDetails

    return EventDetails(**{kind: values})  # type: ignore[misc]


def _with_selected_input(child: ChildExecution, events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A child's input is what the Map's ItemSelector made of its item (AWS), not the raw item: the
    selector runs inside the worker, so the input its first state received is put back on the child
    and on its ExecutionStarted event."""
    entered = next((e for e in events if str(e["type"]).endswith("StateEntered")), None)
    if entered is not None and events and events[0]["type"] == "ExecutionStarted":
        child.input = entered["stateEnteredEventDetails"]["input"]
        events[0]["executionStartedEventDetails"]["input"] = child.input
    return events


def _answer_for_children(response_class: Any) -> None:
    """ListExecutions by map run, DescribeExecution and GetExecutionHistory of a child execution."""
    from moto.core.responses import ActionResult

    list_executions = response_class.list_executions
    describe_execution = response_class.describe_execution
    get_execution_history = response_class.get_execution_history

    def list_children(self: Any) -> Any:
        map_run_arn = self._get_param("mapRunArn")
        if not map_run_arn:
            return list_executions(self)
        with _CHILDREN_LOCK:
            children = list(CHILDREN.get(map_run_arn, []))
        summaries = []
        for child in sorted(children, key=lambda c: c.start_date, reverse=True):
            summary: dict[str, Any] = {
                "executionArn": child.arn,
                "name": child.name,
                "mapRunArn": child.map_run_arn,
                "stateMachineArn": child.state_machine_arn,
                "status": child.status,
                "startDate": child.start_date,
            }
            if child.stop_date is not None:
                summary["stopDate"] = child.stop_date
            summaries.append(summary)
        return ActionResult({"executions": summaries})

    def describe_child(self: Any) -> Any:
        child = CHILD_BY_ARN.get(self._get_param("executionArn"))
        if child is None:
            return describe_execution(self)
        described: dict[str, Any] = {
            "executionArn": child.arn,
            "name": child.name,
            "mapRunArn": child.map_run_arn,
            "stateMachineArn": child.state_machine_arn,
            "status": child.status,
            "startDate": child.start_date,
            "input": child.input,
        }
        optional = {
            "stopDate": child.stop_date,
            "output": child.output,
            "error": child.error,
            "cause": child.cause,
        }
        described.update({key: value for key, value in optional.items() if value is not None})
        return ActionResult(described)

    def child_history(self: Any) -> Any:
        child = CHILD_BY_ARN.get(self._get_param("executionArn"))
        if child is None:
            return get_execution_history(self)
        return ActionResult({"events": list(child.events)})

    response_class.list_executions = list_children
    response_class.describe_execution = describe_child
    response_class.get_execution_history = child_history

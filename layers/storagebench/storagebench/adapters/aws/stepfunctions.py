"""The API's ``RunLauncher`` on Step Functions: a run is one execution named by its run id.

Works on AWS and on moto's interpreter (local mode) alike. Provider errors become the workflow's
named errors (``aws_call``), which the API answers with 503.
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

from storagebench.adapters.aws.errors import ClientError, aws_call, error_code, workflow_error
from storagebench.api.ports import Execution, InputTooLargeError, execution_input
from storagebench.core.clock import iso
from storagebench.core.errors import InvalidRequestError, WorkflowError


def _iso(moment: Any) -> str | None:
    if moment is None:
        return None
    if isinstance(moment, datetime):
        return iso(moment)
    return str(moment)


def _input_too_large(exc: ClientError) -> bool:
    """StartExecution's refusal of an input over its 256 KiB (a length constraint on ``input``)."""
    message = str(exc.response.get("Error", {}).get("Message", "")).lower()
    return error_code(exc) in ("ValidationException", "InvalidExecutionInput") and (
        "262144" in message or ("input" in message and ("length" in message or "size" in message))
    )


class StepFunctionsLauncher:
    def __init__(self, sfn: Any, state_machine_arn: str) -> None:
        if ":stateMachine:" not in state_machine_arn:
            raise ValueError(f"not a state machine ARN: {state_machine_arn!r}")
        self.sfn = sfn
        self.state_machine_arn = state_machine_arn

    def execution_arn(self, run_id: str) -> str:
        """arn:...:stateMachine:<name> -> arn:...:execution:<name>:<run id>."""
        return self.state_machine_arn.replace(":stateMachine:", ":execution:", 1) + f":{run_id}"

    def start(self, run_id: str, document: dict[str, Any]) -> str:
        text = execution_input(document)
        try:
            response = self.sfn.start_execution(
                stateMachineArn=self.state_machine_arn, name=run_id, input=text
            )
        except ClientError as exc:
            if error_code(exc) == "ExecutionAlreadyExists":
                raise InvalidRequestError(f"run {run_id} already exists; a run id cannot be reused") from exc
            if _input_too_large(exc):
                raise InputTooLargeError(len(text.encode("utf-8"))) from exc
            raise workflow_error(exc, f"start run {run_id}", WorkflowError) from exc
        return str(response["executionArn"])

    def describe(self, run_id: str) -> Execution | None:
        try:
            found = self.sfn.describe_execution(executionArn=self.execution_arn(run_id))
        except ClientError as exc:
            if error_code(exc) == "ExecutionDoesNotExist":
                return None
            raise workflow_error(exc, f"describe run {run_id}", WorkflowError) from exc
        try:
            document = json.loads(found["input"]) if found.get("input") else None
        except ValueError:
            document = None
        return Execution(
            run_id=run_id,
            arn=str(found["executionArn"]),
            status=found["status"],
            started_at=_iso(found.get("startDate")) or "",
            stopped_at=_iso(found.get("stopDate")),
            error=found.get("error"),
            cause=found.get("cause"),
            input=document,
        )

    def stop(self, run_id: str, error: str, cause: str) -> None:
        with aws_call(f"stop run {run_id}", WorkflowError):
            self.sfn.stop_execution(executionArn=self.execution_arn(run_id), error=error, cause=cause)

"""The task-token calls of Step Functions (JSON 1.0 protocol): heartbeat, success, failure.

``TaskTimedOut`` and ``TaskDoesNotExist`` mean the workflow has stopped waiting (a timeout, an
abort, a newer attempt): ``TaskGoneError`` tells the agent to stop, not to retry.
"""

from __future__ import annotations

import json
from typing import Any, Dict

from storagebench.agent.aws.client import AwsError, Client, regional

GONE = frozenset({"TaskTimedOut", "TaskDoesNotExist", "InvalidToken"})
MAX_CAUSE = 32_768  # SendTaskFailure's cause limit
MAX_ERROR = 256


class TaskGoneError(RuntimeError):
    """Step Functions no longer waits on this token."""


class StepFunctions:
    def __init__(self, client: Client, token: str) -> None:
        self.client = client
        self.token = token
        self.url = (client.override or regional("states", client.region)) + "/"

    def _call(self, action: str, body: Dict[str, Any]) -> None:
        try:
            self.client.request(
                action,
                "POST",
                self.url,
                json.dumps(body).encode("utf-8"),
                {"Content-Type": "application/x-amz-json-1.0", "X-Amz-Target": f"AWSStepFunctions.{action}"},
            )
        except AwsError as exc:
            if exc.code in GONE:
                raise TaskGoneError(f"{action}: {exc}") from exc
            raise

    def heartbeat(self) -> None:
        self._call("SendTaskHeartbeat", {"taskToken": self.token})

    def success(self, output: Dict[str, Any]) -> None:
        self._call("SendTaskSuccess", {"taskToken": self.token, "output": json.dumps(output)})

    def failure(self, error: str, cause: str) -> None:
        self._call(
            "SendTaskFailure",
            {"taskToken": self.token, "error": error[:MAX_ERROR], "cause": cause[-MAX_CAUSE:]},
        )

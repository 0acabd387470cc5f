"""The API's ``RunSweeper``: invoke the SweepRun function asynchronously for a stopped run.

SweepRun (``workflow.steps.sweep_run.abort_run``) releases every config of the run by its tags, again once a
launch under way at the stop must have ended, and records the run FAILED; it takes minutes, longer
than an API call should wait. An asynchronous invocation is retried by Lambda (twice) if it fails.
"""

from __future__ import annotations

from typing import Any

from storagebench.adapters.aws.errors import aws_call
from storagebench.core.errors import WorkflowError
from storagebench.workflow.events import SweepRunEvent


class LambdaSweeper:
    def __init__(self, lambda_client: Any, function_name: str) -> None:
        self.client = lambda_client
        self.function_name = function_name

    def sweep(self, event: SweepRunEvent) -> None:
        with aws_call(f"start the sweep of run {event.run_id}", WorkflowError):
            self.client.invoke(
                FunctionName=self.function_name,
                InvocationType="Event",
                Payload=event.model_dump_json().encode(),  # what SweepRun's handler parses
            )

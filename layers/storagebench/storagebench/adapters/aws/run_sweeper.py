"""The API's ``RunSweeper``: invoke the SweepRun function asynchronously for a stopped run.

SweepRun (``workflow.steps.abort_run``) releases every config of the run by its tags, again once a
launch under way at the stop must have ended, and records the run FAILED; it takes minutes, longer
than an API call should wait. An asynchronous invocation is retried by Lambda (twice) if it fails.
"""

from __future__ import annotations

import json
from typing import Any

from storagebench.adapters.aws.errors import aws_call
from storagebench.core.errors import WorkflowError


class LambdaSweeper:
    def __init__(self, lambda_client: Any, function_name: str) -> None:
        self.client = lambda_client
        self.function_name = function_name

    def sweep(
        self,
        run_id: str,
        suite: str,
        started_at: str,
        config_ids: list[str],
        caught: dict[str, str],
        stopped_at: str,
    ) -> None:
        payload = {
            "run_id": run_id,
            "suite": suite,
            "started_at": started_at,
            "config_ids": config_ids,
            "caught": caught,
            "stopped_at": stopped_at,
        }
        with aws_call(f"start the sweep of run {run_id}", WorkflowError):
            self.client.invoke(
                FunctionName=self.function_name, InvocationType="Event", Payload=json.dumps(payload).encode()
            )

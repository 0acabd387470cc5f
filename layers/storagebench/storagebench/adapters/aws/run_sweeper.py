"""The API's ``RunSweeper``: invoke the SweepRun function asynchronously for a stopped run.

SweepRun (``workflow.steps.abort_run``) releases every config of the run by its tags and records
the run FAILED; it may take minutes (EFS mount targets), longer than an API call should wait.
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
        self, run_id: str, suite: str, started_at: str, config_ids: list[str], caught: dict[str, str]
    ) -> None:
        payload = {
            "run_id": run_id,
            "suite": suite,
            "started_at": started_at,
            "config_ids": config_ids,
            "caught": caught,
        }
        with aws_call(f"start the sweep of run {run_id}", WorkflowError):
            self.client.invoke(
                FunctionName=self.function_name, InvocationType="Event", Payload=json.dumps(payload).encode()
            )

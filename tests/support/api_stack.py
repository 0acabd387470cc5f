"""The API on moto: the stack's table (from template.yaml), bucket and state machine (fixture ``stack``).

The launcher, store and report links are the real AWS adapters; the sweeper records what it is
asked (it invokes a Lambda function on AWS). ``api`` is the Lambda handler of functions/api.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import boto3
import pytest
from moto import mock_aws
from tests.support.modules import load_module
from tests.support.moto_env import moto_credentials

from storagebench.adapters.aws.dynamodb import DynamoResultsStore
from storagebench.adapters.aws.report_links import S3ReportLinks
from storagebench.adapters.aws.stepfunctions import StepFunctionsLauncher
from storagebench.api.service import ApiService
from storagebench.core.guardrails import Guardrails
from storagebench.wiring import api as wiring
from storagebench.workflow.events import SweepRunEvent
from storagebench_local.template import Template

REPO = Path(__file__).resolve().parents[2]
REGION = "us-east-1"
TABLE = "storagebench-results"
BUCKET = "storagebench-artifacts"
EVENTS = REPO / "events"


@dataclass
class RecordingSweeper:
    calls: list[dict[str, Any]] = field(default_factory=list)

    def sweep(self, event: SweepRunEvent) -> None:
        self.calls.append(event.model_dump())


class CountingLauncher(StepFunctionsLauncher):
    """The real launcher, counting the executions it starts."""

    def __init__(self, sfn: Any, arn: str) -> None:
        super().__init__(sfn, arn)
        self.started: list[str] = []

    def start(self, run_id: str, document: dict[str, Any]) -> str:
        arn = super().start(run_id, document)
        self.started.append(run_id)
        return arn


@dataclass
class Stack:
    service: ApiService
    store: DynamoResultsStore
    launcher: CountingLauncher
    sweeper: RecordingSweeper
    sfn: Any
    s3: Any
    handler: Any


@functools.cache
def _table_kwargs() -> dict[str, Any]:
    """The results table's create_table arguments, read from template.yaml once a session (its
    pure-Python YAML parse cost each of the tier's ~150 stacks 0.2-0.5 s); create_table only reads them."""
    return Template(REPO / "template.yaml").table_kwargs("ResultsTable", TABLE)


POWERTOOLS_OFF = {
    "POWERTOOLS_TRACE_DISABLED": "true",
    "POWERTOOLS_METRICS_DISABLED": "true",
    "POWERTOOLS_LOG_LEVEL": "ERROR",
    "POWERTOOLS_SERVICE_NAME": "storagebench",
    "POWERTOOLS_METRICS_NAMESPACE": "storagebench",
}


def load_api_handler() -> Any:
    return load_module("storagebench_api_app", REPO / "functions" / "api" / "app.py").handler


@pytest.fixture
def stack(monkeypatch: pytest.MonkeyPatch) -> Iterator[Stack]:
    moto_credentials(monkeypatch, REGION, **POWERTOOLS_OFF)
    monkeypatch.delenv("AWS_ENDPOINT_URL_LAMBDA", raising=False)
    with mock_aws():
        dynamodb = boto3.client("dynamodb", region_name=REGION)
        dynamodb.create_table(**_table_kwargs())
        s3 = boto3.client("s3", region_name=REGION)
        s3.create_bucket(Bucket=BUCKET)
        sfn = boto3.client("stepfunctions", region_name=REGION)
        machine = sfn.create_state_machine(
            name="storagebench-benchmark",
            definition='{"StartAt": "Plan", "States": {"Plan": {"Type": "Pass", "End": true}}}',
            roleArn="arn:aws:iam::123456789012:role/storagebench-states",
        )["stateMachineArn"]
        store = DynamoResultsStore(dynamodb, TABLE)
        launcher = CountingLauncher(sfn, machine)
        sweeper = RecordingSweeper()
        service = ApiService(store, launcher, S3ReportLinks(s3, BUCKET), sweeper, Guardrails())
        wiring.configure(service)
        try:
            yield Stack(service, store, launcher, sweeper, sfn, s3, load_api_handler())
        finally:
            wiring.configure(None)

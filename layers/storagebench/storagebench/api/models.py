"""The API's response bodies (their JSON Schemas are the OpenAPI document's responses)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from storagebench.api.ports import Execution
from storagebench.planning.preview import RunPreview


class _Body(BaseModel):
    model_config = ConfigDict(extra="forbid")


class RunCreated(_Body):
    run_id: str
    execution_arn: str
    status: Literal["STARTED"] = "STARTED"
    location: str = Field(description="where to follow the run: GET this path")
    replayed: bool = Field(
        default=False,
        description="true: the Idempotency-Key had started this run already (nothing new started)",
    )
    max_concurrency: int
    estimated_cost_usd: float = Field(description="the preview's estimate (see dry_run for how)")


class DryRun(_Body):
    dry_run: Literal[True] = True
    preview: RunPreview


class RunList(_Body):
    suite: str | None = Field(description="null: the runs in progress")
    runs: list[dict[str, Any]] = Field(description="run items, newest first (the request left out)")
    next_cursor: str | None = Field(description="pass as `cursor` for the next page; null at the end")


class ConfigProgress(_Body):
    config_id: str
    status: str
    updated_at: str | None = None
    errors: list[dict[str, Any]] = Field(default_factory=list)
    stamps: dict[str, str] = Field(default_factory=dict, description="when each status was first recorded")


class RunDetail(_Body):
    run_id: str
    status: str = Field(description="the run's status in the store, else its execution's")
    execution: Execution | None = Field(description="the Step Functions execution, null when none exists")
    run: dict[str, Any] | None = Field(description="the stored run item; null before Plan recorded it")
    configs: list[ConfigProgress]
    results: list[dict[str, Any]] = Field(description="each measurement's repetitions aggregated")
    economics: dict[str, Any] | None = Field(description="monthly and run cost, deltas and verdicts")
    regressions: list[dict[str, Any]]
    notes: list[str] = Field(default_factory=list)


class ReportLink(_Body):
    run_id: str
    format: Literal["html", "md", "csv"]
    url: str = Field(description="a presigned GET link to the report")
    expires_in_s: int


class ResultsPage(_Body):
    storage: str
    workload: str
    points: list[dict[str, Any]] = Field(description="each repetition: started_at, run_id, config_id, record")
    next_cursor: str | None


class RunStopped(_Body):
    run_id: str
    execution_arn: str | None
    status: Literal["STOPPING"] = "STOPPING"
    cleanup: Literal["started", "not_needed"] = Field(
        description="not_needed: the run was never recorded, so nothing was launched"
    )

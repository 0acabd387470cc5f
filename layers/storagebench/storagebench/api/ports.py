"""What the API needs from the outside world (implemented in ``adapters.aws`` and by local mode).

The results store is the workflow's ``ResultsStore``; these three are the API's own.
"""

from __future__ import annotations

import json
from typing import Any, Literal, Protocol

from pydantic import BaseModel, ConfigDict, Field

from storagebench.workflow.events import SweepRunEvent

ExecutionStatus = Literal["RUNNING", "SUCCEEDED", "FAILED", "TIMED_OUT", "ABORTED", "PENDING_REDRIVE"]
EXECUTION_INPUT_LIMIT = 262_144  # StartExecution's input: at most 256 KiB, counted as UTF-8 bytes


def execution_input(document: Any) -> str:
    """The exact input a run's execution starts with: ``RunLauncher.start`` sends this text."""
    return json.dumps(document)


class InputTooLargeError(Exception):
    """The launcher was told the execution input is over ``EXECUTION_INPUT_LIMIT`` (its size in bytes)."""

    def __init__(self, size: int) -> None:
        super().__init__(f"execution input of {size:,} bytes; Step Functions takes {EXECUTION_INPUT_LIMIT:,}")
        self.size = size


class Execution(BaseModel):
    """A run's Step Functions execution (the run id is the execution name)."""

    model_config = ConfigDict(extra="forbid")

    run_id: str
    arn: str
    status: ExecutionStatus
    started_at: str
    stopped_at: str | None = None
    error: str | None = None
    cause: str | None = None
    input: Any = Field(default=None, exclude=True, description="the request document it was started with")


class RunLauncher(Protocol):
    def start(self, run_id: str, document: dict[str, Any]) -> str:
        """Start the workflow on a request under this run id (input: ``execution_input``); returns the
        execution ARN. ``InputTooLargeError`` when Step Functions refuses the input's size."""

    def describe(self, run_id: str) -> Execution | None:
        """The run's execution, or None when there is none by that name."""

    def stop(self, run_id: str, error: str, cause: str) -> None:
        """Stop a running execution (what it launched is not touched: see RunSweeper)."""


class RunSweeper(Protocol):
    def sweep(self, event: SweepRunEvent) -> None:
        """Start releasing everything of a run stopped at ``event.stopped_at`` by its tags, again once what
        was under way then has ended, and recording it FAILED (``workflow.steps.sweep_run.abort_run``, the
        SweepRun step); returns once that is under way."""


class ArtifactLink(BaseModel):
    """A time-limited GET link to one artifact, with the artifact's key."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    key: str
    url: str


class ReportLinks(Protocol):
    """Time-limited GET links to the artifacts a caller may download (reports, a run's exports)."""

    def link(self, key: str, expires_s: int) -> str | None:
        """A time-limited GET link to an artifact, or None when the artifact does not exist."""

    def links_under(self, prefix: str, expires_s: int) -> list[ArtifactLink]:
        """A link to every artifact whose key starts with ``prefix``, in key order (none: empty)."""

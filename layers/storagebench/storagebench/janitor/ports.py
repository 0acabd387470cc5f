"""What the janitor needs from the outside: the stack's tagged resources and the runs in progress."""

from __future__ import annotations

from typing import Any, Protocol

from storagebench.janitor.models import ResourceKind, TaggedResource


class TaggedResources(Protocol):
    def tagged(self, kind: ResourceKind, stack: str) -> list[TaggedResource]:
        """Every resource of this kind whose ``storagebench:stack`` tag is ``stack`` (any state).

        Raises a WorkflowError when the provider cannot be asked."""

    def delete(self, resource: TaggedResource) -> str:
        """Terminate or delete it (idempotent: already gone is done); returns what was done.

        Raises ResourceBusyError while it cannot go yet (EFS mount targets still deleting), another
        WorkflowError when the provider refuses."""


class RunRecords(Protocol):
    def runs_in_progress_page(
        self, limit: int = 100, cursor: str | None = None
    ) -> tuple[list[dict[str, Any]], str | None]:
        """One page of the runs still RUNNING or STOPPING, newest first, and the next page's cursor."""

    def fail_stuck_run(self, run_id: str, reason: str, ended_at: str) -> bool:
        """Record a RUNNING or STOPPING run as FAILED with the reason; False when it is neither."""


class RunExecutions(Protocol):
    def stop(self, run_id: str, error: str, cause: str) -> None:
        """Stop the run's workflow execution (a no-op when it already ended).

        Raises a WorkflowError when the provider refuses or the execution cannot be found."""

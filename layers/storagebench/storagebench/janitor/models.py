"""What the janitor sees, decides and reports.

Adapters describe every resource carrying the stack's tag as a ``TaggedResource``; the janitor
decides which of them are leaks (``plan.plan_sweep``) and records what happened to each as a
``Leak``; stuck runs become ``StuckRun``; the whole sweep is one ``SweepReport``.
"""

from __future__ import annotations

from collections import Counter
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

ResourceKind = Literal[
    "gateway-file-share",
    "storage-gateway",
    "ec2-instance",
    "ebs-volume",
    "efs-file-system",
    "fsx-file-system",
    "security-group",
    "placement-group",
]
RESOURCE_KINDS: tuple[ResourceKind, ...] = (
    "gateway-file-share",
    "storage-gateway",
    "ec2-instance",
    "ebs-volume",
    "efs-file-system",
    "fsx-file-system",
    "security-group",
    "placement-group",
)
Outcome = Literal["deleted", "pending", "failed"]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Attachment(_Model):
    instance_id: str
    delete_on_termination: bool


class TaggedResource(_Model):
    """One resource as its provider describes it (state lower-cased: running, available, deleting...)."""

    kind: ResourceKind
    resource_id: str
    state: str
    tags: dict[str, str]
    attachments: list[Attachment] = Field(default_factory=list, description="EBS volumes only")


class Leak(_Model):
    """An expired resource of this stack and what the sweep did about it."""

    kind: ResourceKind
    resource_id: str
    run_id: str
    config_id: str | None
    expires_at: str
    overdue_s: int = Field(ge=0, description="how long past its expires-at tag the sweep found it")
    outcome: Outcome
    detail: str


class Skipped(_Model):
    """A resource of this stack the sweep saw but must not touch, and why (a question for a human)."""

    kind: ResourceKind
    resource_id: str
    reason: str


class StuckRun(_Model):
    run_id: str
    suite: str | None
    expires_at: str
    overdue_s: int = Field(ge=0)
    reason: str
    execution: str = Field(
        default="not asked", description="what became of its workflow execution: stopped, or why not"
    )


class SweepReport(_Model):
    stack: str
    swept_at: str
    leaks: list[Leak] = Field(default_factory=list)
    skipped: list[Skipped] = Field(default_factory=list)
    not_expired: int = Field(default=0, ge=0, description="resources of live runs, left alone")
    stuck_runs: list[StuckRun] = Field(default_factory=list)
    errors: list[str] = Field(
        default_factory=list, description="what the sweep could not look at or do (it went on with the rest)"
    )
    notified: list[str] = Field(default_factory=list)
    notification_failures: list[str] = Field(default_factory=list)

    def swept_by_kind(self) -> dict[str, int]:
        """Leaks deleted (or going with their instance), per resource kind: the LeaksSwept metric."""
        return dict(Counter(leak.kind for leak in self.leaks if leak.outcome == "deleted"))

    def problems(self) -> list[str]:
        """What the sweep could not do: lookups that failed and leaks it could not delete."""
        failed = [f"{x.kind} {x.resource_id}: {x.detail}" for x in self.leaks if x.outcome == "failed"]
        return [*self.errors, *failed]

    def counts(self) -> dict[str, int]:
        """The sweep's metrics (name -> value); LeaksSwept is also emitted per ResourceType."""
        return {
            "LeaksSwept": sum(self.swept_by_kind().values()),
            "LeaksPending": sum(1 for x in self.leaks if x.outcome == "pending"),
            "StuckRunsFailed": len(self.stuck_runs),
            "JanitorErrors": len(self.problems()),
            "NotificationFailures": len(self.notification_failures),
        }

    def raise_if_incomplete(self) -> None:
        problems = self.problems()
        if problems:
            raise SweepIncompleteError(
                f"the sweep of {self.stack} left {len(problems)} problem(s) (the next sweep retries): "
                + "; ".join(problems)
            )


class SweepIncompleteError(Exception):
    """The sweep left an expired resource or a lookup behind (raised after its report is published,
    so the function's Errors metric and the scheduler's retry see it)."""

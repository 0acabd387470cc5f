"""The janitor's decisions, pure: what is a leak, what is left alone and why, stuck runs, its report."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from storagebench.core.errors import ProvisioningError, ResourceBusyError, ThrottledError, WorkflowError
from storagebench.core.tags import TAG_CONFIG, TAG_EXPIRES, TAG_RUN, TAG_STACK
from storagebench.janitor import Janitor, SweepIncompleteError
from storagebench.janitor.models import Attachment, ResourceKind, TaggedResource
from storagebench.janitor.plan import plan_sweep
from storagebench.notify import LogNotifier

STACK = "sb"
NOW = datetime(2030, 1, 2, 12, 0, 0, tzinfo=UTC)
PAST, FUTURE = "2030-01-02T11:00:00Z", "2030-01-02T13:00:00Z"


def res(
    kind: ResourceKind,
    rid: str,
    state: str = "available",
    expires: str | None = PAST,
    stack: str | None = STACK,
    run: str | None = "r1",
    attachments: list[Attachment] | None = None,
) -> TaggedResource:
    tags = {TAG_CONFIG: "c1"}
    for key, value in ((TAG_EXPIRES, expires), (TAG_STACK, stack), (TAG_RUN, run)):
        if value is not None:
            tags[key] = value
    return TaggedResource(kind=kind, resource_id=rid, state=state, tags=tags, attachments=attachments or [])


def test_only_expired_resources_of_this_stack_are_leaks() -> None:
    found = [
        res("ec2-instance", "i-old", "running"),
        res("ec2-instance", "i-live", "running", expires=FUTURE),
        res("ec2-instance", "i-other", "running", stack="other"),
        res("ec2-instance", "i-gone", "terminated"),
        res("ebs-volume", "vol-old"),
        res("ebs-volume", "vol-deleting", "deleting"),
        res("efs-file-system", "fs-old"),
        res("fsx-file-system", "fs-lustre", "available"),
        res("ebs-volume", "vol-norun", run=None),
        res("ebs-volume", "vol-naive", expires="2030-01-02T11:00:00"),  # no zone: ambiguous
        res("ebs-volume", "vol-noexp", expires=None),
    ]
    plan = plan_sweep(found, STACK, NOW)
    assert [r.resource_id for r, _ in plan.delete] == ["i-old", "vol-old", "fs-old", "fs-lustre"]
    assert all(leak.overdue_s == 3600 and leak.run_id == "r1" for _, leak in plan.delete)
    assert plan.not_expired == 1
    assert {s.resource_id: s.reason.split(" ")[0] for s in plan.skipped} == {
        "vol-norun": "carries",
        "vol-naive": "storagebench:expires-at",
        "vol-noexp": "storagebench:expires-at",
    }


def test_the_deadline_itself_counts_as_expired() -> None:
    plan = plan_sweep([res("ebs-volume", "vol-1", expires="2030-01-02T12:00:00+00:00")], STACK, NOW)
    assert [leak.overdue_s for _, leak in plan.delete] == [0]


@pytest.mark.parametrize(
    ("instance_state", "delete_on_termination", "expected"),
    [
        ("running", True, ("settled", "deleted", "goes with instance i-1")),
        ("running", False, ("settled", "pending", "detaches when i-1 terminates")),
        ("shutting-down", False, ("settled", "pending", "detaches when i-1 terminates")),
        ("shutting-down", True, None),  # Cleanup already terminated it: the volume is on its way
    ],
)
def test_an_attached_volume_follows_its_instance(
    instance_state: str, delete_on_termination: bool, expected: tuple[str, str, str] | None
) -> None:
    volume = res(
        "ebs-volume",
        "vol-1",
        "in-use",
        attachments=[Attachment(instance_id="i-1", delete_on_termination=delete_on_termination)],
    )
    plan = plan_sweep([res("ec2-instance", "i-1", instance_state), volume], STACK, NOW)
    assert [r.resource_id for r, _ in plan.delete] == (["i-1"] if instance_state == "running" else [])
    if expected is None:
        assert plan.settled == [] and plan.skipped == []
    else:
        (leak,) = plan.settled
        assert (leak.resource_id, leak.outcome) == ("vol-1", expected[1]) and expected[2] in leak.detail


def test_a_volume_attached_to_someone_elses_instance_is_left_alone() -> None:
    volume = res(
        "ebs-volume",
        "vol-1",
        "in-use",
        attachments=[Attachment(instance_id="i-x", delete_on_termination=True)],
    )
    plan = plan_sweep([volume, res("ec2-instance", "i-live", "running", expires=FUTURE)], STACK, NOW)
    assert plan.delete == [] and plan.settled == []
    assert "attached to i-x, which is not an expired instance of this stack" in plan.skipped[0].reason


class FakeResources:
    def __init__(self, found: list[TaggedResource], refuse: dict[str, Exception] | None = None) -> None:
        self.found = found
        self.refuse = refuse or {}
        self.deleted: list[str] = []
        self.broken_kinds: set[str] = set()

    def tagged(self, kind: ResourceKind, stack: str) -> list[TaggedResource]:
        if kind in self.broken_kinds:
            raise ThrottledError(f"list {kind}: Throttling")
        return [r for r in self.found if r.kind == kind and r.tags.get(TAG_STACK) == stack]

    def delete(self, resource: TaggedResource) -> str:
        if resource.resource_id in self.refuse:
            raise self.refuse[resource.resource_id]
        self.deleted.append(resource.resource_id)
        return "deleted"


class FakeRuns:
    def __init__(self, runs: list[dict[str, Any]]) -> None:
        self.runs = {r["run_id"]: r for r in runs}

    def runs_in_progress_page(
        self, limit: int = 100, cursor: str | None = None
    ) -> tuple[list[dict[str, Any]], str | None]:
        running = [r for r in self.runs.values() if r["status"] in ("RUNNING", "STOPPING")]
        start = int(cursor or 0)
        page = running[start : start + limit]
        return page, (str(start + limit) if start + limit < len(running) else None)

    def fail_stuck_run(self, run_id: str, reason: str, ended_at: str) -> bool:
        if self.runs[run_id]["status"] not in ("RUNNING", "STOPPING"):
            return False
        self.runs[run_id].update(status="FAILED", failure_reason=reason, ended_at=ended_at)
        return True


class Clock:
    def now(self) -> datetime:
        return NOW


def janitor(resources: FakeResources, runs: FakeRuns) -> tuple[Janitor, LogNotifier]:
    notifier = LogNotifier()
    return Janitor(resources=resources, runs=runs, notifier=notifier, stack=STACK, clock=Clock()), notifier


def run(run_id: str, expires: str) -> dict[str, Any]:
    return {
        "run_id": run_id,
        "suite": "nightly",
        "status": "RUNNING",
        "expires_at": expires,
        "started_at": "x",
    }


def test_stuck_runs_past_their_deadline_fail_across_pages_and_live_ones_stay() -> None:
    runs = FakeRuns([run(f"old-{n}", PAST) for n in range(150)] + [run("live", FUTURE), run("odd", "soon")])
    sweeper, notifier = janitor(FakeResources([]), runs)
    report = sweeper.sweep()
    assert len(report.stuck_runs) == 150 and runs.runs["live"]["status"] == "RUNNING"
    assert runs.runs["old-7"]["failure_reason"].startswith("still RUNNING 1.0 h after its deadline")
    assert report.errors == ["run odd: expires_at is 'soon', not an ISO 8601 time; left RUNNING"]
    assert [n.kind for n in notifier.sent] == ["stuck-run"] * 150
    assert report.counts()["StuckRunsFailed"] == 150


def test_a_stopping_run_past_its_deadline_fails_too() -> None:
    """A stop records STOPPING and SweepRun ends the run; if SweepRun failed for good, the janitor does."""
    stopping = {**run("stopped", PAST), "status": "STOPPING"}
    runs = FakeRuns([stopping, {**run("done", PAST), "status": "FAILED"}])
    report = janitor(FakeResources([]), runs)[0].sweep()
    assert [s.run_id for s in report.stuck_runs] == ["stopped"]
    assert runs.runs["stopped"]["failure_reason"].startswith("still STOPPING 1.0 h after its deadline")


def test_busy_is_pending_refused_is_failed_and_the_rest_still_goes() -> None:
    found = [
        res("efs-file-system", "fs-busy"),
        res("ebs-volume", "vol-refused"),
        res("fsx-file-system", "fs-ok"),
    ]
    refuse = {
        "fs-busy": ResourceBusyError("EFS fs-busy: mount target(s) fsmt-1 still being deleted"),
        "vol-refused": ProvisioningError("delete volume vol-refused: UnauthorizedOperation"),
    }
    resources = FakeResources(found, refuse)
    resources.broken_kinds = {"ec2-instance"}
    report, _ = janitor(resources, FakeRuns([]))[0].sweep(), None
    outcomes = {leak.resource_id: leak.outcome for leak in report.leaks}
    assert outcomes == {"vol-refused": "failed", "fs-busy": "pending", "fs-ok": "deleted"}
    assert resources.deleted == ["fs-ok"]
    assert report.errors == ["list ec2-instance: ThrottledError: list ec2-instance: Throttling"]
    assert report.counts() == {
        "LeaksSwept": 1,
        "LeaksPending": 1,
        "StuckRunsFailed": 0,
        "JanitorErrors": 2,
        "NotificationFailures": 0,
    }
    with pytest.raises(SweepIncompleteError, match="UnauthorizedOperation") as raised:
        report.raise_if_incomplete()
    assert "list ec2-instance" in str(raised.value)


class FakeExecutions:
    def __init__(self, refuse: set[str] | None = None) -> None:
        self.stopped: list[str] = []
        self.refuse = refuse or set()

    def stop(self, run_id: str, error: str, cause: str) -> None:
        if run_id in self.refuse:
            raise WorkflowError(f"stop run {run_id}: AccessDeniedException")
        assert error == "StuckRun" and "stopped by the janitor" in cause
        self.stopped.append(run_id)


def test_a_stuck_run_is_stopped_before_it_is_failed_even_when_the_stop_is_refused() -> None:
    runs = FakeRuns([run("old-1", PAST), run("old-2", PAST), run("live", FUTURE)])
    sweeper, _ = janitor(FakeResources([]), runs)
    sweeper.executions = FakeExecutions(refuse={"old-2"})
    report = sweeper.sweep()
    assert sweeper.executions.stopped == ["old-1"]
    assert {r.run_id: r.execution for r in report.stuck_runs} == {
        "old-1": "stopped",
        "old-2": "not stopped: WorkflowError: stop run old-2: AccessDeniedException",
    }
    assert runs.runs["old-2"]["status"] == "FAILED" and runs.runs["live"]["status"] == "RUNNING"
    assert report.errors == ["stop execution of old-2: WorkflowError: stop run old-2: AccessDeniedException"]

"""Which of the stack's tagged resources are leaks: pure decisions, no I/O.

A resource is a leak when all of these hold, and is otherwise left alone:

* its ``storagebench:stack`` tag is this stack's (the adapters ask for that, this checks again);
* it carries a run id and a readable ``storagebench:expires-at`` that has passed (a live run's
  resources are never touched, so the janitor is safe to run next to one);
* it is not already going (an instance shutting down or terminated, anything deleting).

A volume attached to an instance is left to that instance: with DeleteOnTermination it goes when
the instance is terminated (a leak swept with it when the instance is expired too); without, it is
deleted by the next sweep once it is ``available``. A volume attached to an instance that is not one
of this stack's expired instances is skipped and reported.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from storagebench.core.clock import parse_iso
from storagebench.core.tags import TAG_CONFIG, TAG_EXPIRES, TAG_RUN, TAG_STACK
from storagebench.janitor.models import Leak, Skipped, TaggedResource

GOING = frozenset({"shutting-down", "terminated", "deleting", "deleted"})


@dataclass
class SweepPlan:
    delete: list[tuple[TaggedResource, Leak]] = field(default_factory=list)
    """Expired resources to terminate or delete, with the leak each becomes (outcome to be set)."""
    settled: list[Leak] = field(default_factory=list)
    """Expired volumes that go with their expired instance, or must wait for it: nothing to call."""
    skipped: list[Skipped] = field(default_factory=list)
    not_expired: int = 0


def parse_time(text: str) -> datetime | None:
    """An ISO 8601 time with a zone (``...Z`` or ``+00:00``); None when it is not one."""
    try:
        moment = parse_iso(text)
    except ValueError:
        return None
    return moment if moment.tzinfo is not None else None


def plan_sweep(found: list[TaggedResource], stack: str, now: datetime) -> SweepPlan:
    plan = SweepPlan()
    expired: dict[str, tuple[TaggedResource, Leak]] = {}
    for resource in found:
        if resource.tags.get(TAG_STACK) != stack or resource.state in GOING:
            continue
        run_id = resource.tags.get(TAG_RUN)
        if not run_id:
            plan.skipped.append(_skip(resource, f"carries {TAG_STACK}={stack} but no {TAG_RUN} tag"))
            continue
        raw = resource.tags.get(TAG_EXPIRES, "")
        deadline = parse_time(raw)
        if deadline is None:
            plan.skipped.append(
                _skip(resource, f"{TAG_EXPIRES} is {raw!r}, not an ISO 8601 time with a zone; left alone")
            )
            continue
        if deadline > now:
            plan.not_expired += 1
            continue
        leak = Leak(
            kind=resource.kind,
            resource_id=resource.resource_id,
            run_id=run_id,
            config_id=resource.tags.get(TAG_CONFIG),
            expires_at=raw,
            overdue_s=int((now - deadline).total_seconds()),
            outcome="pending",
            detail="",
        )
        expired[resource.resource_id] = (resource, leak)
    expiring = {
        rid for rid, (resource, _) in expired.items() if resource.kind == "ec2-instance"
    }  # terminated by this sweep
    going = {
        r.resource_id
        for r in found
        if r.kind == "ec2-instance" and r.tags.get(TAG_STACK) == stack and r.state in GOING
    }  # already on their way out (Cleanup got there)
    for resource, leak in expired.values():
        attached = resource.attachments if resource.kind == "ebs-volume" else []
        if not attached:
            plan.delete.append((resource, leak))
            continue
        owners = ", ".join(a.instance_id for a in attached)
        foreign = [a.instance_id for a in attached if a.instance_id not in expiring | going]
        if foreign:
            plan.skipped.append(
                _skip(
                    resource,
                    f"expired but attached to {', '.join(foreign)}, which is not an expired instance of "
                    "this stack; left alone",
                )
            )
        elif not all(a.delete_on_termination for a in attached):
            detail = f"detaches when {owners} terminates; the next sweep deletes it"
            plan.settled.append(leak.model_copy(update={"outcome": "pending", "detail": detail}))
        elif any(a.instance_id in expiring for a in attached):
            detail = f"goes with instance {owners} (DeleteOnTermination)"
            plan.settled.append(leak.model_copy(update={"outcome": "deleted", "detail": detail}))
        # else: goes with an instance already terminating - not a leak of this sweep
    # a File Gateway's shares before the gateway, the gateway before its appliance (as Cleanup does);
    # instances before volumes: their volumes' fate depends on them; then file systems; a config's
    # security and placement groups last: EC2 refuses them while an instance still holds them (pending)
    order = {
        "gateway-file-share": 0,
        "storage-gateway": 1,
        "ec2-instance": 2,
        "ebs-volume": 3,
        "efs-file-system": 4,
        "fsx-file-system": 5,
        "security-group": 6,
        "placement-group": 7,
    }
    plan.delete.sort(key=lambda pair: (order[pair[0].kind], pair[0].resource_id))
    return plan


def _skip(resource: TaggedResource, reason: str) -> Skipped:
    return Skipped(kind=resource.kind, resource_id=resource.resource_id, reason=reason)

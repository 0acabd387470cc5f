"""Run ids: the one way a run is named, by the API, the CLI and local mode alike.

A run id is the Step Functions execution name (Plan reads it from ``$$.Execution.Name``), so it
follows the execution name rules: at most 80 characters of ``[A-Za-z0-9_-]``. The suite keeps it
readable, the UTC time sorts it, and eight random hex digits keep runs of one second apart (four
were not enough: with 65,536 values, a burst of starts in one second collided now and then).
"""

from __future__ import annotations

import hashlib
import re
import secrets

from storagebench.core.clock import iso, parse_iso, stamp

# Any execution name: a schedule that starts an execution without a name gets a UUID from Step Functions
RUN_ID_PATTERN = r"^[A-Za-z0-9_-]{1,80}$"
_RUN_ID = re.compile(RUN_ID_PATTERN)


def new_run_id(suite: str) -> str:
    return f"{suite[:40]}-{stamp()}-{secrets.token_hex(4)}"


def is_run_id(text: str) -> bool:
    """True for an execution name (the API refuses anything else before any lookup)."""
    return bool(_RUN_ID.fullmatch(text))


def keyed_run_id(suite: str, idempotency_key: str, caller: str = "") -> str:
    """The run id an idempotency key names: the same key of the same caller always names the same
    execution, so Step Functions itself refuses a second start of it (ExecutionAlreadyExists);
    another caller's same key names another run (it must not be handed the first caller's)."""
    scoped = f"{caller}\n{idempotency_key}" if caller else idempotency_key
    digest = hashlib.sha256(scoped.encode("utf-8")).hexdigest()[:24]
    return f"{suite[:40]}-key-{digest}"


def schedule_group(stack: str) -> str:
    """The stack's schedule group (template.yaml's ScheduleGroup): the only schedules Plan claims for."""
    return f"{stack}-schedules"


def occurrence_key(schedule_arn: str, scheduled_time: str) -> str:
    """One scheduled occurrence, whatever attempt started it: the schedule and the time it fired for
    (normalised, so ``...:00Z`` and ``...:00.000Z`` are the same occurrence)."""
    return f"{schedule_arn}@{iso(parse_iso(scheduled_time))}"

"""Plan: validate the request, apply the stack's guardrails, record the run, expand one work item
per config (``functions/plan``)."""

from __future__ import annotations

import json
import math
from datetime import timedelta
from typing import Any

from storagebench.core.clock import iso, parse_iso
from storagebench.core.errors import DuplicateStartError, GuardrailError, InvalidRequestError
from storagebench.core.state import INLINE_MAP_MAX_CONFIGS, PlanResult, StepTiming, WorkItem
from storagebench.planning.preview import preview_request
from storagebench.quotas.ports import QuotaPolicy
from storagebench.request import RequestError, parse_request
from storagebench.request.model import ScheduledOccurrence
from storagebench.workflow.artifact_keys import config_prefix, request_key, work_items_key
from storagebench.workflow.ports import Services
from storagebench.workflow.run_ids import occurrence_key, schedule_group


def plan_run(document: Any, run_id: str, started_at: str, services: Services) -> PlanResult:
    """Validate, apply the stack's guardrails, record the run, expand one work item per config.

    Up to ``INLINE_MAP_MAX_CONFIGS`` configs, the items travel in the state to the inline Map; past
    that they go to the artifacts (``work_items_key``) for the Distributed Map's ItemReader, and the
    state carries only the config ids: 500 items of ~0.5 KiB would crowd its 256 KiB.
    """
    try:
        request = parse_request(document)
    except RequestError as exc:
        raise InvalidRequestError(str(exc)) from None
    limits = services.guardrails
    # The same preview the API's dry run returns: the two cannot disagree about a request.
    quotas = QuotaPolicy(services.quotas) if services.quotas is not None else None
    preview = preview_request(request, limits, quotas=quotas)
    if not preview.allowed:
        raise GuardrailError(preview.problem_text())
    if request.scheduled is not None:  # before anything is written: a duplicate leaves only its refusal
        _claim_occurrence(request.scheduled, run_id, services)
    started = parse_iso(started_at)
    expires = started + timedelta(hours=request.timing.max_run_hours)
    command_timeout_s = math.ceil(request.timing.command_timeout_h * 3600)
    timing = StepTiming(
        ready_poll_s=request.timing.ready_poll_s,
        ready_timeout_s=limits.ready_timeout_s,
        heartbeat_s=min(request.timing.command_poll_s, limits.heartbeat_max_s, command_timeout_s),
        command_timeout_s=command_timeout_s,
    )
    items = [
        WorkItem(
            run_id=run_id,
            config_id=c.id,
            suite=request.name,
            region=request.region,
            started_at=iso(started),
            expires_at=iso(expires),
            timing=timing,
            artifacts_prefix=config_prefix(run_id, c.id),
        )
        for c in request.configs
    ]
    services.artifacts.put_json(request_key(run_id), request.model_dump(mode="json", exclude_unset=False))
    distributed = len(items) > INLINE_MAP_MAX_CONFIGS
    if distributed:  # before the run is recorded: a Plan retried after a lost answer writes the same
        services.artifacts.put_json(work_items_key(run_id), [i.model_dump(mode="json") for i in items])
    services.store.start_run(
        run_id,
        request.name,
        json.loads(json.dumps(document)),
        iso(started),
        iso(expires),
        [c.id for c in request.configs],
        cost_bound_usd=preview.estimate.upper_bound_usd,
    )
    return PlanResult(
        run_id=run_id,
        suite=request.name,
        started_at=iso(started),
        max_concurrency=preview.max_concurrency,
        items=[] if distributed else items,
        config_ids=[c.id for c in request.configs],
        map_mode="distributed" if distributed else "inline",
        work_items_key=work_items_key(run_id) if distributed else None,
    )


def _claim_occurrence(occurrence: ScheduledOccurrence, run_id: str, services: Services) -> None:
    """EventBridge Scheduler cannot name the execution, so a retry of a start whose answer was lost
    starts a second one: the first to claim the occurrence runs, any other is refused here."""
    group = schedule_group(services.stack)
    if occurrence.schedule_arn.split(":schedule/", 1)[1].split("/", 1)[0] != group:
        # Only the stack's own schedules claim: a start naming another schedule blocks none of them
        raise InvalidRequestError(
            f"scheduled.schedule_arn: {occurrence.schedule_arn} is not a schedule of this stack's "
            f"group {group}; only those start scheduled runs"
        )
    key = occurrence_key(occurrence.schedule_arn, occurrence.scheduled_time)
    holder = services.store.claim_occurrence(key, run_id, iso(services.clock.now()))
    if holder != run_id:
        raise DuplicateStartError(
            f"scheduled occurrence {key} already started run {holder}: execution {run_id} is a "
            "second start of it (a retried schedule attempt) and launches nothing"
        )

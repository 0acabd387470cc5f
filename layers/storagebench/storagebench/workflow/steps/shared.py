"""What several steps read of a config: the request Plan stored, the labels of what the config
creates, its purchase, and the errors the state machine caught that no step recorded yet."""

from __future__ import annotations

import json
from typing import Any

from storagebench.core.errors import DocumentError
from storagebench.core.state import ConfigState, ErrorInfo, WorkItem
from storagebench.core.tags import TAG_CONFIG, TAG_EXPIRES, TAG_RUN, TAG_STACK
from storagebench.request import BenchmarkRequest, parse_request
from storagebench.request.model import Config
from storagebench.request.purchase import Purchase, effective_purchase
from storagebench.workflow.artifact_keys import request_key
from storagebench.workflow.ports import Services


def item_request(services: Services, item: WorkItem) -> BenchmarkRequest:
    return stored_request(services, item.run_id)


def stored_request(services: Services, run_id: str) -> BenchmarkRequest:
    """The request Plan stored; a DocumentError naming its key when it is gone or no longer valid
    (a WorkflowError: the state machine records it and cleans up, which needs no request)."""
    key = request_key(run_id)
    try:
        return parse_request(services.artifacts.get_json(key))
    except KeyError:
        raise DocumentError(key, "missing: Plan stored it when the run started, and it is gone") from None
    except ValueError as exc:  # not UTF-8, not JSON, or no longer a valid request (RequestError)
        what = f"{type(exc).__name__}: {exc}"[:300]
        raise DocumentError(key, f"corrupt, not the request Plan stored ({what})") from None


def tags(services: Services, item: WorkItem) -> dict[str, str]:
    """The labels of everything the config creates: the request's ``tags`` (validated against every
    service's rules and reserved keys, ``request.tags``), then storagebench's own. Read from the stored
    request rather than carried on the WorkItem: 40 items of up to 42 tags would outgrow the state's
    256 KiB. Release never calls this (it goes by the run and config tags alone)."""
    return {
        **item_request(services, item).tags,
        TAG_RUN: item.run_id,
        TAG_CONFIG: item.config_id,
        TAG_EXPIRES: item.expires_at,
        TAG_STACK: services.stack,
        "Name": f"storagebench {item.run_id}/{item.config_id}",
    }


def purchase_of(request: BenchmarkRequest, config: Config, services: Services) -> Purchase:
    """The config's purchase: its own, else the request's, else the stack's DefaultPurchase."""
    return effective_purchase(
        config.purchase,
        request.purchase,
        services.guardrails.default_purchase,
        machines=config.instance_count,
    )


def failed_step(state: ConfigState) -> str:
    """Which step a caught error came from: the flow is linear, so how far the state got says."""
    if state.resources.instance_id is None:
        return "provision"
    if state.ready is None or state.ready.state != "ready":
        return "ready"
    if state.outcome is None:
        return "agent"
    if state.collected is None:
        return "collect"
    return "cleanup"


def caught_cause(raw: Any) -> str:
    """Step Functions puts a Lambda error's JSON in Cause; keep its message."""
    if isinstance(raw, str):
        try:
            parsed = json.loads(raw)
        except ValueError:
            return raw
        if isinstance(parsed, dict) and "errorMessage" in parsed:
            return str(parsed["errorMessage"])
        return raw
    return json.dumps(raw)


def with_pending_errors(state: ConfigState) -> ConfigState:
    """Fold errors the state machine caught but no step recorded yet (see ConfigState.caught)."""
    sources = (
        ("caught", state.caught, failed_step(state)),
        ("record_error", state.record_error, "record_failure"),
        ("caught_collect", state.caught_collect, "collect"),
        ("caught_cleanup", state.caught_cleanup, "cleanup"),
    )
    pending = [
        ErrorInfo(
            step=step,
            error=str(caught.get("Error", "States.Unknown")),
            cause=caught_cause(caught.get("Cause", "")),
        )
        for _, caught, step in sources
        if caught
    ]
    if not pending:
        return state
    cleared = dict.fromkeys(name for name, _, _ in sources)
    return state.model_copy(update={"errors": [*state.errors, *pending], **cleared})

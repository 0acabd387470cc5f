"""RecordFailure: keep a caught error, or a Spot interruption, on the config before collecting and
cleaning up (``functions/record_failure``)."""

from __future__ import annotations

import logging
from typing import Any

from storagebench.core.clock import iso
from storagebench.core.errors import DocumentError, SpotInterruptionError, WorkflowError
from storagebench.core.state import AgentOutcome, ConfigState, ErrorInfo
from storagebench.request.purchase import Market
from storagebench.workflow import interruptions
from storagebench.workflow.artifact_keys import command_output_prefix
from storagebench.workflow.command_output import failed_document_step
from storagebench.workflow.ports import Services
from storagebench.workflow.steps.shared import caught_cause, failed_step, item_request, purchase_of

log = logging.getLogger(__name__)


def record_failure(state: ConfigState, caught: dict[str, Any], services: Services) -> ConfigState:
    """Keep a caught error on the config (and in the store) before collecting and cleaning up.

    A Spot interruption is no error: it is recorded as such (``interruptions``), and Cleanup
    relaunches the config for what it did not measure."""
    interrupted = _interruption(state, caught, services)
    if interrupted is not None:
        services.store.put_config(interrupted, "INTERRUPTED")
        return interrupted
    error = ErrorInfo(
        step=failed_step(state),
        error=str(caught.get("Error", "States.Unknown")),
        cause=caught_cause(caught.get("Cause", "")),
    )
    lost = error.step == "agent" and error.error in ("States.HeartbeatTimeout", "States.Timeout")
    said = _document_failure(state, services) if lost else None
    if said is not None:  # the instance failed before its agent could report: SSM kept what it said
        error = ErrorInfo(
            step="agent",
            error="AgentError",
            cause=f"{said} (from the SSM command's output: the instance could not report it, "
            f"and its heartbeats stopped: {error.error})",
        )
        lost = False
    updated = state.model_copy(update={"errors": [*state.errors, error]})
    if error.step == "agent" and state.outcome is None:
        updated.outcome = AgentOutcome(status="lost" if lost else "failed", detail=error.cause)
    services.store.put_config(updated, "FAILING")
    return updated


def _interruption(state: ConfigState, caught: dict[str, Any], services: Services) -> ConfigState | None:
    """The state with its attempt's Spot interruption, when the caught error is one: the agent's
    report of the notice, CheckReady finding the instance reclaimed, or lost heartbeats of an
    instance EC2 reclaimed for Spot (the notice came too late, or was missed)."""
    name = str(caught.get("Error", ""))
    step = failed_step(state)
    now = iso(services.clock.now())
    market = _market(services, state)
    if name == SpotInterruptionError.__name__ and step == "ready":
        return interruptions.from_instance_state(state, "ready", now, market)
    if name == SpotInterruptionError.__name__ and step == "agent":
        updated = interruptions.from_report(state, str(caught.get("Cause", "")), now, market)
    elif step == "agent" and name in ("States.HeartbeatTimeout", "States.Timeout"):
        try:
            status = services.compute.status(state.resources)
        except WorkflowError as exc:  # the heartbeat timeout stays the error
            log.warning("could not describe the instance of %s: %s", state.item.config_id, exc)
            return None
        if not interruptions.spot_reclaimed(status):
            return None
        updated = interruptions.from_instance_state(state, "agent", now, market)
    else:
        return None
    updated.outcome = AgentOutcome(status="failed", detail=f"Spot interruption ({name})")
    return updated


def _market(services: Services, state: ConfigState) -> Market | None:
    """How the state's attempt was bought: as EC2 reported it at launch, else as the request asked
    (None: the request is gone, the record says so elsewhere)."""
    if state.resources.market is not None:
        return state.resources.market
    try:
        request = item_request(services, state.item)
    except DocumentError:
        return None
    config = request.config(state.item.config_id)
    return interruptions.market_of(purchase_of(request, config, services), state.item.attempt)


def _document_failure(state: ConfigState, services: Services) -> str | None:
    if state.resources.instance_id is None:
        return None
    prefix = command_output_prefix(state.item, services.agents.principal(state.resources.instance_id))
    try:
        with services.artifacts.fetched(prefix) as directory:
            return failed_document_step(directory)
    except (WorkflowError, OSError) as exc:  # the heartbeat timeout stays the error: still true
        log.warning("could not read the SSM command output of %s: %s", state.item.config_id, exc)
        return None

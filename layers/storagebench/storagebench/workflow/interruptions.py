"""Spot interruptions of a config: recorded, what was measured kept, the rest relaunched.

The healthy path never comes here. An attempt is interrupted when its agent reports the Spot
notice (RunAgent fails with ``SpotInterruptionError``, the notice as JSON in the cause), or when
CheckReady or a lost agent finds the instance terminated with ``Server.SpotInstanceTermination``.
RecordFailure records an ``Interruption`` on the state (``from_report``/``from_instance_state``);
Collect stores what the attempt measured and notes its completed steps (``note_collected``);
Cleanup releases the instance and, when steps remain and the bound allows, raises
``ConfigInterruptedError``, which the state machine catches back to Provision: ``next_attempt``
starts the config again (a new client token, on-demand after the first interruption in
``spot-then-on-demand``), and StartAgent leaves out every step kept so far (``without_kept``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from storagebench.core.errors import ConfigInterruptedError
from storagebench.core.interruption import SPOT_TERMINATION_CODE, Interruption, InterruptionStage
from storagebench.core.launch import client_token
from storagebench.core.state import ComputeStatus, ConfigState, ErrorInfo, LaunchSpec
from storagebench.protocol.plan import Plan
from storagebench.request.purchase import Market, Purchase, market_for

MAX_ATTEMPTS = 3
"""Launches per config: after the third attempt is interrupted the config fails (what it measured is kept)."""
STAGES: tuple[InterruptionStage, ...] = (
    "ready", "starting", "setup", "prepare", "prewarm", "workloads", "teardown", "upload", "agent"
)  # fmt: skip
ERROR_NAME = "SpotInterruptionError"
GONE_STATES = ("shutting-down", "terminated", "stopping", "stopped")


def spot_reclaimed(status: ComputeStatus) -> bool:
    """Whether EC2 took the instance back for Spot (not a crash, not a user's terminate)."""
    return status.instance_state in GONE_STATES and status.reason_code == SPOT_TERMINATION_CODE


def current(state: ConfigState) -> Interruption | None:
    """The interruption of the state's attempt, if it was interrupted."""
    return next((i for i in state.interruptions if i.attempt == state.item.attempt), None)


def market_of(purchase: Purchase, attempt: int) -> Market:
    """How attempt ``attempt`` is bought: every earlier attempt ended in an interruption."""
    return market_for(purchase, attempt - 1)


def from_report(state: ConfigState, cause: str, noticed_at: str, market: Market | None) -> ConfigState:
    """The agent's SpotInterruptionError: its cause is the notice (agent.interruption.notice_cause)."""
    try:
        document = json.loads(cause)
        notice = document["notice"]
        stage = str(notice.get("stage") or "agent")
        interruption = Interruption(
            attempt=state.item.attempt,
            instance_id=state.resources.instance_id,
            market=market,
            detected_by="notice",
            stage=stage if stage in STAGES else "agent",
            step=notice.get("step"),
            action=notice.get("action"),
            action_time=notice.get("action_time"),
            noticed_at=str(notice.get("noticed_at") or noticed_at),
        )
    except (ValueError, KeyError, TypeError, AttributeError):  # a notice we cannot read: still one
        interruption = Interruption(
            attempt=state.item.attempt,
            instance_id=state.resources.instance_id,
            market=market,
            detected_by="notice",
            stage="agent",
            noticed_at=noticed_at,
        )
    return _with(state, interruption)


def from_instance_state(
    state: ConfigState, stage: InterruptionStage, noticed_at: str, market: Market | None
) -> ConfigState:
    """EC2 had already terminated the instance for Spot when the workflow looked."""
    interruption = Interruption(
        attempt=state.item.attempt,
        instance_id=state.resources.instance_id,
        market=market,
        detected_by="instance-state",
        stage=stage,
        action="terminate",
        noticed_at=noticed_at,
    )
    return _with(state, interruption)


def _with(state: ConfigState, interruption: Interruption) -> ConfigState:
    interruption.relaunched = interruption.attempt < MAX_ATTEMPTS  # Collect may find nothing left to do
    # what the run's cost needs of this attempt once the next one replaces the state's resources
    interruption.launched_at = state.resources.launched_at
    interruption.availability_zone = state.resources.availability_zone
    interruption.market = interruption.market or state.resources.market
    others = [i for i in state.interruptions if i.attempt != interruption.attempt]
    return state.model_copy(update={"interruptions": [*others, interruption]})


def completed_steps(directory: Path) -> tuple[list[str], list[str]]:
    """(steps this attempt completed or made unnecessary, steps its plan held) from the agent's output."""
    done: list[str] = []
    planned: list[str] = []
    try:
        manifest = json.loads((directory / "manifest.json").read_text(encoding="utf-8"))
        done = [str(s["id"]) for s in manifest.get("steps") or [] if s.get("status") == "ok"]
        plan = json.loads((directory / "plan.json").read_text(encoding="utf-8"))
        planned = [str(s["id"]) for s in plan.get("steps") or []]
        # An adaptive series the agent stopped (precision reached, or max) left its later
        # repetitions unrun on purpose: they are decided, not owed to a relaunch.
        decided = {
            str(e["series"])
            for e in manifest.get("adaptive") or []
            if isinstance(e, dict) and e.get("stopped") and e.get("series")
        }
        if decided:
            done += [
                str(s["id"])
                for s in plan.get("steps") or []
                if (s.get("adaptive") or {}).get("series") in decided and str(s["id"]) not in done
            ]
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        pass  # whatever could be read stands; a step not known to be done is run again
    return done, planned


def note_collected(state: ConfigState, directory: Path | None, records: int) -> ConfigState:
    """After Collect stored what the interrupted attempt measured: which steps it kept, which remain."""
    interruption = current(state)
    if interruption is None:
        return state
    noted = interruption.model_copy(deep=True)
    noted.records_kept = records
    if directory is not None:
        done, planned = completed_steps(directory)
        noted.steps_kept = done
        if planned:
            noted.steps_rerun = [s for s in planned if s not in set(done)]
            noted.relaunched = bool(noted.steps_rerun) and noted.attempt < MAX_ATTEMPTS
    return _replace(state, noted)


def _replace(state: ConfigState, interruption: Interruption) -> ConfigState:
    return state.model_copy(
        update={
            "interruptions": [
                interruption if i.attempt == interruption.attempt else i for i in state.interruptions
            ]
        }
    )


def kept_steps(state: ConfigState) -> set[str]:
    """Every step an interrupted attempt of this config completed (stored: never run again)."""
    return {step for i in state.interruptions for step in i.steps_kept}


def kept_records(state: ConfigState) -> int:
    """Records stored by the config's earlier attempts (the current one's are in ``collected``)."""
    return sum(i.records_kept for i in state.interruptions if i.attempt < state.item.attempt)


def without_kept(plan: Plan, kept: set[str]) -> Plan:
    """The plan minus the steps an earlier attempt completed."""
    if not kept:
        return plan
    trimmed: dict[str, Any] = dict(plan)
    trimmed["steps"] = [s for s in plan.get("steps", []) if s["id"] not in kept]
    return trimmed  # type: ignore[return-value]


def settle(state: ConfigState) -> ConfigState:
    """At Cleanup, once the attempt is released: relaunch (raise) or end the config.

    Raises ConfigInterruptedError when the attempt was interrupted with steps left and the bound
    allows another launch. Otherwise returns the state, with an error when the bound stopped it.
    """
    interruption = current(state)
    if interruption is None:
        return state
    left = "every step" if interruption.steps_rerun is None else f"{len(interruption.steps_rerun)} step(s)"
    if interruption.relaunched:
        raise ConfigInterruptedError(
            f"config {state.item.config_id}: attempt {interruption.attempt} was interrupted "
            f"({interruption.detected_by}, during {interruption.stage}); {len(interruption.steps_kept)} "
            f"step(s) kept, {left} to run on attempt {interruption.attempt + 1}"
        )
    if interruption.steps_rerun == []:
        return state  # the notice came once every step was done: nothing to run again
    error = ErrorInfo(
        step="interruption",
        error=ERROR_NAME,
        cause=f"interrupted on each of its {interruption.attempt} attempts (the bound is {MAX_ATTEMPTS}): "
        f"{left} never measured; the {sum(len(i.steps_kept) for i in state.interruptions)} completed "
        "step(s) are kept",
    )
    return state.model_copy(update={"errors": [*state.errors, error]})


def bound_reached(state: ConfigState) -> bool:
    """The config ends with steps it could not run because every attempt was interrupted."""
    interruption = current(state)
    return interruption is not None and not interruption.relaunched and interruption.steps_rerun != []


def next_attempt(state: ConfigState) -> ConfigState:
    """Provision's input after Cleanup's ConfigInterruptedError: the same config, launched afresh."""
    item = state.item.model_copy(update={"attempt": state.item.attempt + 1})
    return ConfigState(item=item, errors=list(state.errors), interruptions=list(state.interruptions))


def attempt_launch(spec: LaunchSpec, state: ConfigState) -> LaunchSpec:
    """Attempt 1 keeps the run's client token; a relaunch needs its own, or EC2 returns the old instance."""
    if state.item.attempt == 1:
        return spec
    token = client_token(state.item.run_id, f"{state.item.config_id}#attempt{state.item.attempt}")
    return spec.model_copy(update={"client_token": token})


def merged_series(
    state: ConfigState, earlier: dict[str, Any] | None, later: dict[str, Any]
) -> dict[str, Any]:
    """The config's series document after a relaunch: the kept steps' series from the earlier
    attempts, then this attempt's (each attempt's Collect rewrites the one document)."""
    if earlier is None or state.item.attempt == 1:
        return later
    kept = kept_steps(state)
    series = [e for e in earlier.get("series") or [] if isinstance(e, dict) and e.get("step_id") in kept]
    problems = [*(earlier.get("problems") or []), *(later.get("problems") or [])]
    return {**later, "series": [*series, *(later.get("series") or [])], "problems": problems}

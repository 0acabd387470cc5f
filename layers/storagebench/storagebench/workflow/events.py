"""What the state machine hands each Task (statemachines/benchmark.asl.json's Parameters), as models.

Provision, CheckReady, Collect and Cleanup receive a ``ConfigState`` itself; the others receive one
of the envelopes below. A handler parses its event with ``parse_event`` before calling its step, so a
payload that drifted from the ASL fails on the handler's first line, naming the field.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict, ValidationError, model_validator

from storagebench.core.state import ConfigState

M = TypeVar("M", bound=BaseModel)


class EventFieldError(KeyError):
    """The event lacks a field the ASL's Parameters always send: the template and the code disagree."""


def parse_event(model: type[M], event: Mapping[str, Any]) -> M:
    """``event`` as ``model``; a missing top-level field is an ``EventFieldError`` naming it, any other
    problem pydantic's ``ValidationError``."""
    try:
        return model.model_validate(event)
    except ValidationError as exc:
        missing = [str(e["loc"][0]) for e in exc.errors() if e["type"] == "missing" and len(e["loc"]) == 1]
        if missing:
            given = ", ".join(sorted(map(str, event))) or "no keys"
            raise EventFieldError(
                f"the {model.__name__} event lacks {', '.join(missing)} (got {given})"
            ) from exc
        raise


class _Event(BaseModel):
    model_config = ConfigDict(extra="forbid")


class PlanEvent(_Event):
    """Plan: the request as given (validated by the step, which names its problems), the execution's
    name and start time."""

    request: Any
    run_id: str
    started_at: str


class StartAgentEvent(_Event):
    """RunAgent (``waitForTaskToken``): the config's state and the token the instance calls back on."""

    state: ConfigState
    task_token: str


class RecordFailureEvent(_Event):
    """RecordFailure and RecordAgentFailure: the state and the error the state machine caught. The
    state carries that error under ``caught`` too (its Catch's ResultPath); it is taken from ``caught``
    once, not twice."""

    state: ConfigState
    caught: dict[str, Any]

    @model_validator(mode="before")
    @classmethod
    def _caught_once(cls, data: Any) -> Any:
        if isinstance(data, Mapping) and isinstance(data.get("state"), Mapping):
            return {**data, "state": {k: v for k, v in data["state"].items() if k != "caught"}}
        return data


class FinalizeEvent(_Event):
    """Finalize: the run and what each Map iteration returned (a ``ConfigResult``, or the state of a
    config whose cleanup gave up)."""

    run_id: str
    suite: str
    started_at: str
    configs: list[dict[str, Any]]


class SweepRunEvent(_Event):
    """SweepRun: the configs Map failed (the state machine) or the run was stopped (the API); every
    config of the run is released by its tags, and again once what was under way at ``stopped_at``
    (when SweepRun was entered, or when the API stopped the execution) must have ended."""

    run_id: str
    suite: str
    started_at: str
    config_ids: list[str]
    caught: dict[str, Any]
    stopped_at: str | None = None

"""What the run's record keeps of a Spot interruption: which attempt, when, at what stage, what it kept.

A config's attempt ends interrupted when its agent reports a Spot interruption notice (the
two-minute warning from the instance metadata service), or when the workflow finds its instance
terminated by EC2 for Spot (``Server.SpotInstanceTermination``) while waiting for it to be ready or
for its agent. The steps that attempt completed are stored and kept; the next attempt runs only
the others.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

SPOT_TERMINATION_CODE = "Server.SpotInstanceTermination"
"""EC2's state reason code for an instance it reclaimed for Spot."""

InterruptionStage = Literal[
    "ready", "starting", "setup", "prepare", "prewarm", "workloads", "teardown", "upload", "agent"
]


class Interruption(BaseModel):
    model_config = ConfigDict(extra="forbid")

    attempt: int = Field(ge=1, description="the attempt it ended (1: the first launch)")
    instance_id: str | None = None
    market: str | None = Field(default=None, description="spot or on-demand: how that attempt was bought")
    detected_by: Literal["notice", "instance-state"] = Field(
        description="notice: the agent saw the two-minute notice; instance-state: EC2 had already "
        "terminated the instance (Server.SpotInstanceTermination)"
    )
    stage: InterruptionStage = Field(description="what the config was doing when it came")
    step: str | None = Field(default=None, description="the workload step under way, if any")
    action: str | None = Field(default=None, description="the notice's action: terminate, stop or hibernate")
    action_time: str | None = Field(default=None, description="when EC2 said it would act")
    noticed_at: str = Field(description="when storagebench learned of it")
    steps_kept: list[str] = Field(
        default_factory=list, description="ids of the steps this attempt completed: stored and not re-run"
    )
    records_kept: int = Field(default=0, ge=0, description="records stored from this attempt")
    steps_rerun: list[str] | None = Field(
        default=None,
        description="ids of the steps the next attempt runs (None: every step, none had started)",
    )
    relaunched: bool = Field(default=False, description="whether the config was launched again")
    launched_at: str | None = Field(
        default=None, description="when that attempt's instance launched: the run's cost prices it from then"
    )
    availability_zone: str | None = Field(
        default=None, description="that attempt's zone: a Spot attempt is priced from its Spot price history"
    )


def interruption_line(document: Mapping[str, Any]) -> str:
    """One line for people (the CLI, the report): which attempt, when, at what stage, what it kept."""
    stage = str(document.get("stage") or "?")
    step = document.get("step")
    where = f"during {stage}" + (f" (step {step})" if step else "")
    if document.get("detected_by") == "notice":
        noticed, action, when = (document.get(k) for k in ("noticed_at", "action", "action_time"))
        how = f"Spot notice at {noticed}: {action} at {when}"
    else:
        how = f"instance reclaimed for Spot, found {document.get('noticed_at')}"
    market = f" on {document['market']}" if document.get("market") else ""
    kept = len(document.get("steps_kept") or [])
    rerun = document.get("steps_rerun")
    if not document.get("relaunched"):
        then = "not relaunched" + (": every step was done" if rerun == [] else "")
    elif rerun is None:
        then = "relaunched for every step"
    else:
        then = f"relaunched for {len(rerun)} step(s)"
    return (
        f"attempt {document.get('attempt')}{market} interrupted {where} ({how}); "
        f"{kept} step(s) kept ({document.get('records_kept', 0)} records), {then}"
    )

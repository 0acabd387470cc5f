"""A node removed mid-phase (``agent.node_loss``): the figures a record carries (each direction its
own, IOPS and MiB/s measured apart); ``results.node_loss_records`` puts them on the records."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field


class LossFigures(BaseModel):
    """One rate (IOPS or MiB/s) of one direction around the removal; definitions in agent.node_loss."""

    model_config = ConfigDict(extra="forbid")

    metric: Literal["iops", "bw_mibps"]
    interval_ms: int = Field(gt=0, description="width of the intervals the jobs' rates were summed into")
    removed_at_s: float = Field(gt=0, description="when the node was removed, seconds after fio's start")
    before: float = Field(ge=0, description="mean rate over the window before the removal")
    before_window_s: float = Field(gt=0)
    after: float = Field(
        ge=0, description="mean rate over the last seconds of the log (the survivors' level)"
    )
    after_window_s: float = Field(gt=0)
    after_pct_of_before: float = Field(ge=0, description="after / before x 100: the capacity left")
    pause_s: float = Field(
        ge=0, description="longest run of intervals at or under 5 % of before, after the removal"
    )
    pause_start_s: float | None = Field(default=None, description="its start, relative to the removal")
    recovered: bool = Field(description="after is above 5 % of before; False: I/O never came back in the log")
    recovery_s: float | None = Field(
        default=None,
        ge=0,
        description="removal to the first interval at 90 % of after that holds it over 1 s; None if never",
    )
    recovery_to_before_s: float | None = Field(
        default=None,
        ge=0,
        description="the same against 90 % of before; None when the survivors never give it back",
    )
    log_end_s: float = Field(gt=0)


class NodeLoss(BaseModel):
    """Which node was removed, when, and what the record's direction saw."""

    model_config = ConfigDict(extra="forbid")

    role: str = Field(description="the node group, e.g. controller")
    index: int = Field(ge=0, description="which of its nodes, 0-based")
    at_s: float = Field(
        gt=0, description="when the node was planned to go, seconds into fio's logs (removed_at_s: where)"
    )
    iops: LossFigures
    bw: LossFigures | None = None

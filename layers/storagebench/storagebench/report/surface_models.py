"""The shapes of a config matrix read as a surface (``report.surfaces`` builds them): a grid per
combination of the axes beyond the second, each cell one point's headline mean and monthly cost."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class _Model(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class SurfaceCell(_Model):
    """One point: its config's headline mean and monthly cost, or why the matrix skipped it."""

    config_id: str | None = Field(description="None when the point was skipped")
    value: float | None = Field(default=None, description="the headline metric's mean, stored unit")
    n: int | None = Field(default=None, description="repetitions behind the mean")
    monthly_usd: float | None = None
    skipped: str | None = Field(default=None, description="the rule a skipped point breaks")


class SurfaceTable(_Model):
    """The points that share the values of the axes beyond the second (all of them with two axes)."""

    fixed: dict[str, str] = Field(description="axis -> value of the axes this table holds fixed")
    rows_axis: str
    rows: list[str]
    columns_axis: str | None = Field(description="None with a single varied field")
    columns: list[str]
    cells: list[list[SurfaceCell]] = Field(description="[row][column]")


class Surface(_Model):
    """One matrix on one workload's headline metric."""

    base_id: str = Field(description="the config that carried the matrix")
    workload: str
    workload_name: str
    metric: str = Field(description="the headline metric (report.model.METRIC_INFO)")
    axes: list[str]
    tables: list[SurfaceTable]
    skipped: int = Field(description="points the matrix skipped (matrix_invalid skip)")

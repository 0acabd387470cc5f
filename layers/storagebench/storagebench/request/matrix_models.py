"""What a config matrix leaves on the request: each generated config's origin and the points skipped.

Both are set by the expansion (``request.matrix``) only: a document that carries them is refused,
the published schema leaves them out and the request's dumps (what Plan stores for the steps) do
too. The run keeps the document as started, so whoever reads a run (the report) expands it again
and finds the same points under the same ids.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

MatrixValue = str | int | float | bool
MatrixInvalid = Literal["skip", "error"]


class _Frozen(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class MatrixOrigin(_Frozen):
    """Where a generated config comes from: the config that carried the matrix and its point."""

    base_id: str = Field(description="the id of the config that carried the matrix")
    config_index: int = Field(description="that config's position in the request's configs")
    point: dict[str, MatrixValue] = Field(description="matrix key -> this point's value, as written")
    axes: dict[str, list[MatrixValue]] = Field(
        description="the keys with more than one value and their values (fields in the ids' order, "
        "values as written): the axes of the surface the points make"
    )


class PointProblem(_Frozen):
    """One rule a matrix point breaks: where (a matrix key, or the config's field path), the value
    the point gives it and what is allowed."""

    field: str
    value: Any
    message: str

    def __str__(self) -> str:
        return f"{self.field}: {self.message}"


class SkippedPoint(_Frozen):
    """A point left out under ``matrix_invalid: skip``, with the rules it breaks."""

    id: str = Field(description="the id the point would have had")
    base_id: str
    config_index: int
    point: dict[str, MatrixValue]
    problems: list[PointProblem]

    def reason(self) -> str:
        return "; ".join(str(p) for p in self.problems)


class MatrixSummary(_Frozen):
    """One config's matrix after expansion: what validate, cost and the dry run show."""

    base_id: str
    config_index: int = Field(description="the config's position in the request as written")
    axes: dict[str, list[MatrixValue]] = Field(description="the varied keys and their values")
    points: int = Field(description="combinations of the values")
    generated: list[str] = Field(description="the ids of the configs it expands into, in order")
    skipped: list[SkippedPoint] = Field(description="points left out (matrix_invalid skip), with why")

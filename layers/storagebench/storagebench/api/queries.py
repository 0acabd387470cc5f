"""Query and path parameters of every route, as models: they validate requests and describe the
parameters in the OpenAPI document (one definition, so the two cannot drift)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    StringConstraints,
    ValidationError,
    field_validator,
)

from storagebench.api.errors import ApiError, detail
from storagebench.core.clock import parse_iso
from storagebench.request.model import SLUG_PATTERN
from storagebench.request.requirements import MAX_LENGTH as REQUIREMENT_LENGTH
from storagebench.request.requirements import split_joined
from storagebench.workflow.run_ids import RUN_ID_PATTERN

MAX_CURSOR = 2048
Cursor = Annotated[str, StringConstraints(min_length=1, max_length=MAX_CURSOR)]
Direction = Literal["read", "write", "mixed", "trim"]
DIRECTIONS: tuple[Direction, ...] = ("read", "write", "mixed", "trim")
FLAG_VALUES = ("true", "false")


def _flag(value: Any) -> Any:
    """A switch spelled ``true`` or ``false`` exactly (what the OpenAPI document's boolean is on the
    wire): ``1``, ``yes`` or ``True`` are refused rather than guessed at."""
    if isinstance(value, bool):
        return value
    if value in FLAG_VALUES:
        return value == "true"
    raise ValueError("must be true or false")


Flag = Annotated[bool, BeforeValidator(_flag)]


class _Query(BaseModel):
    # Unknown parameters are refused (a typo must not silently widen a query).
    model_config = ConfigDict(extra="forbid", frozen=True)


def _checked_time(value: str, name: str) -> str:
    try:
        parse_iso(value)
    except ValueError:
        raise ValueError(
            f"{name} must be an ISO 8601 date or time, e.g. 2030-01-01 or 2030-01-01T00:00:00Z"
        ) from None
    return value


class CreateRunQuery(_Query):
    dry_run: bool = Field(default=False, description="true: return the plan and cost estimate, start nothing")


class RunQuery(_Query):
    histograms: Flag = Field(
        default=False,
        description="true: also each record's latency histogram, as the agent measured it (one more "
        "Query on the store, about three times the read units of the run alone); false: without them",
    )


class ListRunsQuery(_Query):
    suite: Annotated[str, StringConstraints(pattern=SLUG_PATTERN)] | None = Field(
        default=None, description="a suite's runs, newest first; without it, the runs in progress"
    )
    limit: int = Field(default=20, ge=1, le=100, description="runs per page, 1 to 100")
    cursor: Cursor | None = Field(default=None, description="the `next_cursor` of the previous page")


class RecommendationQuery(_Query):
    require: list[Annotated[str, StringConstraints(min_length=1, max_length=REQUIREMENT_LENGTH)]] = Field(
        default_factory=list,
        max_length=50,
        description="a requirement, WORKLOAD[:DIRECTION]:METRIC OP VALUE (e.g. std-randread-4k:iops>=3500); "
        "repeat the parameter for several; without it, the run's request's requirements",
    )

    @classmethod
    def from_params(cls, values: Mapping[str, str] | None) -> dict[str, Any]:
        """The parameters as API Gateway passes them, a repeated ``require`` joined with commas
        (requirements hold none), split back into a list."""
        given: dict[str, Any] = dict(values or {})
        if isinstance(given.get("require"), str):
            given["require"] = split_joined(given["require"])
        return given


class CompareQuery(_Query):
    against: Annotated[str, StringConstraints(pattern=RUN_ID_PATTERN)] = Field(
        description="the reference run (A): deltas are this run's means against its, (this - A) / A"
    )
    min_effect_pct: float = Field(
        default=5.0,
        ge=0,
        le=100,
        description="the smallest difference, in % of A's mean, worth planning repetitions for: a metric "
        "not significantly different says how many repetitions per side would detect it (or the observed "
        "difference, when larger)",
    )


class ReportQuery(_Query):
    format: Literal["html", "md", "csv"] = Field(default="html", description="which form of the report")


class ResultsQuery(_Query):
    storage: Annotated[str, StringConstraints(min_length=1, max_length=256)] = Field(
        description="a storage option, as GET /runs/{id} names it (e.g. ebs-gp3-512g)"
    )
    workload: Annotated[str, StringConstraints(min_length=1, max_length=256)] = Field(
        description="a workload id of the request"
    )
    since: Annotated[str, StringConstraints(min_length=4, max_length=40)] = Field(
        description="runs started at or after this ISO 8601 date or time"
    )
    until: Annotated[str, StringConstraints(min_length=4, max_length=40)] | None = Field(
        default=None, description="runs started before this ISO 8601 date or time"
    )
    variant: Annotated[str, StringConstraints(min_length=1, max_length=256)] = Field(
        default="-", description="a sweep point such as numjobs=16; - for none"
    )
    phase: Annotated[str, StringConstraints(min_length=1, max_length=64)] = Field(
        default="run", description="the workload phase"
    )
    direction: Direction | None = Field(default=None, description="one direction; all four when omitted")
    suite: Annotated[str, StringConstraints(pattern=SLUG_PATTERN)] | None = Field(
        default=None, description="only results of this suite"
    )
    limit: int = Field(default=100, ge=1, le=1000, description="points per page, 1 to 1000")
    cursor: Cursor | None = Field(default=None, description="the `next_cursor` of the previous page")

    @field_validator("since")
    @classmethod
    def _since(cls, value: str) -> str:
        return _checked_time(value, "since")

    @field_validator("until")
    @classmethod
    def _until(cls, value: str | None) -> str | None:
        return None if value is None else _checked_time(value, "until")


class RunPath(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    run_id: Annotated[str, StringConstraints(pattern=RUN_ID_PATTERN)] = Field(
        description="the run id (its Step Functions execution name)"
    )


def _allowed(model: type[BaseModel], name: str) -> Any:
    field = model.model_fields.get(name)
    if field is None:
        return sorted(model.model_fields)
    if field.annotation is bool:
        return list(FLAG_VALUES)
    return field.description


def parse_params(model: type[BaseModel], values: Mapping[str, Any] | None, where: str = "query") -> Any:
    """Validate parameters into ``model``; ApiError 400 naming every bad parameter and its value."""
    given = dict(values or {})
    try:
        return model.model_validate(given)
    except ValidationError as exc:
        details = []
        for error in exc.errors():
            name = str(error["loc"][0]) if error["loc"] else "(parameters)"
            kind = error["type"]
            if kind == "extra_forbidden":
                message = f"unknown {where} parameter; allowed: {', '.join(model.model_fields)}"
                allowed: Any = list(model.model_fields)
            elif kind == "missing":
                message = "required"
                allowed = _allowed(model, name)
            else:
                message = str(error["msg"]).removeprefix("Value error, ")
                allowed = _allowed(model, name)
            details.append(detail(name, given.get(name), message, allowed))
        summary = "; ".join(f"{d.field}: {d.message}" for d in details)
        raise ApiError(400, f"bad_{where}", f"invalid {where} parameters: {summary}", details) from None

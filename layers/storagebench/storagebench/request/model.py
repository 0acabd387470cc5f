"""The benchmark request: the one document the API, the schedules and the CLI accept.

Structure is checked by the field types; AWS's rules (sizes, IOPS:GiB ratios, gp3
throughput per IOPS, which kinds need which fields) come from the catalog and are checked by
the model validators, each problem located at its field so the user sees
``configs[1].targets[0].iops: ...`` with the value and the allowed range. Nothing is launched
from a request that does not validate.

This module holds the request itself (``BenchmarkRequest``, its timing and scheduled occurrence);
its parts live beside it: ``targets`` (one model per storage kind), ``configs`` (the machines of a
config and their rules), ``workloads``, ``ebs_rules`` and ``fields`` (shared patterns and limits).
The names other modules import from here are re-exported (``__all__``).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field, StringConstraints, field_validator, model_validator
from pydantic.json_schema import SkipJsonSchema

from storagebench.request.command_needs import command_need_problems
from storagebench.request.configs import Config, NodeGroup, RootVolume
from storagebench.request.fields import (
    INSTANCE_TYPE_PATTERN,
    LOCAL_PATH_PATTERN,
    MAX_DATA_VOLUMES,
    REGION_PATTERN,
    SLUG_PATTERN,
    SNAPSHOT_PATTERN,
    Slug,
    expansion_only,
)
from storagebench.request.matrix_models import MatrixInvalid, SkippedPoint
from storagebench.request.node_loss import node_loss_problems
from storagebench.request.plan_size import plan_size_problems
from storagebench.request.prewarm import Prewarm
from storagebench.request.problems import Problems
from storagebench.request.purchase import PURCHASE_DESCRIPTION, Purchase
from storagebench.request.references import reference_problems
from storagebench.request.repetitions import REPETITIONS_DESCRIPTION, Repetitions, steady_state_problems
from storagebench.request.requirements import MAX_LENGTH as REQUIREMENT_LENGTH
from storagebench.request.requirements import METRICS as REQUIREMENT_METRICS
from storagebench.request.rules import RequestModel, rule
from storagebench.request.tags import ALLOWED as TAG_CHARACTERS
from storagebench.request.tags import MAX_USER_TAGS, tag_problems
from storagebench.request.targets import (
    GATEWAY_CACHE_MAX_TOTAL_GIB,
    GATEWAY_CACHE_MIN_GIB,
    GATEWAY_MIN_MEMORY_GIB,
    GATEWAY_MIN_VCPUS,
    GATEWAY_ROOT_MIN_GIB,
    EbsTarget,
    EfsTarget,
    FileGatewayTarget,
    FsxLustreTarget,
    GatewayVolume,
    InstanceStoreTarget,
    LocalTarget,
    NfsTarget,
    Target,
    target_mode,
)
from storagebench.request.topology import multi_client_problems
from storagebench.request.workloads import ResolvedWorkload, WorkloadRef

MAX_CONFIGS = 500  # up to 40 run in the inline Map, more in the Distributed Map (one child each)
MAX_CONCURRENCY = 40  # configs at once, on either Map (the stack's guardrails cap it lower)


class Timing(RequestModel):
    """Poll intervals and deadlines of the workflow; small values make tests fast."""

    ready_poll_s: int = Field(default=15, ge=1, le=300, description="while instances and file systems start")
    command_poll_s: int = Field(
        default=300,
        ge=1,
        le=600,
        description="while workloads run; <= 600 so a dead instance is seen in 10 min",
    )
    command_timeout_h: float = Field(
        default=12, ge=0.005, le=48, description="SSM execution timeout, 18 s (tests) to 48 h (SSM's maximum)"
    )
    max_run_hours: float = Field(
        default=24, gt=0, le=168, description="resources expire (janitor) after this"
    )

    @rule("command_timeout_h", "max_run_hours")
    def _within_the_run(self, problems: Problems) -> None:
        if self.command_timeout_h > self.max_run_hours:
            problems.add(
                ("command_timeout_h",),
                self.command_timeout_h,
                f"must not exceed max_run_hours ({self.max_run_hours:g}): the run's resources expire then",
            )


# What EventBridge Scheduler substitutes for <aws.scheduler.schedule-arn> and
# <aws.scheduler.scheduled-time>; the placeholders themselves (a start that is not a schedule's) fail.
SCHEDULE_ARN_PATTERN = (
    r"^arn:aws[a-z-]*:scheduler:[a-z0-9-]+:\d{12}:schedule/[0-9A-Za-z_.-]{1,64}/[0-9A-Za-z_.-]{1,64}$"
)
SCHEDULED_TIME_PATTERN = r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$"


class ScheduledOccurrence(RequestModel):
    """Which occurrence of a schedule started the run. Every attempt EventBridge Scheduler makes for
    one occurrence substitutes the same two values, so Plan claims the pair once (docs/deploy.md,
    Exactly once)."""

    schedule_arn: Annotated[str, StringConstraints(pattern=SCHEDULE_ARN_PATTERN)]
    scheduled_time: Annotated[str, StringConstraints(pattern=SCHEDULED_TIME_PATTERN)]


class BenchmarkRequest(RequestModel):
    name: Slug = Field(description="suite name: groups nightly runs of the same comparison")
    description: str | None = Field(default=None, max_length=2000)
    region: Annotated[str, StringConstraints(pattern=REGION_PATTERN)] = "us-east-1"
    baseline: str | None = Field(
        default=None, description="config id the others are compared with (default: first)"
    )
    configs: list[Config] = Field(min_length=1, max_length=MAX_CONFIGS)
    workloads: list[WorkloadRef] = Field(min_length=1, max_length=50)
    prewarm: Prewarm = Field(default_factory=Prewarm)
    repetitions: Repetitions = Field(default=3, description=REPETITIONS_DESCRIPTION)
    order: Literal["sequential", "interleaved"] = Field(
        default="sequential", description="interleaved runs repetition 1 of every workload, then 2, ..."
    )
    max_concurrency: int | None = Field(
        default=None, ge=1, le=MAX_CONCURRENCY, description="configs run at once"
    )
    timing: Timing = Field(default_factory=Timing)
    fail_fast: bool = Field(default=False, description="stop a config's workloads at its first failure")
    purchase: Purchase | None = Field(
        default=None, description="every config's purchase unless it sets its own: " + PURCHASE_DESCRIPTION
    )
    requirements: list[Annotated[str, StringConstraints(min_length=1, max_length=REQUIREMENT_LENGTH)]] = (
        Field(
            default_factory=list,
            max_length=50,
            description="what a config must deliver, as WORKLOAD[:DIRECTION]:METRIC OP VALUE (e.g. "
            "std-randread-4k:iops>=3500, std-randread-4k:read:p95_ms<2; metrics: "
            f"{', '.join(REQUIREMENT_METRICS)}): the report and `storagebench recommend` name the "
            "cheapest config whose 95 % confidence bound meets every one",
        )
    )
    tags: dict[str, str] = Field(
        default_factory=dict,
        description=f"put on every instance, volume, file system and gateway of the run: at most "
        f"{MAX_USER_TAGS}; keys 1-128 and values 0-256 characters of {TAG_CHARACTERS}; aws:, "
        "storagebench: and Name are reserved",
        json_schema_extra={"maxProperties": MAX_USER_TAGS},
    )
    matrix_invalid: MatrixInvalid = Field(
        default="error",
        description="a matrix point that breaks AWS's rules (e.g. gp3 IOPS above 500 per GiB): error "
        "refuses the request naming each point and rule; skip leaves the point out and lists it in "
        "validate, cost, the dry run and the report",
    )
    # The points matrix_invalid skip left out: set by the expansion only, like origin.
    matrix_skipped: SkipJsonSchema[list[SkippedPoint]] = Field(default_factory=list, exclude=True)

    @field_validator("matrix_skipped", mode="before")
    @classmethod
    def _skipped_by_the_expansion(cls, value: Any) -> Any:
        if isinstance(value, list):
            return [expansion_only(point, SkippedPoint) for point in value]
        return expansion_only(value, list)

    # Set by a schedule's Input only: the API refuses it, the published schema and the dumps (the
    # request as stored for the steps) leave it out; the run item keeps the document as started.
    scheduled: SkipJsonSchema[ScheduledOccurrence | None] = Field(default=None, exclude=True)

    @model_validator(mode="after")
    def _cross_checks(self) -> BenchmarkRequest:
        problems = Problems("BenchmarkRequest")
        found = [
            *reference_problems(self.model_dump()),
            *tag_problems(self.tags),
            *steady_state_problems(self),
            *multi_client_problems(self),
            *node_loss_problems(self),
            *plan_size_problems(self),
            *command_need_problems(self),
        ]
        for loc, value, message in found:
            problems.add(loc, value, message)
        problems.raise_if_any()
        return self

    @property
    def baseline_id(self) -> str:
        return self.baseline or self.configs[0].id

    def resolved_workloads(self) -> list[ResolvedWorkload]:
        return [w for ref in self.workloads for w in ref.expand()]

    def repetitions_of(self, workload: ResolvedWorkload) -> Repetitions:
        return workload.repetitions if workload.repetitions is not None else self.repetitions

    def config(self, config_id: str) -> Config:
        for config in self.configs:
            if config.id == config_id:
                return config
        raise KeyError(f"no config {config_id!r}; configs are {', '.join(c.id for c in self.configs)}")


__all__ = [
    "GATEWAY_CACHE_MAX_TOTAL_GIB",
    "GATEWAY_CACHE_MIN_GIB",
    "GATEWAY_MIN_MEMORY_GIB",
    "GATEWAY_MIN_VCPUS",
    "GATEWAY_ROOT_MIN_GIB",
    "INSTANCE_TYPE_PATTERN",
    "LOCAL_PATH_PATTERN",
    "MAX_CONCURRENCY",
    "MAX_CONFIGS",
    "MAX_DATA_VOLUMES",
    "REGION_PATTERN",
    "SCHEDULED_TIME_PATTERN",
    "SCHEDULE_ARN_PATTERN",
    "SLUG_PATTERN",
    "SNAPSHOT_PATTERN",
    "BenchmarkRequest",
    "Config",
    "EbsTarget",
    "EfsTarget",
    "FileGatewayTarget",
    "FsxLustreTarget",
    "GatewayVolume",
    "InstanceStoreTarget",
    "LocalTarget",
    "NfsTarget",
    "NodeGroup",
    "ResolvedWorkload",
    "RootVolume",
    "ScheduledOccurrence",
    "Target",
    "Timing",
    "WorkloadRef",
    "target_mode",
]

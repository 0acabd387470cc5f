"""What a request would do, what it would cost, and whether the stack allows it: before anything runs.

``preview_request`` is the one place the planning guardrails are decided. The Plan step raises
``GuardrailError`` when it finds problems and the API's dry run returns the same preview, so the
two can never disagree. Guardrails (stack parameters, ``workflow.settings.Guardrails``):

* ``MaxConfigsPerRun`` and ``AllowedInstanceTypes``: refused;
* ``MaxRunHours``: a request whose ``timing.max_run_hours`` is longer is refused;
* ``MaxRunCostUsd``: the estimated cost (below) over it is refused;
* ``MaxConcurrentInstances``: instances launched at once are the Map's concurrency times one
  instance per config; a concurrency above the limit is *capped* (with a note), not refused,
  because it changes how long the run takes and nothing it measures.

The estimate prices every config's instance, volumes and file systems (``costs.monthly``) with the
bundled, dated price snapshot (deterministic, no network; the same figure in the dry run and at
Plan) for the run's duration. The workload profiles give no duration estimate (dd and fio
size-based phases last as long as the storage takes), so the duration is ``timing.max_run_hours``,
the hour the run's resources expire: an upper bound, and the estimate says so.
"""

from __future__ import annotations

import math
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from storagebench.costs.document import cost_document
from storagebench.planning.steps import plan_steps
from storagebench.prices.models import PriceBook
from storagebench.request.model import BenchmarkRequest, EbsTarget, Target
from storagebench.workflow.settings import Guardrails

INSTANCES_PER_CONFIG = 1  # launch_spec starts one instance per config; file systems are not instances
PROXY_REGION = "us-east-1"  # priced with these when the snapshot lacks the request's region


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class GuardrailProblem(_Frozen):
    """One limit a request is over: which field, which stack parameter, its value and the request's."""

    field: str = Field(description="the request's field path, e.g. configs[1].instance_type")
    limit: str = Field(description="the stack parameter, e.g. MaxRunCostUsd")
    limit_value: Any = Field(description="the parameter's value in this stack")
    value: Any = Field(description="the request's value")
    message: str

    def __str__(self) -> str:
        return f"{self.field}: {self.message}"


class ConfigPreview(_Frozen):
    id: str
    instance_type: str
    targets: list[str] = Field(description="target id and kind, e.g. data (ebs gp3)")
    steps: list[str] = Field(description="the agent's steps in run order (workload.target[.variant].rN)")
    run_usd: float = Field(description="this config's resources kept for the estimate's hours")
    monthly_usd: float


class CostEstimate(_Frozen):
    currency: Literal["USD"] = "USD"
    total_usd: float = Field(description="every config's resources kept for `hours`")
    hours: float
    duration_basis: str = Field(description="where `hours` comes from")
    region: str
    priced_region: str = Field(description="the region whose prices were used")
    price_source: str
    price_date: str | None
    complete: bool = Field(description="false when some price was missing: the total is a lower bound")
    notes: list[str] = Field(default_factory=list)
    configs: dict[str, Any] = Field(description="the priced request: `storagebench cost --json`")


class RunPreview(_Frozen):
    """The expanded plan, the cost estimate and the guardrails' verdict of one request."""

    suite: str
    region: str
    baseline: str
    configs: list[ConfigPreview]
    workloads: list[dict[str, Any]]
    max_concurrency: int = Field(description="configs run at once (the Map's MaxConcurrency)")
    concurrent_instances: int = Field(description="instances running at once at most")
    max_run_hours: float
    estimate: CostEstimate
    problems: list[GuardrailProblem]
    notes: list[str]

    @property
    def allowed(self) -> bool:
        return not self.problems

    def problem_text(self) -> str:
        return "request over the stack's limits:\n  " + "\n  ".join(str(p) for p in self.problems)


def guardrail_prices(region: str) -> tuple[PriceBook, str]:
    """The snapshot for ``region``, or for PROXY_REGION when the snapshot does not hold it."""
    from storagebench.prices.snapshot import SnapshotPriceBook, load_snapshot

    snapshot = load_snapshot()
    priced = region if region in snapshot.regions else PROXY_REGION
    return SnapshotPriceBook(priced, snapshot), priced


def _describe_target(target: Target) -> str:
    kind = f"{target.kind} {target.type}" if isinstance(target, EbsTarget) else target.kind
    return f"{target.id} ({kind})"


def _usd(value: float) -> str:
    return f"${value:,.2f}"


def preview_request(
    request: BenchmarkRequest, limits: Guardrails, book: PriceBook | None = None
) -> RunPreview:
    """Expand, price and check a validated request against the stack's guardrails."""
    problems: list[GuardrailProblem] = []
    notes: list[str] = []
    configs = request.configs
    if len(configs) > limits.max_configs_per_run:
        problems.append(
            GuardrailProblem(
                field="configs",
                limit="MaxConfigsPerRun",
                limit_value=limits.max_configs_per_run,
                value=len(configs),
                message=f"{len(configs)} configs, the stack allows at most {limits.max_configs_per_run} "
                "per run (MaxConfigsPerRun)",
            )
        )
    for position, config in enumerate(configs):
        if not limits.allows(config.instance_type):
            allowed = ", ".join(limits.allowed_instance_types)
            problems.append(
                GuardrailProblem(
                    field=f"configs[{position}].instance_type",
                    limit="AllowedInstanceTypes",
                    limit_value=list(limits.allowed_instance_types),
                    value=config.instance_type,
                    message=f"{config.instance_type} is not allowed by this stack (AllowedInstanceTypes: "
                    f"{allowed})",
                )
            )
    hours = request.timing.max_run_hours
    if hours > limits.max_run_hours:
        problems.append(
            GuardrailProblem(
                field="timing.max_run_hours",
                limit="MaxRunHours",
                limit_value=limits.max_run_hours,
                value=hours,
                message=f"{hours:g} h, the stack allows runs of at most {limits.max_run_hours:g} h "
                "(MaxRunHours)",
            )
        )

    wanted = min(request.max_concurrency or limits.max_concurrency, limits.max_concurrency, len(configs))
    by_instances = max(1, limits.max_concurrent_instances // INSTANCES_PER_CONFIG)
    concurrency = min(wanted, by_instances)
    if concurrency < wanted:
        notes.append(
            f"max_concurrency: {wanted} configs at once would run {wanted * INSTANCES_PER_CONFIG} "
            f"instances; capped to {concurrency} (MaxConcurrentInstances "
            f"{limits.max_concurrent_instances}): the run takes longer, it measures the same"
        )

    if book is None:
        book, priced_region = guardrail_prices(request.region)
    else:
        priced_region = book.region
    estimate_notes: list[str] = []
    if priced_region != request.region:
        estimate_notes.append(
            f"the price snapshot has no {request.region} prices: estimated with {priced_region}'s"
        )
    document, costs = cost_document(request, book, hours)
    run_usd = {c.id: costs[c.id].for_hours(hours).usd for c in configs}
    total = math.fsum(run_usd.values())
    complete = bool(document["complete"])
    if not complete:
        missing = sorted({m for cost in costs.values() for m in cost.missing_prices})
        estimate_notes.append(
            "some prices are missing, so the total is a lower bound: " + "; ".join(missing[:5])
        )
    basis = (
        "timing.max_run_hours: an upper bound (the run's resources expire then; the workload "
        "profiles give no duration estimate)"
    )
    if total > limits.max_run_cost_usd:
        bound = "at least " if not complete else ""
        problems.append(
            GuardrailProblem(
                field="configs",
                limit="MaxRunCostUsd",
                limit_value=limits.max_run_cost_usd,
                value=round(total, 2),
                message=f"estimated cost {bound}{_usd(total)} ({len(configs)} config(s) for {hours:g} h, "
                f"timing.max_run_hours), the stack allows at most {_usd(limits.max_run_cost_usd)} "
                "per run (MaxRunCostUsd)",
            )
        )
    estimate = CostEstimate(
        total_usd=round(total, 6),
        hours=hours,
        duration_basis=basis,
        region=request.region,
        priced_region=priced_region,
        price_source=str(document["price_source"]),
        price_date=document["price_date"],
        complete=complete,
        notes=estimate_notes,
        configs=document,
    )
    return RunPreview(
        suite=request.name,
        region=request.region,
        baseline=request.baseline_id,
        configs=[
            ConfigPreview(
                id=c.id,
                instance_type=c.instance_type,
                targets=[_describe_target(t) for t in c.targets],
                steps=[str(step["id"]) for step in plan_steps(request, c)],
                run_usd=round(run_usd[c.id], 6),
                monthly_usd=round(costs[c.id].monthly_usd, 6),
            )
            for c in configs
        ],
        workloads=[w.model_dump(mode="json") for w in request.resolved_workloads()],
        max_concurrency=concurrency,
        concurrent_instances=concurrency * INSTANCES_PER_CONFIG,
        max_run_hours=hours,
        estimate=estimate,
        problems=problems,
        notes=notes,
    )

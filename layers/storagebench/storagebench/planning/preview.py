"""What a request would do, what it would cost, and whether the stack allows it: before anything runs.

``preview_request`` is the one place the planning guardrails are decided. The Plan step raises
``GuardrailError`` when it finds problems and the API's dry run returns the same preview, so the
two can never disagree. Guardrails (stack parameters, ``core.guardrails.Guardrails``):

* ``MaxConfigsPerRun`` and ``AllowedInstanceTypes``: refused;
* ``MaxRunHours``: a request whose ``timing.max_run_hours`` is longer is refused, and so is one
  whose expected wall time (below) does not fit in its own ``timing.max_run_hours``: its resources
  would expire before its workloads finish;
* ``MaxRunCostUsd``: the expected cost (below) over it is refused;
  a config bought on Spot (``purchase``) is expected at the bundled Spot price of its type
  (``costs.spot_estimate``), its upper bound stays on-demand;
* ``MaxConcurrentInstances``: instances launched at once are the Map's concurrency times one
  instance per config; a concurrency above the limit is *capped* (with a note), not refused,
  because it changes how long the run takes and nothing it measures.

The estimate prices every config's instance, volumes and file systems (``costs.monthly``) with the
bundled, dated price snapshot (deterministic, no network; the same figure in the dry run and at
Plan) for the hours it is expected to keep them (``planning.duration``: boot, setup, pre-warm, every
step of its plan, cleanup). The wall time is the Map's schedule of those durations at the capped
concurrency. The upper bound prices every config until ``timing.max_run_hours``, when the run's
resources expire whatever happens; an estimate that could not cover some part (a custom command,
a target without catalog rates) says so and its figures are lower bounds.
"""

from __future__ import annotations

import math
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from storagebench.core.guardrails import Guardrails
from storagebench.costs.document import cost_document
from storagebench.costs.monthly import ConfigCost, unverified_prices
from storagebench.costs.spot_estimate import InstanceEstimate, request_estimates, spot_notes, with_spot
from storagebench.kinds import kind_of
from storagebench.kinds.reach import NetworkCheck, network_checks
from storagebench.planning.duration import RunDuration, estimate_duration
from storagebench.planning.knee import KneeForecast, request_knees
from storagebench.planning.quota_preview import over_quota, quota_check, quota_notes
from storagebench.planning.steps import plan_steps
from storagebench.prices.book import PriceBook
from storagebench.prices.models import PriceNotFound
from storagebench.prices.products import PriceKey
from storagebench.quotas.check import QuotaCheck
from storagebench.quotas.ports import QuotaPolicy
from storagebench.request.matrix import summarize_matrices
from storagebench.request.matrix_models import MatrixSummary
from storagebench.request.model import BenchmarkRequest, Config, Target
from storagebench.request.purchase import Purchase


def instances_per_config(config: Config) -> int:
    """The config's clients and nodes plus each File Gateway appliance it launches (file systems are
    not instances)."""
    return config.instance_count + sum(kind_of(t).appliances for t in config.targets)


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
    machines: str = Field(description="what it launches: 4 x c5.2xlarge + 5 controller r5b.24xlarge")
    targets: list[str] = Field(description="target id and kind, e.g. data (ebs gp3)")
    steps: list[str] = Field(description="the agent's steps in run order (workload.target[.variant].rN)")
    expected_hours: float = Field(description="launch to cleanup, expected (estimate.duration)")
    run_usd: float = Field(description="this config's resources kept for expected_hours")
    purchase: Purchase = Field(description="how its instances are bought (request.purchase)")
    instance_usd_per_hour: float | None = Field(
        default=None, description="the Spot price run_usd uses for its instance (None: on-demand)"
    )
    upper_bound_usd: float = Field(description="this config's resources kept until timing.max_run_hours")
    monthly_usd: float


class CostEstimate(_Frozen):
    currency: Literal["USD"] = "USD"
    total_usd: float = Field(
        description="every config's resources kept for its expected hours (adaptive repetitions: all max)"
    )
    min_total_usd: float = Field(
        description="the same with every adaptive series stopping at its min (= total_usd without them)"
    )
    wall_hours: float = Field(description="the run's expected wall time: the Map's schedule of configs")
    min_wall_hours: float = Field(description="the same with every adaptive series stopping at its min")
    duration: RunDuration = Field(description="each config's expected hours, by stage")
    duration_basis: str = Field(description="how the expected hours are estimated")
    upper_bound_usd: float = Field(
        description="every config's resources kept until they expire (upper_bound_hours)"
    )
    upper_bound_hours: float = Field(description="timing.max_run_hours: when the resources expire")
    region: str
    priced_region: str = Field(description="the region whose prices were used")
    price_source: str
    price_date: str | None
    complete: bool = Field(
        description="false when some price was missing or some duration could not be estimated: "
        "the totals are lower bounds"
    )
    notes: list[str] = Field(default_factory=list)
    configs: dict[str, Any] = Field(
        description="the priced request: `storagebench cost --json --hours <upper_bound_hours>`"
    )


class RunPreview(_Frozen):
    """The expanded plan, the cost estimate and the guardrails' verdict of one request."""

    suite: str
    region: str
    baseline: str
    configs: list[ConfigPreview]
    matrices: list[MatrixSummary] = Field(
        default_factory=list,
        description="each config matrix: its axes, the configs it expands into, the points skipped",
    )
    workloads: list[dict[str, Any]]
    max_concurrency: int = Field(description="configs run at once (the Map's MaxConcurrency)")
    concurrent_instances: int = Field(description="instances running at once at most")
    max_run_hours: float
    vcpu_quotas: QuotaCheck | None = Field(
        default=None,
        description="vCPUs needed at once per EC2 quota against the account's (None: quotas not checked)",
    )
    estimate: CostEstimate
    knees: list[KneeForecast] = Field(
        default_factory=list,
        description="each burst-bucket target (gp2 below 1 TiB, st1, sc1): when its credits run out "
        "under the planned load, and whether that falls inside the workloads on it (planning.knee)",
    )
    problems: list[GuardrailProblem]
    notes: list[str]
    network: list[NetworkCheck] = Field(
        default_factory=list,
        description="each target reached over the clients' network: its ceiling, min(storage, the "
        "clients' network), and a warning when the network caps below the storage (kinds.reach)",
    )

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
    return f"{target.id} ({kind_of(target).preview_text(target)})"


def _usd(value: float) -> str:
    return f"${value:,.2f}"


DURATION_BASIS = (
    "planning.duration: instance boot and status checks (file systems created meanwhile), agent "
    "setup, pre-warm (restored EBS volumes read end to end, the others' cold-read check) at the "
    "target's sustained catalog rate, every plan step (fio "
    "ramp_time + runtime, size-bound dd/fio phases and fio file layout at the target's rate), "
    "collect and cleanup"
)


def _deadline_problem(request: BenchmarkRequest, duration: RunDuration, limit_h: float) -> GuardrailProblem:
    deadline = request.timing.max_run_hours
    longest = max(duration.configs, key=lambda c: c.hours)
    floor = "" if duration.complete else "at least "
    return GuardrailProblem(
        field="timing.max_run_hours",
        limit="MaxRunHours",
        limit_value=deadline,
        value=round(duration.wall_hours, 2),
        message=f"the workloads need an expected wall time of {floor}{duration.wall_hours:.1f} h "
        f"({len(duration.configs)} config(s), {duration.concurrency} at once; the longest, "
        f"{longest.config_id}, {longest.hours:.1f} h), longer than timing.max_run_hours "
        f"{deadline:g} h: the resources would expire first. Lower workloads[].scale or repetitions, "
        f"run more configs at once (max_concurrency), or raise timing.max_run_hours (the stack "
        f"allows up to {limit_h:g} h, MaxRunHours)",
    )


def _cost_problem(
    limit: float,
    n_configs: int,
    expected: float,
    upper: float,
    hours: float,
    priced: bool,
) -> GuardrailProblem | None:
    """MaxRunCostUsd against the upper bound: every resource of every config alive until
    timing.max_run_hours, when the tags expire and the janitor would take them. A run that hangs
    costs that much, so that is what the stack's limit must cover, not the expected cost."""
    if upper <= limit:
        return None
    bound = "" if priced else "at least "
    return GuardrailProblem(
        field="configs",
        limit="MaxRunCostUsd",
        limit_value=limit,
        value=round(upper, 2),
        message=f"cost {bound}{_usd(upper)} if its {n_configs} config(s) lived until timing.max_run_hours "
        f"{hours:g} h (expected {bound}{_usd(expected)}), the stack allows at most {_usd(limit)} per run "
        "(MaxRunCostUsd): lower timing.max_run_hours or the configs",
    )


def _launched_types(configs: list[Config]) -> list[tuple[str, str]]:
    """(field, instance type) of every instance a request launches: clients and appliances."""
    launched: list[tuple[str, str]] = []
    for position, config in enumerate(configs):
        launched.append((f"configs[{position}].instance_type", config.instance_type))
        for index, group in enumerate(config.nodes):
            launched.append((f"configs[{position}].nodes[{index}].instance_type", group.instance_type))
        for index, target in enumerate(config.targets):
            for field, appliance in kind_of(target).appliance_instance_types(target):
                launched.append((f"configs[{position}].targets[{index}].{field}", appliance))
    return launched


def _type_problems(configs: list[Config], limits: Guardrails) -> list[GuardrailProblem]:
    """IAM refuses the same launches (ec2:InstanceType StringLike AllowedInstanceTypes)."""
    allowed = ", ".join(limits.allowed_instance_types)
    return [
        GuardrailProblem(
            field=field,
            limit="AllowedInstanceTypes",
            limit_value=list(limits.allowed_instance_types),
            value=instance_type,
            message=f"{instance_type} is not allowed by this stack (AllowedInstanceTypes: {allowed})",
        )
        for field, instance_type in _launched_types(configs)
        if not limits.allows(instance_type)
    ]


def _unpriced_problems(configs: list[Config], book: PriceBook) -> list[GuardrailProblem]:
    """An instance type the book cannot price would count as $0 and slip under MaxRunCostUsd."""
    problems: list[GuardrailProblem] = []
    for field, instance in _launched_types(configs):
        try:
            book.price(PriceKey("ec2_instance_hour", (instance,)))
        except PriceNotFound as exc:
            problems.append(
                GuardrailProblem(
                    field=field,
                    limit="MaxRunCostUsd",
                    limit_value=None,
                    value=instance,
                    message=f"{instance} cannot be priced ({exc}), so the run's cost cannot be bounded: "
                    "pick a priced type or refresh the prices (storagebench prices refresh)",
                )
            )
    return problems


def _target_problems(configs: list[Config], limits: Guardrails) -> list[GuardrailProblem]:
    """Kinds this deployment cannot provision (``Guardrails.unprovisionable_kinds``: local mode, a
    stack without gateway settings) are refused."""
    problems: list[GuardrailProblem] = []
    for position, config in enumerate(configs):
        for index, target in enumerate(config.targets):
            where = f"configs[{position}].targets[{index}]"
            why = limits.unprovisionable_kinds.get(target.kind)
            if why is not None:
                problems.append(
                    GuardrailProblem(
                        field=f"{where}.kind",
                        limit="ProvisionableKinds",
                        limit_value=sorted(limits.unprovisionable_kinds),
                        value=target.kind,
                        message=f"cannot provision {target.kind} targets here: {why}; the request "
                        "validates and is priced (storagebench cost), but is not run",
                    )
                )
    return problems


def _instance_problems(configs: list[Config], limits: Guardrails) -> list[GuardrailProblem]:
    """A config whose clients and nodes alone outnumber MaxConcurrentInstances cannot run at all:
    the cap on configs at once cannot help it."""
    problems: list[GuardrailProblem] = []
    for position, config in enumerate(configs):
        needed = instances_per_config(config)
        if needed > limits.max_concurrent_instances:
            problems.append(
                GuardrailProblem(
                    field=f"configs[{position}]",
                    limit="MaxConcurrentInstances",
                    limit_value=limits.max_concurrent_instances,
                    value=needed,
                    message=f"{config.id} launches {needed} instances at once ({config.clients} "
                    f"client(s), {config.instance_count - config.clients} node(s)), the stack allows "
                    f"{limits.max_concurrent_instances} (MaxConcurrentInstances): raise it to at least "
                    f"{needed}, or use fewer nodes or clients",
                )
            )
    return problems


def _size_problems(request: BenchmarkRequest, limits: Guardrails) -> list[GuardrailProblem]:
    """MaxConfigsPerRun and MaxRunHours: more configs, or a longer timing.max_run_hours, are refused."""
    problems: list[GuardrailProblem] = []
    configs, hours = len(request.configs), request.timing.max_run_hours
    if configs > limits.max_configs_per_run:
        problems.append(
            GuardrailProblem(
                field="configs",
                limit="MaxConfigsPerRun",
                limit_value=limits.max_configs_per_run,
                value=configs,
                message=f"{configs} configs, the stack allows at most {limits.max_configs_per_run} "
                "per run (MaxConfigsPerRun)",
            )
        )
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
    return problems


def _instance_estimates(
    request: BenchmarkRequest, limits: Guardrails, region: str, notes: list[str]
) -> dict[str, InstanceEstimate]:
    """How each config's instance is estimated (the Spot snapshot where it buys Spot); what the
    estimate says about it goes to ``notes``."""
    instances = request_estimates(request, limits.default_purchase, region)
    notes += spot_notes(instances.values())
    return instances


def _config_usd(
    configs: list[Config],
    costs: dict[str, ConfigCost],
    instances: dict[str, InstanceEstimate],
    expected_hours: dict[str, float],
    hours: float,
) -> tuple[dict[str, float], dict[str, float]]:
    """Each config's expected cost (its instance at the Spot estimate where it buys Spot) and its upper
    bound (everything on-demand until the resources expire)."""
    expected = {
        c.id: with_spot(costs[c.id].for_hours(expected_hours[c.id]), instances[c.id], c.instance_type).usd
        for c in configs
    }
    return expected, {c.id: costs[c.id].for_hours(hours).usd for c in configs}


def _adaptive_range(
    duration: RunDuration, fewest_usd: dict[str, float], total: float, notes: list[str]
) -> float:
    """The expected cost with every adaptive series stopping at its min (a note gives the range)."""
    min_total = math.fsum(fewest_usd.values())
    if duration.min_wall_hours < duration.wall_hours:
        notes.append(
            f"adaptive repetitions: {duration.min_wall_hours:.2f}..{duration.wall_hours:.2f} h and "
            f"{_usd(min_total)}..{_usd(total)} (every series stopping at its min .. at its max); the "
            "guardrails judge the max"
        )
    return min_total


def _quota_section(
    request: BenchmarkRequest,
    concurrency: int,
    limits: Guardrails,
    quotas: QuotaPolicy | None,
    problems: list[GuardrailProblem],
    notes: list[str],
) -> QuotaCheck | None:
    """The vCPU quotas at the capped concurrency: an excess joins ``problems`` (where the policy
    refuses), the warnings join ``notes``; None when no policy asks for them."""
    if quotas is None:
        return None
    check = quota_check(request, concurrency, limits.default_purchase, quotas)
    problems += [GuardrailProblem(**problem) for problem in over_quota(check)]
    notes += quota_notes(check)
    return check


def _completeness_notes(costs: dict[str, ConfigCost], priced: bool, duration: RunDuration) -> list[str]:
    """What makes the estimate a lower bound or rests on an unverified price."""
    notes: list[str] = []
    if not priced:
        missing = sorted({m for cost in costs.values() for m in cost.missing_prices})
        notes.append("some prices are missing, so the totals are lower bounds: " + "; ".join(missing[:5]))
    notes += [f"unverified price: {line}" for line in unverified_prices(costs)]
    if not duration.complete:
        notes.append(
            "some durations could not be estimated, so the expected figures are lower bounds (see "
            "duration.notes); the upper bound still holds"
        )
    return notes


def preview_request(
    request: BenchmarkRequest,
    limits: Guardrails,
    book: PriceBook | None = None,
    quotas: QuotaPolicy | None = None,
) -> RunPreview:
    """Expand, price and check a validated request against the stack's guardrails (and, given a
    ``quotas`` policy, the account's EC2 vCPU quotas: ``planning.quota_preview``)."""
    notes: list[str] = []
    configs = request.configs
    hours = request.timing.max_run_hours
    problems = _size_problems(request, limits)
    problems += _type_problems(configs, limits)
    problems += _target_problems(configs, limits)

    wanted = min(request.max_concurrency or limits.max_concurrency, limits.max_concurrency, len(configs))
    problems += _instance_problems(configs, limits)
    # The Map runs any `concurrency` configs at once: the largest ones together must fit.
    largest = sorted((instances_per_config(c) for c in configs), reverse=True)
    by_instances = max(
        1, sum(1 for k in range(1, len(largest) + 1) if sum(largest[:k]) <= limits.max_concurrent_instances)
    )
    concurrency = min(wanted, by_instances)
    if concurrency < wanted:
        notes.append(
            f"max_concurrency: {wanted} configs at once could run {sum(largest[:wanted])} "
            f"instances; capped to {concurrency} (MaxConcurrentInstances "
            f"{limits.max_concurrent_instances}): the run takes longer, it measures the same"
        )
    vcpu_quotas = _quota_section(request, concurrency, limits, quotas, problems, notes)

    if book is None:
        book, priced_region = guardrail_prices(request.region)
    else:
        priced_region = book.region
    estimate_notes: list[str] = []
    if priced_region != request.region:
        estimate_notes.append(
            f"the price snapshot has no {request.region} prices: estimated with {priced_region}'s"
        )
    steps = {c.id: plan_steps(request, c) for c in configs}  # planned once: duration and preview read them
    duration = estimate_duration(request, concurrency, steps)
    if duration.wall_hours > hours:
        problems.append(_deadline_problem(request, duration, limits.max_run_hours))
    for position, expected in enumerate(duration.configs):
        agent_h = (expected.setup_s + expected.prewarm_s + expected.workloads_s) / 3600
        if agent_h > request.timing.command_timeout_h:
            notes.append(
                f"configs[{position}] ({expected.config_id}): the agent needs an expected {agent_h:.1f} h, "
                f"more than timing.command_timeout_h {request.timing.command_timeout_h:g} h: SSM stops "
                "it then and the config fails"
            )
    expected_hours = duration.config_hours
    document, costs = cost_document(request, book, hours)
    instances = _instance_estimates(request, limits, priced_region, estimate_notes)
    run_usd, bound_usd = _config_usd(configs, costs, instances, expected_hours, hours)
    total = math.fsum(run_usd.values())
    fewest_hours = {c.config_id: c.min_hours for c in duration.configs}
    fewest_usd = _config_usd(configs, costs, instances, fewest_hours, hours)[0]  # Spot where bought so
    min_total = _adaptive_range(duration, fewest_usd, total, estimate_notes)
    upper = math.fsum(bound_usd.values())
    priced = bool(document["complete"])
    estimate_notes += _completeness_notes(costs, priced, duration)
    complete = priced and duration.complete
    cost_problem = _cost_problem(limits.max_run_cost_usd, len(configs), total, upper, hours, priced)
    if cost_problem is not None:
        problems.append(cost_problem)
    problems += _unpriced_problems(configs, book)
    estimate = CostEstimate(
        total_usd=round(total, 6),
        min_total_usd=round(min_total, 6),
        wall_hours=round(duration.wall_hours, 6),
        min_wall_hours=round(duration.min_wall_hours, 6),
        duration=duration,
        duration_basis=DURATION_BASIS,
        upper_bound_usd=round(upper, 6),
        upper_bound_hours=hours,
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
                machines=c.machines,
                targets=[_describe_target(t) for t in c.targets],
                steps=[str(step["id"]) for step in steps[c.id]],
                expected_hours=round(expected_hours[c.id], 6),
                run_usd=round(run_usd[c.id], 6),
                purchase=instances[c.id].purchase,
                instance_usd_per_hour=instances[c.id].spot_usd,
                upper_bound_usd=round(bound_usd[c.id], 6),
                monthly_usd=round(costs[c.id].monthly_usd, 6),
            )
            for c in configs
        ],
        matrices=summarize_matrices(request),
        workloads=[w.model_dump(mode="json") for w in request.resolved_workloads()],
        max_concurrency=concurrency,
        concurrent_instances=sum(largest[:concurrency]),
        max_run_hours=hours,
        vcpu_quotas=vcpu_quotas,
        estimate=estimate,
        knees=request_knees(request, steps),
        problems=problems,
        notes=notes,
        network=[check for config in configs for check in network_checks(config)],
    )

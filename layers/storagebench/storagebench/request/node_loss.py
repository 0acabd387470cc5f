"""A node of the topology removed mid-workload (``workloads[].node_loss``): the virtual SAN study's
"performance with one controller removed". The field and the rules between it and the configs.

The workload must be one fio profile (not a suite, not a latency-SLA search) run from one client,
on configs that all have the node group named by ``role`` with more than ``index`` nodes.
``after_s`` counts from the start of the measured part of fio's run (after the profile's ramp:
fio's logs start there), and leaves ``agent.node_loss``'s windows room: at least
``MIN_BEFORE_S`` before and ``MIN_AFTER_S`` after, inside the workload's runtime.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any, Protocol, cast

from pydantic import Field

from storagebench.protocol.node_loss import AFTER_S, MIN_BEFORE_S
from storagebench.request.plan_size import runs_on
from storagebench.request.rules import RequestModel
from storagebench.workloads import get_profile
from storagebench.workloads.fio_options import job_file_times
from storagebench.workloads.profile import default_value, variant_count

MIN_AFTER_S = AFTER_S + 1.0  # the after window, plus a second for the removal to land
NODE_LOSS_DESCRIPTION = (
    "remove one node of the config's topology while this workload runs (the virtual SAN's controller "
    "loss) and record the I/O pause and the recovery: role and index name the node, after_s the moment "
    "in seconds into fio's measured run (after the ramp)"
)


class NodeLossSpec(RequestModel):
    """One node of the config's topology, powered off ``after_s`` into this workload's measured run."""

    role: str = Field(description="the node group, as a config's nodes[].role names it")
    index: int = Field(default=0, ge=0, description="which of its nodes, 0-based")
    after_s: float = Field(
        gt=0,
        description=f"seconds into the measured run; at least {MIN_BEFORE_S:g}, and {MIN_AFTER_S:g} "
        "before its end",
    )


class _Workload(Protocol):
    profile: str | None
    suite: str | None
    scale: float
    params: dict[str, Any]
    targets: list[str] | None
    repetitions: Any
    node_loss: NodeLossSpec | None


class _Request(Protocol):
    @property
    def configs(self) -> Sequence[Any]: ...

    @property
    def workloads(self) -> Sequence[_Workload]: ...

    @property
    def repetitions(self) -> Any: ...

    @property
    def order(self) -> str: ...


def _once(
    request: _Request, position: int, workload: _Workload
) -> Iterator[tuple[tuple[str | int, ...], Any, str]]:
    """A node is removed once and the agent skips every step after it: the loss must be the run's
    one step per config, and its last."""
    own = workload.repetitions is not None
    repetitions = workload.repetitions if own else request.repetitions
    if repetitions != 1:
        yield (  # where the value was set: the workload's own, else the request's
            ("workloads", position, "repetitions") if own else ("repetitions",),
            repetitions if isinstance(repetitions, int) else str(repetitions),
            "a node is removed once per run: set this workload's repetitions to 1",
        )
    if workload.profile is not None and variant_count(get_profile(workload.profile), workload.params) != 1:
        yield (
            ("workloads", position, "params"),
            workload.params,
            "a node loss runs one variant: no swept (list) params",
        )
    if position != len(request.workloads) - 1:
        yield (
            ("workloads", position, "node_loss"),
            workload.node_loss.model_dump() if workload.node_loss else None,
            f"the steps after a node loss are skipped (the node is gone): make this workload the last "
            f"(it is {position + 1} of {len(request.workloads)})",
        )
    if request.order == "interleaved" and len(request.workloads) > 1:
        yield (
            ("order",),
            request.order,
            "interleaved runs other workloads' later repetitions after the node loss: use sequential",
        )


def runtime_s(profile_name: str, params: dict[str, Any], scale: float) -> float | None:
    """The shortest measured runtime the workload's variants have (None: the profile has no runtime)."""
    profile = get_profile(profile_name)
    if "runtime" not in profile.param_names:
        job_file = params.get("job_file")  # fio-custom: the job file's own runtime (not scaled)
        if not isinstance(job_file, str):
            return None
        try:
            times = job_file_times(job_file, "runtime")
        except ValueError:
            return None  # workloads[].params.job_file names it
        return min(times) if times else None
    param = profile.param("runtime")
    value = params.get("runtime", default_value(param))
    values = value if isinstance(value, list) else [value]
    numbers = [float(param.scaled(v, scale)) for v in values if isinstance(v, int | float)]
    return min(numbers) if numbers else None


def node_loss_problems(request: _Request) -> Iterator[tuple[tuple[str | int, ...], Any, str]]:
    """(location, value, message) of each node loss the request's configs or workload cannot take."""
    for position, workload in enumerate(request.workloads):
        loss = workload.node_loss
        if loss is None:
            continue
        here: tuple[str | int, ...] = ("workloads", position, "node_loss")
        if sum(w.node_loss is not None for w in request.workloads) > 1:
            yield here, loss.model_dump(), "one node loss per request: the agent skips every step after it"
        try:
            yield from _once(request, position, workload)
        except KeyError:
            continue  # an unknown profile: reported at workloads[].profile
        if workload.profile is None:
            yield (
                here,
                loss.model_dump(),
                "a node loss is measured on one fio profile, not a suite: name a profile",
            )
            continue
        try:
            profile = get_profile(workload.profile)
        except KeyError:
            continue  # reported at workloads[].profile
        if profile.engine != "fio" or profile.intent == "sla":
            what = "a latency-SLA search" if profile.intent == "sla" else f"a {profile.engine} workload"
            yield (
                here,
                loss.model_dump(),
                f"{workload.profile} is {what}; a node loss is measured on fio's rate logs",
            )
            continue
        runtime = runtime_s(workload.profile, workload.params, workload.scale)
        if runtime is None or not MIN_BEFORE_S <= loss.after_s <= runtime - MIN_AFTER_S:
            allowed = (
                f"{MIN_BEFORE_S:g} to {runtime - MIN_AFTER_S:g} s (the runtime {runtime:g} s less "
                f"{MIN_AFTER_S:g} s to measure the recovery)"
                if runtime is not None and runtime - MIN_AFTER_S >= MIN_BEFORE_S
                else f"none: the workload's runtime ({runtime} s) leaves no room; at least "
                f"{MIN_BEFORE_S + MIN_AFTER_S:g} s is needed"
            )
            yield (
                (*here, "after_s"),
                loss.after_s,
                f"the node must be removed during the measured run; allowed: {allowed}",
            )
        for index, config in enumerate(request.configs):
            targets = [t.id for t in config.targets if runs_on(cast(Any, workload), t)]
            if not targets:
                continue
            if len(targets) > 1:
                yield (
                    ("workloads", position, "targets"),
                    workload.targets,
                    f"config {config.id} would run the node loss on {len(targets)} targets "
                    f"({', '.join(map(str, targets))}); the node goes once: name one target",
                )
            groups = {group.role: group for group in config.nodes}
            if loss.role not in groups:
                roles = ", ".join(sorted(groups)) or "none: the config has no nodes"
                yield (
                    (*here, "role"),
                    loss.role,
                    f"config {config.id} (configs[{index}]) runs this workload but has no "
                    f"{loss.role!r} nodes; its roles: {roles} (restrict the workload's targets to the "
                    "configs with that role)",
                )
                continue
            if loss.index >= groups[loss.role].count:
                yield (
                    (*here, "index"),
                    loss.index,
                    f"config {config.id} has {groups[loss.role].count} {loss.role} nodes: index 0 to "
                    f"{groups[loss.role].count - 1}",
                )
            if config.clients > 1:
                yield (
                    here,
                    loss.model_dump(),
                    f"config {config.id} runs {config.clients} clients; a node loss is measured from "
                    "one client",
                )

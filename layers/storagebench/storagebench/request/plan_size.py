"""The size of a request's plan, bounded before anything expands it.

A request's steps are, for each config, each workload on each target it runs on, at each sweep
point, each repetition: ``50 workloads x a 32x32 sweep`` is 153,600 steps per config from a 16 KB
document, and planning, pricing and previewing them took about 4 s of CPU per config (issue 27:
a few small POSTs inside the API's throttle exhausted its Lambda). The count here is arithmetic on
the document (the product of the swept lists, no step built), so the bound is checked by the
request's own validation, before preview, Plan or the CLI do any of the work, and the refusal
names it with the count. ``MAX_PLANNED_STEPS`` keeps the slowest preview under 2 s on a busy 2-core
machine (``make bench-preview``), and far above any run that fits in a day: 5,000 steps of the
shortest standard workload (about 15 s each) are about 21 hours of one instance.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any, Protocol

from storagebench.request.repetitions import Repetitions, most_repetitions
from storagebench.workloads import get_profile, variant_count

MAX_PLANNED_STEPS = 5_000
"""Steps of a whole request (every config's, adaptive series counted at their ``max``)."""


class _Workload(Protocol):
    @property
    def id(self) -> str: ...
    @property
    def profile(self) -> str: ...
    @property
    def params(self) -> Mapping[str, Any]: ...
    @property
    def targets(self) -> Sequence[str] | None: ...


class _Config(Protocol):
    @property
    def id(self) -> str: ...
    @property
    def targets(self) -> Sequence[Any]: ...


class _Request(Protocol):
    """What the count reads of a request (``request.model`` imports this module)."""

    @property
    def configs(self) -> Sequence[_Config]: ...

    def resolved_workloads(self) -> Sequence[_Workload]: ...

    def repetitions_of(self, workload: Any) -> Repetitions: ...


def runs_on(workload: _Workload, target: Any) -> bool:
    """Whether a workload runs on a target: one it names, else any not left to setup hooks."""
    return (workload.targets is None or target.id in workload.targets) and getattr(target, "prepare", True)


def _steps_per_target(request: _Request, workload: _Workload) -> int:
    points = variant_count(get_profile(workload.profile), workload.params)
    return points * most_repetitions(request.repetitions_of(workload))


def _counts(request: _Request, resolved: Sequence[_Workload]) -> tuple[list[int], list[int]]:
    """Steps per target of each workload, and each config's steps."""
    per_target = [_steps_per_target(request, w) for w in resolved]
    per_config = [
        sum(n * sum(runs_on(w, t) for t in config.targets) for w, n in zip(resolved, per_target, strict=True))
        for config in request.configs
    ]
    return per_target, per_config


def planned_steps(request: _Request) -> list[int]:
    """Each config's step count, in request order, as ``planning.plan_steps`` would build them."""
    return _counts(request, request.resolved_workloads())[1]


def plan_size_problems(request: _Request) -> Iterator[tuple[tuple[str | int, ...], Any, str]]:
    """(location, value, message) when the whole plan is past ``MAX_PLANNED_STEPS``."""
    resolved = request.resolved_workloads()
    try:
        per_target, per_config = _counts(request, resolved)
    except KeyError:
        return  # an unknown profile, reported at workloads[].profile
    total = sum(per_config)
    if total <= MAX_PLANNED_STEPS:
        return
    most = max(range(len(per_config)), key=per_config.__getitem__)
    heaviest = max(range(len(per_target)), key=per_target.__getitem__)
    yield (
        ("workloads",),
        total,
        f"the request plans {total:,} steps ({len(per_config)} config(s), the most {per_config[most]:,} "
        f"in {request.configs[most].id}; {resolved[heaviest].id} alone is {per_target[heaviest]:,} per "
        f"target: sweep points x repetitions); at most {MAX_PLANNED_STEPS:,} are planned "
        "(MAX_PLANNED_STEPS): fewer sweep values, workloads, repetitions or configs, or several requests",
    )

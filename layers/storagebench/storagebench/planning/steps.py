"""Expand a request's workloads into the agent's steps for one config.

Order is deterministic: ``sequential`` runs every repetition of a workload before the next
(what practitioners do by hand); ``interleaved`` runs repetition 1 of everything, then 2, so a
slow drift (a gp2 bucket emptying, a noisy neighbour) spreads over all workloads instead of
biasing one.
"""

from __future__ import annotations

import hashlib
import re

from storagebench.agent.plan import Step
from storagebench.kinds import kind_of
from storagebench.request.model import (
    BenchmarkRequest,
    Config,
    ResolvedWorkload,
    Target,
    target_mode,
)
from storagebench.workloads import TargetContext, build_phases, get_profile, variants

_UNSAFE = re.compile(r"[^A-Za-z0-9._@=,+-]")
MAX_ID = 128  # the agent's id rule


def target_context(config: Config, target: Target) -> TargetContext:
    """What the planner knows of a target: mode, media and expected IOPS (for auto queue depth)."""
    return kind_of(target).context(target, config.instance_type, target_mode(target))


def step_id(workload_id: str, target_id: str, label: str, repetition: int) -> str:
    """``workload.target[.sweep point].rN``; a long one keeps its ending and gains a digest."""
    head = _UNSAFE.sub("_", ".".join([workload_id, target_id] + ([label] if label else [])))
    tail = f".r{repetition}"
    if len(head) + len(tail) > MAX_ID:
        digest = hashlib.sha256(head.encode()).hexdigest()[:10]
        head = f"{head[: MAX_ID - len(tail) - 11]}+{digest}"
    return head + tail


def _targets_for(config: Config, workload: ResolvedWorkload) -> list[Target]:
    """The targets a workload runs on: those it names, else all but the ones left to setup hooks."""
    return [
        t
        for t in config.targets
        if (workload.targets is None or t.id in workload.targets) and getattr(t, "prepare", True)
    ]


def plan_steps(request: BenchmarkRequest, config: Config) -> list[Step]:
    """Every step of one config, in run order."""
    units: list[tuple[int, int, Step]] = []  # (repetition, position, step) to order either way
    position = 0
    for workload in request.resolved_workloads():
        profile = get_profile(workload.profile)
        repetitions = request.repetitions_of(workload)
        for target in _targets_for(config, workload):
            assert target.id is not None
            ctx = target_context(config, target)
            for variant in variants(profile, workload.params, workload.scale, ctx):
                phases = build_phases(profile, variant, ctx)
                for repetition in range(1, repetitions + 1):
                    step: Step = {
                        "id": step_id(workload.id, target.id, variant.label(), repetition),
                        "workload": workload.id,
                        "profile": profile.name,
                        "variant": dict(variant.sweep),
                        "repetition": repetition,
                        "target": target.id,
                        "phases": phases,
                        "cleanup": True,
                        "intent": profile.intent,
                    }
                    units.append((repetition, position, step))
                    position += 1
    if request.order == "interleaved":
        units.sort(key=lambda unit: (unit[0], unit[1]))
    return [step for _, _, step in units]

"""Expand a request's workloads into the agent's steps for one config.

Order is deterministic: ``sequential`` runs every repetition of a workload before the next
(what practitioners do by hand); ``interleaved`` runs repetition 1 of everything, then 2, so a
slow drift (a gp2 bucket emptying, a noisy neighbour) spreads over all workloads instead of
biasing one.

Adaptive repetitions (``{min, max, ci_pct}``) plan ``max`` steps per series, each carrying the
series' policy (``protocol.plan.Adaptive``): the series id (the step id without its repetition),
the metric the report heads the workload with (``costs.measures.INTENT_METRICS``, the first one
the phase's engine measures) and the phase judged (the step's last: the measured one after any
preparation). The agent stops a series when its metric is precise enough (``agent.adaptive``);
in either order, its remaining steps are then not run. A workload's ``steady_state`` becomes fio's
``ss``/``ss_dur``/``ss_ramp`` global options of each of its fio phases.
"""

from __future__ import annotations

import hashlib
import re

from storagebench.costs.measures import INTENT_METRICS, RATE_FIRST
from storagebench.kinds import kind_of
from storagebench.protocol.plan import Adaptive, FioSpec, Phase, Step
from storagebench.protocol.plan import NodeLoss as AgentNodeLoss
from storagebench.request.model import (
    BenchmarkRequest,
    Config,
    ResolvedWorkload,
    Target,
    target_mode,
)
from storagebench.request.node_loss import NodeLossSpec
from storagebench.request.plan_size import runs_on
from storagebench.request.repetitions import AdaptiveRepetitions, SteadyState, most_repetitions
from storagebench.workloads import TargetContext, build_phases, get_profile, variants
from storagebench.workloads.fio_options import fio_seconds, job_file_times

_UNSAFE = re.compile(r"[^A-Za-z0-9._@=,+-]")
MAX_ID = 128  # the agent's id rule
_LONGEST_TAIL = len(".r100")  # repetitions are at most 100: a series id leaves room for any step's


def target_context(config: Config, target: Target) -> TargetContext:
    """What the planner knows of a target: mode, media and expected IOPS (for auto queue depth)."""
    return kind_of(target).context(target, config.instance_type, target_mode(target))


def _fitted(head: str, tail: str) -> str:
    """``head + tail`` within the agent's id length: a long head keeps its start and gains a digest."""
    if len(head) + len(tail) > MAX_ID:
        digest = hashlib.sha256(head.encode()).hexdigest()[:10]
        head = f"{head[: MAX_ID - len(tail) - 11]}+{digest}"
    return head + tail


def _head(workload_id: str, target_id: str, label: str) -> str:
    return _UNSAFE.sub("_", ".".join([workload_id, target_id] + ([label] if label else [])))


def step_id(workload_id: str, target_id: str, label: str, repetition: int) -> str:
    """``workload.target[.sweep point].rN``; a long one keeps its beginning and gains a digest."""
    return _fitted(_head(workload_id, target_id, label), f".r{repetition}")


def series_id(workload_id: str, target_id: str, label: str) -> str:
    """The repetitions of one workload, target and sweep point: ``workload.target[.sweep point]``."""
    return _fitted(_head(workload_id, target_id, label), "")[: MAX_ID - _LONGEST_TAIL]


def _targets_for(config: Config, workload: ResolvedWorkload) -> list[Target]:
    return [t for t in config.targets if runs_on(workload, t)]


def _measures(phase: Phase) -> tuple[str, ...]:
    """The metrics the agent can read from a phase of this engine (``agent.adaptive.phase_metric``)."""
    if phase["engine"] == "fio":
        return ("iops",) if "search" in phase else ("iops", "bw_mibps", "lat_p95_us", "real_s")
    if phase["engine"] == "dd":
        return ("bw_mibps", "real_s")
    accounted = "bytes" in phase.get("command", {}).get("accounting", {})
    return ("bw_mibps", "real_s") if accounted else ("real_s",)


def judged_metric(intent: str, phase: Phase) -> str:
    """The workload's headline metric (the report's, by intent) that this phase measures."""
    measured = _measures(phase)
    return next(m for m in (*INTENT_METRICS.get(intent, RATE_FIRST), *measured) if m in measured)


def adaptive_policy(policy: AdaptiveRepetitions, series: str, intent: str, phases: list[Phase]) -> Adaptive:
    judged = phases[-1]
    return {
        "series": series,
        "min": policy.min,
        "max": policy.max,
        "ci_pct": policy.ci_pct,
        "metric": judged_metric(intent, judged),
        "phase": judged["name"],
    }


def with_steady_state(phases: list[Phase], steady_state: SteadyState | None) -> list[Phase]:
    """fio phases with fio's steady-state options in their [global] section; other phases as they are."""
    if steady_state is None:
        return phases
    options = steady_state.fio_options()
    changed: list[Phase] = []
    for phase in phases:
        if phase["engine"] == "fio" and "search" not in phase:
            fio = phase["fio"]
            steady: FioSpec = {**fio, "global_options": {**fio.get("global_options", {}), **options}}
            changed.append({**phase, "fio": steady})
        else:
            changed.append(phase)
    return changed


def ramp_s(phase: Phase) -> float:
    """The longest ``ramp_time`` of a fio phase (its options or its job file): fio's logs, on which
    a node loss's ``at_s`` counts, start after it."""
    spec = phase.get("fio", {})
    values = [spec.get("global_options", {}).get("ramp_time")]
    values += [job["options"].get("ramp_time") for job in spec.get("jobs", [])]
    seconds = [fio_seconds(v) for v in values if v is not None]
    seconds += job_file_times(str(spec.get("job_file") or ""), "ramp_time")
    return max(seconds, default=0.0)


def with_node_loss(phases: list[Phase], loss: NodeLossSpec | None) -> list[Phase]:
    """The workload's last fio phase (its measured run) told which node goes and when
    (``agent.node_loss`` measures around it); the phases as they are without a loss."""
    if loss is None:
        return phases
    measured = [i for i, p in enumerate(phases) if p["engine"] == "fio" and "search" not in p]
    if not measured:
        raise ValueError("a node loss needs a fio phase; request validation refuses it elsewhere")
    changed = list(phases)
    node: AgentNodeLoss = {
        "role": loss.role,
        "index": loss.index,
        "at_s": loss.after_s,
        "ramp_s": ramp_s(phases[measured[-1]]),
    }
    changed[measured[-1]] = {**phases[measured[-1]], "node_loss": node}
    return changed


def plan_steps(request: BenchmarkRequest, config: Config) -> list[Step]:
    """Every step of one config, in run order (adaptive series: up to their ``max``)."""
    units: list[tuple[int, int, Step]] = []  # (repetition, position, step) to order either way
    position = 0
    for workload in request.resolved_workloads():
        profile = get_profile(workload.profile)
        repetitions = request.repetitions_of(workload)
        for target in _targets_for(config, workload):
            assert target.id is not None
            ctx = target_context(config, target)
            for variant in variants(profile, workload.params, workload.scale, ctx):
                phases = with_steady_state(build_phases(profile, variant, ctx), workload.steady_state)
                phases = with_node_loss(phases, workload.node_loss)
                policy = (
                    adaptive_policy(
                        repetitions,
                        series_id(workload.id, target.id, variant.label()),
                        profile.intent,
                        phases,
                    )
                    if isinstance(repetitions, AdaptiveRepetitions)
                    else None
                )
                for repetition in range(1, most_repetitions(repetitions) + 1):
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
                    if policy is not None:
                        step["adaptive"] = policy
                    units.append((repetition, position, step))
                    position += 1
    if request.order == "interleaved":
        units.sort(key=lambda unit: (unit[0], unit[1]))
    return [step for _, _, step in units]

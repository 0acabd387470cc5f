"""Assemble the agent plan of one config from the request and bound targets.

Targets are bound by the fleet that runs the config: on AWS to the volume ids and file-system
DNS names it created, locally to emulated volumes and directories (``planning.local``). The
rest of the plan (steps, pre-warm, hooks) is the same on both.
"""

from __future__ import annotations

from storagebench.agent.plan import PLAN_VERSION, Plan, TargetSpec, check_plan
from storagebench.kinds import kind_of
from storagebench.planning.steps import plan_steps
from storagebench.request.model import BenchmarkRequest


def build_plan(request: BenchmarkRequest, config_id: str, run_id: str, targets: list[TargetSpec]) -> Plan:
    config = request.config(config_id)
    bound = {t["id"] for t in targets}
    missing = [t.id for t in config.targets if t.id not in bound]
    if missing:
        raise ValueError(
            f"config {config_id}: targets {', '.join(map(str, missing))} are not bound to a device"
        )
    prewarm_targets = [t.id for t in config.targets if kind_of(t).prewarmed and t.id is not None]
    plan: Plan = {
        "plan_version": PLAN_VERSION,
        "run_id": run_id,
        "config_id": config_id,
        "targets": targets,
        "prewarm": {
            "method": request.prewarm.method if prewarm_targets else "none",
            "targets": prewarm_targets,
            **({"block_size": request.prewarm.block_size} if request.prewarm.block_size else {}),
            "iodepth": request.prewarm.iodepth,
        },
        "steps": plan_steps(request, config),
        "setup": config.setup,
        "teardown": config.teardown,
        "fail_fast": request.fail_fast,
    }
    return check_plan(plan)

"""Assemble the agent plan of one config from the request and bound targets.

Targets are bound by the fleet that runs the config: on AWS to the volume ids and file-system
DNS names it created, locally to emulated volumes and directories (``planning.local``). The
rest of the plan (steps, pre-warm, hooks) is the same on both.
"""

from __future__ import annotations

from storagebench.planning.initialisation import prewarm_reads, sample_bytes
from storagebench.planning.steps import plan_steps
from storagebench.protocol.plan import PLAN_VERSION, Plan, Prewarm, TargetSpec, check_plan
from storagebench.request.model import BenchmarkRequest


def build_plan(request: BenchmarkRequest, config_id: str, run_id: str, targets: list[TargetSpec]) -> Plan:
    config = request.config(config_id)
    bound = {t["id"] for t in targets}
    missing = [t.id for t in config.targets if t.id not in bound]
    if missing:
        raise ValueError(
            f"config {config_id}: targets {', '.join(map(str, missing))} are not bound to a device"
        )
    reads = prewarm_reads(request.prewarm, config)
    sampled = [target_id for target_id, read in reads.items() if read == "sampled"]
    prewarm: Prewarm = {
        "method": request.prewarm.method if reads else "none",
        "targets": list(reads),
        **({"block_size": request.prewarm.block_size} if request.prewarm.block_size else {}),
        "iodepth": request.prewarm.iodepth,
    }
    if sampled:
        prewarm["sampled"] = sampled
        prewarm["sample_bytes"] = sample_bytes(request.prewarm)
        prewarm["sample_extents"] = request.prewarm.sample_extents
    plan: Plan = {
        "plan_version": PLAN_VERSION,
        "run_id": run_id,
        "config_id": config_id,
        "targets": targets,
        "prewarm": prewarm,
        "steps": plan_steps(request, config),
        "setup": config.setup,
        "teardown": config.teardown,
        "fail_fast": request.fail_fast,
    }
    return check_plan(plan)

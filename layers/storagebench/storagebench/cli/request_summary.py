"""What a valid request will do: configs, expanded workloads, steps, envelopes, warnings."""

from __future__ import annotations

from typing import Any

from storagebench.kinds import kind_of
from storagebench.kinds.reach import network_checks, target_ceiling
from storagebench.planning.steps import plan_steps
from storagebench.request.matrix import summarize_matrices
from storagebench.request.model import BenchmarkRequest, Config, Target


def _envelope_text(config: Config, target: Target) -> str | None:
    """The kind's own envelope where it says more (EFS: declared vs metered size), then the ceiling
    a saturating workload meets (over the network: the clients' network beside the storage)."""
    ceiling = target_ceiling(config, target)
    text = ceiling.describe() if ceiling is not None else None
    own = kind_of(target).envelope_text(target, config.instance_type)
    if own is None or (text is not None and own in text):
        return text
    return own if text is None else f"{own}; {text}"


def summarize_request(request: BenchmarkRequest) -> dict[str, Any]:
    warnings: list[str] = []
    configs = []
    for config in request.configs:
        targets = []
        for target in config.targets:
            entry: dict[str, Any] = {"id": target.id, "kind": target.kind}
            envelope = _envelope_text(config, target)
            if envelope is not None:
                entry["envelope"] = envelope
            targets.append(entry)
        warnings += [check.warning for check in network_checks(config) if check.warning]
        steps = plan_steps(request, config)
        configs.append(
            {
                "id": config.id,
                "instance_type": config.instance_type,
                "machines": config.machines,
                "targets": targets,
                "steps": len(steps),
            }
        )
    return {
        "name": request.name,
        "baseline": request.baseline_id,
        "configs": configs,
        "workloads": [w.model_dump() for w in request.resolved_workloads()],
        "matrices": [m.model_dump(mode="json") for m in summarize_matrices(request)],
        "warnings": warnings,
    }

"""What the demo's emulated volumes delivered, judged against their limits (``bench/demo.py --runs``).

Each figure is read from the repetition's own ``fio.json`` (the sum over its jobs), the limit from
the plan the agent ran (``emulate[].limits``): a throughput workload against ``iops``, a sequential
one against ``mibps``, a bursting volume's against its burst limits. A row meets its goals when
the mean of the repetitions is within ``MEAN_TOLERANCE`` of the limit and the repetitions within
``SPREAD_TOLERANCE`` of one another.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

# workload -> (the limit it is bound by, what fio reports for it)
BOUND_BY = {"std-randread-4k": "iops", "std-seqread-1m": "mibps"}
MEAN_TOLERANCE = 0.03
SPREAD_TOLERANCE = 0.05


class DemoArtifactsError(ValueError):
    """A run's artifacts lack what the judgement needs (named in the message)."""


def agent_dir(config_dir: Path) -> Path:
    """The agent directory of the config's newest instance (a relaunch writes under its own)."""
    plans = sorted(config_dir.glob("instances/*/agent/plan.json"), key=lambda p: p.stat().st_mtime)
    if not plans:
        raise DemoArtifactsError(f"{config_dir}: no instances/*/agent/plan.json")
    return plans[-1].parent


def _limits(agent: Path) -> tuple[str, dict[str, float]]:
    plan = json.loads((agent / "plan.json").read_text())
    for target in plan.get("targets", []):
        for emulated in target.get("emulate") or []:
            limits = emulated["limits"]
            # A bursting volume (gp2) runs these workloads on its burst (its credits last them).
            return str(target["id"]), {
                k: float(limits.get(f"burst_{k}", limits[k])) for k in ("iops", "mibps") if k in limits
            }
    raise DemoArtifactsError(f"{agent / 'plan.json'}: no emulated target with limits")


def _value(fio_json: Path, bound: str) -> float:
    jobs = json.loads(fio_json.read_text())["jobs"]
    if bound == "iops":
        return float(sum(job["read"]["iops"] for job in jobs))
    return float(sum(job["read"]["bw_bytes"] for job in jobs)) / (1 << 20)


def repetitions(agent: Path, target: str, workload: str, bound: str) -> list[float]:
    """The workload's figure in each repetition, in repetition order."""
    runs = sorted(
        agent.glob(f"steps/{workload}.{target}.r*/run/fio.json"),
        key=lambda p: int(p.parent.parent.name.rsplit(".r", 1)[1]),
    )
    return [_value(path, bound) for path in runs]


def judge_run(run_dir: Path) -> list[dict[str, Any]]:
    """One row per config and bound workload: repetitions, mean, its ratio to the limit, spread."""
    rows = []
    for config_dir in sorted(p for p in run_dir.iterdir() if p.is_dir()):
        found = agent_dir(config_dir)
        target, limits = _limits(found)
        for workload, bound in BOUND_BY.items():
            values = repetitions(found, target, workload, bound)
            if not values:
                raise DemoArtifactsError(f"{found}: no repetition of {workload} on {target}")
            mean = sum(values) / len(values)
            ratio = mean / limits[bound]
            spread = max(values) / min(values) - 1 if min(values) > 0 else float("inf")
            rows.append(
                {
                    "config": config_dir.name,
                    "workload": workload,
                    "bound": bound,
                    "limit": limits[bound],
                    "repetitions": [round(v, 1) for v in values],
                    "mean": round(mean, 1),
                    "mean_to_limit": round(ratio, 4),
                    "spread": round(spread, 4),
                    "mean_within_3pct": abs(ratio - 1) <= MEAN_TOLERANCE,
                    "repetitions_within_5pct": spread <= SPREAD_TOLERANCE,
                }
            )
    return rows


def recommended(answer: dict[str, Any]) -> str | None:
    """The config ``recommend --json`` named, None when it named none."""
    chosen = answer.get("recommended")
    if chosen is None:
        return None
    return str(chosen["config_id"]) if isinstance(chosen, dict) else str(chosen)

"""How long does the dry run of the worst request the API accepts take?

The API previews every request before it starts one (``POST /runs``, with or without
``dry_run``), inside a Lambda with 29 s to answer. A request's plan is bounded by
``MAX_PLANNED_STEPS`` (``request.plan_size``) and its body by the API's 256 KiB, so the worst
documents are those at the bound in each shape that moves the work: one config with many sweep
points, hundreds of configs with a few steps each, configs with eight volumes. Each is timed as
the API does the work: JSON parse, request validation, ``preview_request`` (plan, durations,
prices, guardrails) and the response's JSON, over ``--rounds`` rounds (wall and CPU, best and
median), with the peak memory of one more round and the body's size. The document of issue 27
(50 workloads x a 32x32 sweep, about 20 s of preview before the bound) is timed to its refusal.

Goal: every accepted document's median wall time under 2 s on this machine (a 512 MB Lambda has
about a third of a core: docs/cli.md, A config matrix, says what that means there).
``make bench-preview`` writes bench-results/preview.json.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import Any

from storagebench.api.routes import MAX_BODY_BYTES
from storagebench.core.guardrails import Guardrails
from storagebench.planning.preview import preview_request
from storagebench.request.errors import RequestError
from storagebench.request.parse import parse_request
from storagebench.request.plan_size import MAX_PLANNED_STEPS, planned_steps

ROOT = Path(__file__).resolve().parent.parent
GOAL_S = 2.0
# A stack that lets the largest requests through its guardrails, so the whole preview runs.
WIDE_OPEN = Guardrails(
    max_configs_per_run=500, max_run_hours=168, max_run_cost_usd=1_000_000, unprovisionable_kinds={}
)


def _volume(n: int) -> dict[str, Any]:
    return {"kind": "ebs", "id": f"v{n}", "type": "gp3", "size_gib": 100 + n}


def _config(n: int, volumes: int = 1) -> dict[str, Any]:
    return {"id": f"c{n}", "instance_type": "c5.4xlarge", "targets": [_volume(v) for v in range(volumes)]}


def _sweeps(count: int, points: int) -> list[dict[str, Any]]:
    return [
        {"id": f"w{n}", "profile": "sweep-qd-randread-4k", "params": {"iodepth": list(range(1, points + 1))}}
        for n in range(count)
    ]


def _request(
    configs: list[dict[str, Any]], workloads: list[dict[str, Any]], repetitions: int
) -> dict[str, Any]:
    return {
        "name": "bench-preview",
        "region": "us-east-1",
        "configs": configs,
        "workloads": workloads,
        "repetitions": repetitions,
        "timing": {"max_run_hours": 168},
    }


def documents() -> dict[str, dict[str, Any]]:
    """The worst accepted shapes, each at MAX_PLANNED_STEPS (or just under), and issue 27's."""
    std = [{"id": f"s{n}", "profile": p} for n, p in enumerate(["std-randread-4k", "std-seqread-1m"])]
    return {
        "1 config x 50 sweeps of 32 points x 3 reps": _request([_config(0)], _sweeps(50, 32), 3),
        "500 configs x 10-point sweep x 1 rep": _request([_config(n) for n in range(500)], _sweeps(1, 10), 1),
        "500 configs x 2 workloads x 5 reps": _request([_config(n) for n in range(500)], std, 5),
        "100 configs x 8 volumes x 2 workloads x 3 reps": _request(
            [_config(n, volumes=8) for n in range(100)], std, 3
        ),
        "250 configs x gp3+efs+fsx_lustre x 2 workloads x 3 reps": _request(
            [
                {
                    **_config(n),
                    "targets": [
                        _volume(0),
                        {"kind": "efs", "id": "efs", "storage_gib_hint": 100},
                        {"kind": "fsx_lustre", "id": "fsx", "storage_capacity_gib": 1200},
                    ],
                }
                for n in range(250)
            ],
            std,
            3,
        ),
        "issue 27: 50 workloads x 32x32 sweep x 3 reps (refused)": _request(
            [_config(0)],
            [
                {
                    "id": f"w{n}",
                    "profile": "sweep-qd-randread-4k",
                    "params": {"iodepth": list(range(1, 33)), "numjobs": list(range(1, 33))},
                }
                for n in range(50)
            ],
            3,
        ),
    }


def _api_work(body: bytes) -> dict[str, Any]:
    """What the API does with a body before it starts a run: parse, validate, preview, answer."""
    request = parse_request(json.loads(body))
    preview = preview_request(request, WIDE_OPEN)
    answer = preview.model_dump_json()
    return {
        "steps": sum(planned_steps(request)),
        "previewed_steps": sum(len(c.steps) for c in preview.configs),
        "allowed": preview.allowed,
        "problems": [p.message for p in preview.problems],
        "answer_bytes": len(answer),
    }


def _refusal(body: bytes) -> dict[str, Any]:
    try:
        parse_request(json.loads(body))
    except RequestError as refused:
        (problem,) = [e for e in refused.errors if e.path == "workloads"]
        return {"refused": True, "field": problem.path, "value": problem.value, "message": problem.message}
    return {"refused": False}


def _timed(call: Callable[[], dict[str, Any]], rounds: int) -> dict[str, Any]:
    walls, cpus, result = [], [], {}
    for _ in range(rounds):
        wall, cpu = time.perf_counter(), time.process_time()
        result = call()
        walls.append(time.perf_counter() - wall)
        cpus.append(time.process_time() - cpu)
    tracemalloc.start()
    call()
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return {
        **result,
        "wall_best_s": round(min(walls), 4),
        "wall_median_s": round(statistics.median(walls), 4),
        "cpu_median_s": round(statistics.median(cpus), 4),
        "peak_mib": round(peak / 2**20, 1),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "bench-results" / "preview.json")
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    rows: dict[str, Any] = {}
    for name, document in documents().items():
        body = json.dumps(document).encode()
        assert len(body) <= MAX_BODY_BYTES, f"{name}: {len(body):,} bytes, over the API's limit"
        work = _refusal if "refused" in name else _api_work
        rows[name] = {"body_bytes": len(body), **_timed(lambda body=body, work=work: work(body), args.rounds)}
        print(f"{name}: {rows[name]['wall_median_s']} s median, {rows[name]['peak_mib']} MiB", flush=True)
    accepted = {k: v for k, v in rows.items() if "refused" not in k}
    worst = max(accepted, key=lambda k: accepted[k]["wall_median_s"])
    result = {
        "what": "parse + validate + preview + answer of the worst documents the API accepts (and issue 27's)",
        "machine": {"python": platform.python_version(), "cpus": os.cpu_count()},
        "max_planned_steps": MAX_PLANNED_STEPS,
        "max_body_bytes": MAX_BODY_BYTES,
        "rounds": args.rounds,
        "documents": rows,
        "worst_accepted": {"document": worst, "wall_median_s": accepted[worst]["wall_median_s"]},
        "goals": {"accepted_wall_median_under_s": GOAL_S},
        "met": accepted[worst]["wall_median_s"] < GOAL_S
        and all(v.get("refused") for k, v in rows.items() if "refused" in k),
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result["worst_accepted"]), "met" if result["met"] else "NOT MET")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

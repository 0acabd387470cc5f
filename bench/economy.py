"""What storagebench itself costs and how long it takes: on-demand vs Spot, fixed vs adaptive
repetitions, and the state transitions each config costs on the inline and the distributed Map.

For the nightly suite (``events/nightly.json``, the stack's default schedule) and the report-card
study (``events/report-card.json``), the dry run's own estimate (``planning.preview``: the same
code the API's dry run and the guardrails use) is taken four ways: as written (on-demand, fixed
repetitions); with ``purchase: spot`` (the bundled Spot price snapshot, its date and source
quoted); with today's pre-warm of every volume end to end (``prewarm.volumes: all``, what every
run did before pre-warm followed what each volume needs); and with adaptive repetitions
(``{min: 2, max: 10, ci_pct: 2}``), whose expected cost lies between the estimate at ``min`` and
at ``max`` where the repetitions the recorded noise needs put it.

Recorded noise: the coefficients of variation across repetitions of every stored local-demo run
(``storagebench results --run ... --format jsonl``, the headline metric of each measurement:
IOPS, or MiB/s for sequential workloads), plus, when ``bench-results/fidelity.json`` exists, the
spread of the fidelity bench's measured/limit ratios. On that noise, a seeded simulation
(``analysis.adaptive_economy``) gives the repetitions an adaptive series spends and the precision
it reaches, beside the precision of a fixed count of 3.

Transitions: ``tests/integration/workflow/test_many_configs.py`` runs 40 configs (inline Map) and
60 (distributed Map) on moto's interpreter and counts each config's transitions from the
executions' histories (children included); this bench runs it (root, several minutes) unless
``--no-workflow`` and quotes what it wrote.

``make bench-economy`` runs ``.venv/bin/python bench/economy.py --out bench-results/economy.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from collections import defaultdict
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from storagebench.analysis.adaptive_economy import expected_repetitions, fixed_half_width
from storagebench.core.guardrails import Guardrails
from storagebench.costs.spot_estimate import request_estimates
from storagebench.planning.preview import RunPreview, preview_request
from storagebench.prices.spot_snapshot import load_spot_snapshot
from storagebench.request import parse_request
from storagebench.request.repetitions import AdaptiveRepetitions

ROOT = Path(__file__).resolve().parent.parent
SUITES = {"nightly": ROOT / "events/nightly.json", "report-card": ROOT / "events/report-card.json"}
POLICY = AdaptiveRepetitions(min=2, max=10, ci_pct=2.0)
FIXED = 3
# Emulated volumes are steadier than EBS: the same comparison on noise levels seen on real volumes.
REFERENCE_CVS_PCT = (0.5, 1.0, 2.0, 5.0)
TRIALS = 4000
# Guardrails wide enough that a dry run is never refused: this bench estimates, it launches nothing.
LIMITS = Guardrails(
    max_configs_per_run=500, max_concurrency=40, max_run_cost_usd=1_000_000, max_run_hours=168
)


def _preview(document: dict[str, Any]) -> RunPreview:
    return preview_request(parse_request(document), LIMITS)


def _figures(preview: RunPreview) -> dict[str, Any]:
    estimate = preview.estimate
    return {
        "wall_hours": round(estimate.wall_hours, 3),
        "usd": round(estimate.total_usd, 4),
        "min_wall_hours": round(estimate.min_wall_hours, 3),
        "min_usd": round(estimate.min_total_usd, 4),
        "complete": estimate.complete,
        "prices": f"{estimate.price_source} {estimate.price_date or ''}".strip(),
    }


def _between(low: float, high: float, share: float) -> float:
    return low + (high - low) * share


def suite_economy(name: str, path: Path, adaptive_repetitions: float) -> dict[str, Any]:
    """The suite's dry-run estimates: as written, on Spot, with full pre-warm, and adaptive."""
    document = json.loads(path.read_text())
    document.pop("scheduled", None)
    written = _preview(document)
    spot_document = {**document, "purchase": "spot"}
    spot = _preview(spot_document)
    full_prewarm = _preview({**document, "prewarm": {**document.get("prewarm", {}), "volumes": "all"}})
    # Repetitions spent between min and max: the workloads' share of the estimate grows linearly
    # with them, so the expected cost lies that far between the estimate at min and at max.
    share = (adaptive_repetitions - POLICY.min) / (POLICY.max - POLICY.min)
    adaptive: dict[str, Any] = {"policy": POLICY.model_dump(), "expected_repetitions": adaptive_repetitions}
    for market, base in (("on_demand", document), ("spot", spot_document)):
        estimate = _preview({**base, "repetitions": POLICY.model_dump()}).estimate
        adaptive[market] = {
            "wall_hours": round(_between(estimate.min_wall_hours, estimate.wall_hours, share), 3),
            "usd": round(_between(estimate.min_total_usd, estimate.total_usd, share), 4),
            "range_wall_hours": [round(estimate.min_wall_hours, 3), round(estimate.wall_hours, 3)],
            "range_usd": [round(estimate.min_total_usd, 4), round(estimate.total_usd, 4)],
        }
    request = parse_request(spot_document)
    instances = request_estimates(request, "on-demand", request.region)
    return {
        "file": str(path.relative_to(ROOT)),
        "configs": len(written.configs),
        "repetitions_as_written": document.get("repetitions", 3),
        "on_demand": _figures(written),
        "spot": _figures(spot),
        "spot_saving_pct": round(100 * (1 - spot.estimate.total_usd / written.estimate.total_usd), 1)
        if written.estimate.total_usd
        else None,
        "spot_instances": {
            config_id: {"spot_usd_per_hour": e.spot_usd, "note": e.note} for config_id, e in instances.items()
        },
        "before_prewarm_by_need": _figures(full_prewarm),
        "adaptive": adaptive,
    }


def _storagebench(*args: str) -> str:
    done = subprocess.run(
        [str(ROOT / ".venv/bin/storagebench"), *args], capture_output=True, text=True, check=False, cwd=ROOT
    )
    if done.returncode != 0:
        raise RuntimeError(f"storagebench {' '.join(args)}: {done.stderr.strip()[-400:]}")
    return done.stdout


def demo_noise(suite: str, runs: int) -> tuple[list[dict[str, Any]], list[str]]:
    """CV across repetitions of each measurement of the latest stored runs of ``suite``."""
    listing = json.loads(_storagebench("results", "--suite", suite, "--format", "json"))
    rows = listing if isinstance(listing, list) else listing.get("runs", [])
    run_ids = [str(r["run_id"]) for r in rows if r.get("status") == "SUCCEEDED"][:runs]
    found: list[dict[str, Any]] = []
    for run_id in run_ids:
        values: dict[tuple[str, ...], list[float]] = defaultdict(list)
        for line in _storagebench("results", "--run", run_id, "--format", "jsonl").splitlines():
            row = json.loads(line)
            if row.get("engine") != "fio" or row.get("direction") not in ("read", "write"):
                continue
            sequential = "seq" in str(row.get("profile", ""))
            metric = "bw_mibps" if sequential else "iops"
            value = row.get(metric)
            if isinstance(value, int | float) and value > 0:
                variant = row.get("variant") or ""
                key = (run_id, row["config_id"], row["workload"], variant, row["direction"], metric)
                values[key].append(float(value))
        for key, series in values.items():
            if len(series) >= 2:
                found.append(
                    {
                        "run_id": key[0],
                        "config": key[1],
                        "workload": key[2] + (f"[{key[3]}]" if key[3] else ""),
                        "direction": key[4],
                        "metric": key[5],
                        "n": len(series),
                        "cv_pct": round(100 * statistics.stdev(series) / statistics.fmean(series), 3),
                    }
                )
    return found, run_ids


def fidelity_spread() -> float | None:
    """The spread (CV, %) of the fidelity bench's measured/limit ratios, when it has been run."""
    path = ROOT / "bench-results/fidelity.json"
    if not path.exists():
        return None
    ratios: list[float] = []

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            ratio = node.get("ratio")
            if isinstance(ratio, int | float) and ratio > 0:
                ratios.append(float(ratio))
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(json.loads(path.read_text()))
    return round(100 * statistics.stdev(ratios) / statistics.fmean(ratios), 3) if len(ratios) >= 2 else None


def repetitions_economy(cvs_pct: list[float]) -> dict[str, Any]:
    """Adaptive vs fixed on each recorded noise level, and over all of them."""
    per_cv = []
    for cv in sorted({round(c, 2) for c in cvs_pct}):
        adaptive = expected_repetitions(cv / 100, POLICY, trials=TRIALS)
        per_cv.append(
            {
                "cv_pct": cv,
                "adaptive_mean_repetitions": round(adaptive.mean_repetitions, 2),
                "adaptive_stopped_on_precision": round(adaptive.precision_reached, 3),
                "adaptive_half_width_pct": round(adaptive.mean_half_width_pct, 3),
                f"fixed_{FIXED}_half_width_pct": round(fixed_half_width(cv / 100, FIXED, trials=TRIALS), 3),
            }
        )
    weights = [next(p for p in per_cv if p["cv_pct"] == round(c, 2)) for c in cvs_pct]
    fixed_key = f"fixed_{FIXED}_half_width_pct"

    def within(key: str) -> float:
        return round(sum(w[key] < POLICY.ci_pct for w in weights) / len(weights), 2)

    def mean(key: str, digits: int) -> float:
        return round(statistics.fmean(float(w[key]) for w in weights), digits)

    overall = {
        "series": len(cvs_pct),
        "fixed": {
            "repetitions": FIXED,
            "mean_half_width_pct": mean(fixed_key, 3),
            "share_within_ci_pct": within(fixed_key),
        },
        "adaptive": {
            "mean_repetitions": mean("adaptive_mean_repetitions", 2),
            "mean_half_width_pct": mean("adaptive_half_width_pct", 3),
            "stopped_on_precision": mean("adaptive_stopped_on_precision", 3),
        },
    }
    return {"policy": POLICY.model_dump(), "trials_per_cv": TRIALS, "per_cv": per_cv, "overall": overall}


def reference_noise() -> list[dict[str, Any]]:
    """Adaptive vs fixed at round noise levels (what a user's own volumes may show)."""
    return repetitions_economy(list(REFERENCE_CVS_PCT))["per_cv"]


def transitions(run_workflow: bool) -> dict[str, Any]:
    out = ROOT / "bench-results/many-configs.json"
    if run_workflow:
        out.unlink(missing_ok=True)
        started = time.monotonic()
        done = subprocess.run(
            [
                str(ROOT / ".venv/bin/pytest"),
                "tests/integration/workflow/test_many_configs.py",
                "-q",
                "-p",
                "no:cacheprovider",
            ],
            cwd=ROOT,
            env={
                **os.environ,
                "STORAGEBENCH_MANY_CONFIGS_OUT": str(out),
                "PYTHONPATH": "layers/storagebench:local",
            },
            capture_output=True,
            text=True,
            check=False,
        )
        if done.returncode != 0:
            raise RuntimeError(f"test_many_configs failed:\n{done.stdout[-3000:]}")
        print(f"many-configs runs: {time.monotonic() - started:.0f} s", file=sys.stderr)
    if not out.exists():
        return {"note": f"not measured: run without --no-workflow (as root) to write {out.relative_to(ROOT)}"}
    return {"source": "tests/integration/workflow/test_many_configs.py", **json.loads(out.read_text())}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=ROOT / "bench-results/economy.json")
    parser.add_argument("--demo-suite", default="local-demo", help="the stored suite whose noise is used")
    parser.add_argument("--demo-runs", type=int, default=5, help="latest runs of it to read")
    parser.add_argument("--no-workflow", action="store_true", help="skip the 40/60-config runs")
    args = parser.parse_args()

    noise, run_ids = demo_noise(args.demo_suite, args.demo_runs)
    cvs = [n["cv_pct"] for n in noise]
    spread = fidelity_spread()
    if spread is not None:
        cvs.append(spread)
    if not cvs:
        raise SystemExit(f"no stored run of {args.demo_suite} with 2+ repetitions: run `make demo` first")
    repetitions = repetitions_economy(cvs)
    adaptive_reps = repetitions["overall"]["adaptive"]["mean_repetitions"]
    snapshot = load_spot_snapshot()
    report = {
        "generated_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "machine": {"python": platform.python_version(), "cpus": os.cpu_count()},
        "spot_prices": {"as_of": snapshot.as_of, "source": snapshot.source},
        "suites": {name: suite_economy(name, path, adaptive_reps) for name, path in SUITES.items()},
        "noise": {
            "demo_runs": run_ids,
            "measurements": len(noise),
            "cv_pct": {
                "median": round(statistics.median(c["cv_pct"] for c in noise), 3) if noise else None,
                "max": max((c["cv_pct"] for c in noise), default=None),
            },
            "fidelity_ratio_spread_cv_pct": spread,
            "series": noise,
        },
        "repetitions": repetitions,
        "repetitions_at_reference_noise": reference_noise(),
        "transitions": transitions(not args.no_workflow),
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2) + "\n")
    summary = {
        name: {k: suite[k] for k in ("on_demand", "spot", "spot_saving_pct", "before_prewarm_by_need")}
        | {"adaptive": {k: suite["adaptive"][k] for k in ("expected_repetitions", "on_demand", "spot")}}
        for name, suite in report["suites"].items()
    }
    print(
        json.dumps(
            {
                "suites": summary,
                "repetitions": repetitions["overall"],
                "reference_noise": report["repetitions_at_reference_noise"],
                "transitions": report["transitions"],
            },
            indent=2,
        )
    )


if __name__ == "__main__":
    main()

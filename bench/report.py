"""How fast is a large run's report built and rendered, and how big is it?

Builds the report of a synthetic 20-config x 10-workload run (3 repetitions, 600-point IOPS
series for every config and workload; the same inputs the report tests use) and times, side by
side in one process, ``build_report`` and each renderer (HTML, Markdown, CSV) over ``--rounds``
rounds: wall and CPU time, best and median, plus the size of each output. Goal: under a second
of CPU for build + all three renders, HTML under 4 MB.

``make bench-report`` writes bench-results/report.json.
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "unit" / "report"))  # the report tests' input builder

import report_fixtures  # noqa: E402

from storagebench.report import build_report, render_csv, render_html, render_markdown  # noqa: E402


def _timed(call: Callable[[], Any], rounds: int) -> tuple[Any, dict[str, float]]:
    walls, cpus, result = [], [], None
    for _ in range(rounds):
        wall, cpu = time.perf_counter(), time.process_time()
        result = call()
        walls.append(time.perf_counter() - wall)
        cpus.append(time.process_time() - cpu)
    return result, {
        "wall_best_s": round(min(walls), 4),
        "wall_median_s": round(statistics.median(walls), 4),
        "cpu_best_s": round(min(cpus), 4),
        "cpu_median_s": round(statistics.median(cpus), 4),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "bench-results" / "report.json")
    parser.add_argument("--configs", type=int, default=20)
    parser.add_argument("--workloads", type=int, default=10)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()

    inputs = report_fixtures.large_inputs(args.configs, args.workloads)
    report, build = _timed(lambda: build_report(**inputs), args.rounds)
    html, html_t = _timed(lambda: render_html(report), args.rounds)
    markdown, md_t = _timed(lambda: render_markdown(report), args.rounds)
    table, csv_t = _timed(lambda: render_csv(report), args.rounds)
    total_cpu = build["cpu_median_s"] + html_t["cpu_median_s"] + md_t["cpu_median_s"] + csv_t["cpu_median_s"]
    result = {
        "what": f"report of a {args.configs}-config x {args.workloads}-workload run, 3 repetitions",
        "machine": {"python": platform.python_version(), "cpus": __import__("os").cpu_count()},
        "rounds": args.rounds,
        "records": len(inputs["stored"]["results"]),
        "series": sum(len(doc["series"]) for doc in inputs["series"].values()),
        "timings": {"build": build, "html": html_t, "markdown": md_t, "csv": csv_t},
        "cpu_median_total_s": round(total_cpu, 4),
        "sizes_bytes": {
            "html": len(html.encode()),
            "markdown": len(markdown.encode()),
            "csv": len(table.encode()),
        },
        "goals": {"cpu_total_under_s": 1.0, "html_under_bytes": 4_000_000},
        "met": total_cpu < 1.0 and len(html.encode()) < 4_000_000,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

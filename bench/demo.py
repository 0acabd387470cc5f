"""The local demo, measured: wall time, peak memory of the whole run, where the time goes.

Runs ``storagebench run --local --suite events/local-demo.json --json`` and samples every 0.25 s
the resident memory of the whole process tree (the CLI with its in-process handlers,
DynamoDB Local's JVM, the agents and their fio). From the run's artifacts it splits each
config's time into workloads, pre-warm and orchestration (provisioning, polling, collecting,
cleanup), and counts the state transitions of the execution. Goals: under 5 minutes after
set-up, under 2 GiB peak. ``make bench-demo`` writes bench-results/demo.json.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import threading
import time
from datetime import datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
PAGE_KIB = 4


def _children() -> dict[int, list[int]]:
    tree: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        parent = int(stat.rsplit(")", 1)[1].split()[1])
        tree.setdefault(parent, []).append(int(entry.name))
    return tree


def tree_rss_kib(pid: int) -> int:
    tree = _children()
    total, todo = 0, [pid]
    while todo:
        current = todo.pop()
        todo.extend(tree.get(current, []))
        try:
            total += int(Path(f"/proc/{current}/statm").read_text().split()[1]) * PAGE_KIB
        except (OSError, IndexError, ValueError):
            continue
    return total


class Sampler(threading.Thread):
    def __init__(self, pid: int) -> None:
        super().__init__(daemon=True)
        self.pid = pid
        self.peak_kib = 0
        self.samples = 0
        self.stop = threading.Event()

    def run(self) -> None:
        while not self.stop.wait(0.25):
            self.peak_kib = max(self.peak_kib, tree_rss_kib(self.pid))
            self.samples += 1


def _seconds(start: str | None, end: str | None) -> float | None:
    if not start or not end:
        return None
    parse = lambda text: datetime.fromisoformat(text.replace("Z", "+00:00"))  # noqa: E731
    return (parse(end) - parse(start)).total_seconds()


def breakdown(artifacts: Path, run_id: str, configs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    rows = []
    for config in configs:
        manifest_path = artifacts / "runs" / run_id / config["config_id"] / "agent" / "manifest.json"
        manifest = json.loads(manifest_path.read_text()) if manifest_path.exists() else {}
        workloads = sum(
            _seconds(s.get("started_at"), s.get("ended_at")) or 0 for s in manifest.get("steps", [])
        )
        prewarm = sum(
            _seconds(p.get("started_at"), p.get("ended_at")) or 0 for p in manifest.get("prewarm", [])
        )
        agent = _seconds(manifest.get("started_at"), manifest.get("ended_at")) or 0
        total = _seconds(config.get("at_PROVISIONING"), config.get(f"at_{config.get('status')}"))
        rows.append(
            {
                "config": config["config_id"],
                "status": config.get("status"),
                "config_wall_s": total,
                "workloads_s": round(workloads, 1),
                "prewarm_s": round(prewarm, 1),
                "agent_setup_teardown_s": round(agent - workloads - prewarm, 1),
                "orchestration_s": round(total - agent, 1) if total is not None else None,
            }
        )
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--suite", default=str(ROOT / "events" / "local-demo.json"))
    parser.add_argument("--out", default="bench-results/demo.json")
    args = parser.parse_args()
    command = [
        str(ROOT / ".venv" / "bin" / "storagebench"),
        "run",
        "--local",
        "--suite",
        args.suite,
        "--json",
    ]
    started = time.monotonic()
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=ROOT)
    sampler = Sampler(process.pid)
    sampler.start()
    stdout, stderr = process.communicate()
    sampler.stop.set()
    sampler.join()
    wall = time.monotonic() - started
    if not stdout:
        raise SystemExit(f"the demo printed nothing (exit {process.returncode}): {stderr.decode()[-2000:]}")
    record = json.loads(stdout)
    run_id = record["run_id"]
    report = {
        "suite": args.suite,
        "exit_code": process.returncode,
        "run_id": run_id,
        "run_status": record.get("run", {}).get("status"),
        "wall_s": round(wall, 1),
        "execution_s": record["execution"]["wall_s"],
        "peak_rss_mib": round(sampler.peak_kib / 1024, 1),
        "rss_samples": sampler.samples,
        "configs": breakdown(ROOT / ".storagebench" / "artifacts", run_id, record.get("configs", [])),
        "results": len(record.get("results", [])),
        "goals": {"under_5_min": wall < 300, "under_2_gib": sampler.peak_kib < 2 * 1024 * 1024},
    }
    path = Path(args.out)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(report, indent=2) + "\n")
    print(json.dumps(report, indent=2))
    sys.exit(0 if process.returncode == 0 else 1)


if __name__ == "__main__":
    main()

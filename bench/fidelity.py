"""How faithfully do emulated volumes reproduce their EBS envelope, and what does the agent cost?

Runs the standard suite on emulated volumes with known limits through the real path
(request -> plan -> agent subprocess -> parsers) and writes, per profile and volume, the limit,
the measured value and their ratio; the pre-warm rate of both methods against the throughput
limit; the burst knee detected in the IOPS series against the emulated one; and the agent's
own footprint while fio runs (peak RSS and CPU of the agent process, children excluded).

Goals: IOPS- and throughput-bound profiles within 3 % of the limit; pre-warm >= 95 % of the
throughput limit with the faster method; knee within 10 %; agent < 50 MB RSS and < 2 % CPU.
Run as root (loop devices, cgroup throttling): ``make bench-fidelity``.
"""

from __future__ import annotations

import argparse
import datetime
import json
import math
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from storagebench.agent.plan import Plan
from storagebench.agent.sysinfo import system_facts
from storagebench.analysis.burst import detect_knee
from storagebench.planning import LocalOptions, build_plan, local_targets
from storagebench.request import parse_request
from storagebench.results.collect import collect
from storagebench.results.fio_logs import read_timeseries
from storagebench.results.records import ResultRecord

ROOT = Path(__file__).resolve().parent.parent
PROFILES = {  # profile -> (dimension held to the limit, block size in KiB)
    "std-randread-4k": ("iops", 4),
    "std-randwrite-4k": ("iops", 4),
    "std-mixed-16k-70read": ("iops", 16),
    "std-seqread-1m": ("mibps", 1024),
    "std-seqwrite-1m": ("mibps", 1024),
    "std-latency-4k-qd1": (None, 4),
}
VOLUMES = [
    {"type": "gp3", "size_gib": 100},
    {"type": "io1", "size_gib": 100, "iops": 4000},
    {"type": "gp2", "size_gib": 1000},
]
CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


class Footprint:
    """Samples one process (not its children) from /proc while it runs."""

    def __init__(self, pid: int, period_s: float = 0.5) -> None:
        self.pid = pid
        self.period_s = period_s
        self.peak_rss_kib = 0
        self.cpu_s = 0.0
        self.wall_s = 0.0
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _sample(self) -> tuple[int, float] | None:
        try:
            status = Path(f"/proc/{self.pid}/status").read_text()
            stat = Path(f"/proc/{self.pid}/stat").read_text()
        except OSError:
            return None
        hwm = next((int(line.split()[1]) for line in status.splitlines() if line.startswith("VmHWM:")), 0)
        fields = stat.rsplit(")", 1)[1].split()
        utime, stime = int(fields[11]), int(fields[12])  # fields 14 and 15: this process only
        return hwm, (utime + stime) / CLOCK_TICKS

    def _run(self) -> None:
        started = time.monotonic()
        while True:
            sample = self._sample()
            if sample is None:
                return
            self.peak_rss_kib = max(self.peak_rss_kib, sample[0])
            self.cpu_s = sample[1]
            self.wall_s = time.monotonic() - started
            time.sleep(self.period_s)

    def join(self) -> None:
        self._thread.join(timeout=5)


def run_agent(plan: Plan, workdir: Path) -> tuple[Path, Footprint]:
    out = workdir / f"{plan['config_id']}-{int(time.time() * 1000)}"
    plan_file = workdir / f"{out.name}.plan.json"
    plan_file.write_text(json.dumps(plan))
    env = dict(os.environ, PYTHONPATH=str(ROOT / "layers" / "storagebench"))
    command = [
        sys.executable,
        "-m",
        "storagebench.agent",
        "run",
        "--plan",
        str(plan_file),
        "--out",
        str(out),
        "--mount-root",
        str(workdir / "mnt"),
        "--volumes-dir",
        str(workdir / "volumes"),
        "--quiet",
    ]
    process = subprocess.Popen(command, env=env)
    footprint = Footprint(process.pid)
    code = process.wait()
    footprint.join()
    if code != 0:
        raise SystemExit(f"agent exited with {code}; see {out}/agent.log")
    return out, footprint


def request_for(volume: dict[str, Any], workloads: list[dict[str, Any]], prewarm: str) -> Any:
    config_id = "-".join(str(v) for v in volume.values())
    return parse_request(
        {
            "name": "fidelity",
            "configs": [
                {
                    "id": config_id,
                    "instance_type": "c5.4xlarge",
                    "targets": [{"kind": "ebs", "filesystem": "raw", **volume}],
                }
            ],
            "workloads": workloads,
            "repetitions": 1,
            "prewarm": {"method": prewarm},
        }
    )


def expected(limits: dict[str, Any], dimension: str, block_kib: int) -> float:
    """What fio should see: EBS counts an I/O as ceil(block / io unit) operations."""
    ops_per_io = math.ceil(block_kib / int(limits.get("io_size_kib", 256)))
    iops_cap = float(limits["iops"]) / ops_per_io
    mibps_cap = float(limits["mibps"])
    if dimension == "iops":
        return min(iops_cap, mibps_cap * 1024 / block_kib)
    return min(mibps_cap, iops_cap * block_kib / 1024)


def combined(records: list[ResultRecord], workload: str, attribute: str) -> float:
    return sum(getattr(r, attribute) or 0.0 for r in records if r.workload == workload and r.engine == "fio")


def bench_profiles(
    workdir: Path, scale: float, options: LocalOptions
) -> tuple[list[dict[str, Any]], list[Footprint]]:
    results: list[dict[str, Any]] = []
    footprints = []
    for volume in VOLUMES:
        request = request_for(volume, [{"profile": p, "scale": scale} for p in PROFILES], "none")
        config = request.configs[0]
        targets = local_targets(config, options)
        limits = dict(targets[0]["emulate"][0]["limits"])
        out, footprint = run_agent(build_plan(request, config.id, "fidelity", targets), workdir)
        footprints.append(footprint)
        records = collect(out).records
        rows = []
        for profile, (dimension, block_kib) in PROFILES.items():
            row: dict[str, Any] = {"profile": profile, "block_kib": block_kib}
            latency = next((r.latency for r in records if r.workload == profile and r.latency), None)
            if latency is not None:
                row["latency_p50_us"] = latency.p50_us
                row["latency_p99_us"] = latency.p99_us
            if dimension is not None:
                attribute = "iops" if dimension == "iops" else "bw_mibps"
                limit = expected(limits, dimension, block_kib)
                measured = combined(records, profile, attribute)
                row.update(
                    {
                        "dimension": dimension,
                        "limit": round(limit, 2),
                        "measured": round(measured, 2),
                        "ratio": round(measured / limit, 4),
                        "within_3pct": abs(measured / limit - 1) <= 0.03,
                    }
                )
            rows.append(row)
        results.append(
            {
                "volume": f"{volume['type']}:{volume['size_gib']}"
                + (f":{volume['iops']}" if "iops" in volume else ""),
                "limits": limits,
                "profiles": rows,
            }
        )
        print(
            f"{results[-1]['volume']}: "
            + ", ".join(f"{r['profile']} {r['ratio']:.3f}" for r in rows if "ratio" in r),
            flush=True,
        )
    return results, footprints


def bench_prewarm(workdir: Path, options: LocalOptions) -> list[dict[str, Any]]:
    rows = []
    for volume in VOLUMES:
        for method, block_kib in (("dd", 1024), ("fio", 128)):
            request = request_for(volume, [{"profile": "std-latency-4k-qd1", "scale": 0.006}], method)
            config = request.configs[0]
            targets = local_targets(config, options)
            limits = dict(targets[0]["emulate"][0]["limits"])
            out, _ = run_agent(build_plan(request, config.id, "fidelity", targets), workdir)
            prewarm = next(r for r in collect(out).records if r.engine == "prewarm")
            limit = expected(limits, "mibps", block_kib)
            rows.append(
                {
                    "volume": f"{volume['type']}:{volume['size_gib']}",
                    "method": method,
                    "mibps": round(prewarm.bw_mibps or 0.0, 2),
                    "limit_mibps": round(limit, 2),
                    "ratio": round((prewarm.bw_mibps or 0.0) / limit, 4),
                    "seconds": round(prewarm.runtime_s, 2),
                }
            )
            print(f"prewarm {rows[-1]['volume']} {method}: {rows[-1]['ratio']:.3f}", flush=True)
    return rows


def bench_knee(workdir: Path, knee_s: float, options: LocalOptions) -> tuple[dict[str, Any], Footprint]:
    volume = {"type": "gp2", "size_gib": 100}
    runtime = knee_s * 1.6
    request = request_for(
        volume,
        [{"profile": "std-randread-4k", "params": {"runtime": runtime, "ramp_time": 0, "iodepth": 16}}],
        "none",
    )
    config = request.configs[0]
    local = LocalOptions(
        capacity_bytes=options.capacity_bytes, knee_seconds=knee_s, can_stripe=options.can_stripe
    )
    targets = local_targets(config, local)
    out, footprint = run_agent(build_plan(request, config.id, "fidelity", targets), workdir)
    step_dir = next((out / "steps").iterdir())
    series = read_timeseries(step_dir / "run" / "ts").iops["read"]
    knee = detect_knee(series)
    # Buckets are labelled by the end of their 1 s window and start at 1, so time_to_knee_s
    # (knee_t minus the first sample) is the start of the first baseline window since fio began.
    detected = knee.time_to_knee_s if knee is not None else None
    result = {
        "volume": "gp2:100",
        "emulated_knee_s": knee_s,
        "detected_knee_s": detected,
        "error_pct": round(abs(detected - knee_s) / knee_s * 100, 2) if detected is not None else None,
        "burst_level": knee.before if knee else None,
        "baseline_level": knee.after if knee else None,
        "series": series,
    }
    print(f"knee: emulated {knee_s:.0f} s, detected {detected}", flush=True)
    return result, footprint


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--out", default="bench-results/fidelity.json")
    parser.add_argument(
        "--scale", type=float, default=0.1, help="standard suite scale (0.1: 18 s per profile)"
    )
    parser.add_argument("--knee-seconds", type=float, default=60.0)
    args = parser.parse_args()
    if os.geteuid() != 0:
        raise SystemExit(
            "bench-fidelity emulates EBS volumes (loop devices, cgroup throttling): run it as root"
        )
    options = LocalOptions(capacity_bytes=1 << 30)
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="sb-fidelity-") as scratch:
        workdir = Path(scratch)
        profiles, footprints = bench_profiles(workdir, args.scale, options)
        prewarm = bench_prewarm(workdir, options)
        knee, knee_footprint = bench_knee(workdir, args.knee_seconds, options)
        footprints.append(knee_footprint)
    peak_rss_mb = max(f.peak_rss_kib for f in footprints) / 1024
    cpu_pct = max(f.cpu_s / f.wall_s * 100 for f in footprints if f.wall_s > 0)
    ratios = [r["ratio"] for v in profiles for r in v["profiles"] if "ratio" in r]
    best_prewarm = {}
    for row in prewarm:
        if row["ratio"] > best_prewarm.get(row["volume"], {}).get("ratio", 0):
            best_prewarm[row["volume"]] = row
    report = {
        "generated_at": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "wall_s": round(time.monotonic() - started, 1),
        "machine": {k: v for k, v in system_facts().items() if k != "instance"},
        "scale": args.scale,
        "volumes": profiles,
        "prewarm": prewarm,
        "prewarm_best": list(best_prewarm.values()),
        "knee": knee,
        "agent_footprint": {
            "peak_rss_mb": round(peak_rss_mb, 1),
            "max_cpu_pct_of_one_core": round(cpu_pct, 3),
            "runs": len(footprints),
            "note": "the agent process only (VmHWM, utime+stime), fio and dd excluded",
        },
        "goals": {
            "profiles_within_3pct": all(abs(r - 1) <= 0.03 for r in ratios),
            "worst_profile_ratio": min(ratios, key=lambda r: -abs(r - 1)),
            "prewarm_best_at_least_95pct": all(r["ratio"] >= 0.95 for r in best_prewarm.values()),
            "knee_within_10pct": knee["error_pct"] is not None and knee["error_pct"] <= 10,
            "agent_rss_below_50mb": peak_rss_mb < 50,
            "agent_cpu_below_2pct": cpu_pct < 2,
        },
    }
    path = Path(args.out)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(report, indent=2) + "\n")
    print(json.dumps(report["goals"], indent=2))
    print(f"agent footprint: {report['agent_footprint']}")
    print(f"written: {path}")


if __name__ == "__main__":
    main()

"""How faithfully do emulated volumes reproduce EBS, the twin beside the throttle, and at what cost?

Runs the standard suite on emulated volumes with known limits through the real path
(request -> plan -> agent subprocess -> parsers), once per volume on each emulator (the EBS twin
and the kernel throttle, ``LocalOptions(emulator=...)``), and writes, per volume, profile and
emulator: the limit, the measured IOPS or MiB/s and their ratio; the measured p50/p95/p99
against the model's prediction for the profile's shape (``agent.twin.model.predict``: Little's
law at the limit, the service time at QD1); the twin's CPU. Then the pre-warm rate of both
methods against the throughput limit, the gp2 burst knee detected in the IOPS series against
the emulated one, and the agent's own footprint (peak RSS and CPU, children excluded), each
on both emulators.

Goals: IOPS- and throughput-bound profiles within 3 % of the limit; latency within 10 % of the
model at p50 and p95, 20 % at p99 (the throttle is graded the same way for comparison: its
latency is the kernel's slices, it is expected to miss); pre-warm >= 95 % of the throughput
limit with the faster method; knee within 10 %; agent < 50 MB RSS and < 2 % CPU.
Run as root (loop devices, FUSE, cgroup throttling): ``make bench-fidelity`` (about 10 min).
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from fidelity_cpu import (
    Footprint,
    RunSampler,
    cpu_figures,
    delta_between,
    stalls_within,
    twin_cpu_from_state,
)
from fidelity_latency import (
    LATENCY_GOALS,
    MIXED_BASIS,
    FidelityError,
    JobShape,
    compare_latency,
    compare_limit,
    job_shape,
    limit_expected,
    model_prediction,
)
from fidelity_summary import best_prewarm, emulator_goals, progress, summarize, table, twin_cpu_summary
from storagebench.agent.sysinfo import system_facts
from storagebench.analysis.burst import detect_knee
from storagebench.planning import LocalOptions, build_plan, local_targets
from storagebench.protocol.plan import Plan
from storagebench.request import parse_request
from storagebench.results.collect import collect
from storagebench.results.fio_logs import read_timeseries
from storagebench.results.records import ResultRecord
from storagebench_local.native_twin import with_native_twin

ROOT = Path(__file__).resolve().parent.parent
PROFILES = {  # profile -> the dimension it is held to at the limit (None: QD1, latency only)
    "std-randread-4k": "iops",
    "std-randwrite-4k": "iops",
    "std-mixed-16k-70read": "iops",
    "std-seqread-1m": "mibps",
    "std-seqwrite-1m": "mibps",
    "std-latency-4k-qd1": None,
}
VOLUMES = [
    {"type": "gp3", "size_gib": 100},
    {"type": "io1", "size_gib": 100, "iops": 4000},
    {"type": "gp2", "size_gib": 1000},
]
EMULATORS = ("twin", "twin-python", "throttle")
# Not in the default run: the compiled twin with idle CPUs left to halt (plan cpu_wake "free"), to
# measure what keeping them awake (agent.twin.wake) is worth, side by side with "twin".
OPTIONAL_EMULATORS = ("twin-halting",)
# twin-python: the EBS twin on its Python data path (the fallback where the compiled one is not
# built), measured beside the compiled one so its CPU and fidelity are compared in one run.
LOADS = ("quiet", "busy")  # busy: the three volumes at once beside a process spinning on one core
PARTS = ("profiles", "prewarm", "knee")
PREWARM_BYTES = 512 << 20  # each emulated volume read end to end: 4 s at gp3's 125 MiB/s
LATENCY_BASIS = (
    "fio's total latency (lat: submission to completion, lat_percentiles=1), the jobs merged "
    "from fio's histogram bins (at most 1.6 % wide); one entry per direction"
)
MODEL_BASIS = (
    "agent.twin.model.predict: fio's closed loop of iodepth x numjobs I/Os through the volume's "
    "limits and catalog latency (Little's law at the limit, the service time at QD1), no host overhead"
)


@dataclass
class AgentRun:
    out: Path
    footprint: Footprint
    sampler: RunSampler
    manifest: dict[str, Any]
    records: list[ResultRecord]
    wall_s: float


def run_agent(plan: Plan, workdir: Path) -> AgentRun:
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
    started = time.monotonic()
    process = subprocess.Popen(command, env=env)
    footprint = Footprint(process.pid)
    sampler = RunSampler(process.pid)
    code = process.wait()
    footprint.join()
    sampler.stop()
    if code != 0:
        raise SystemExit(f"agent exited with {code}; see {out}/agent.log; {sweep(plan, workdir)}")
    manifest = json.loads((out / "manifest.json").read_text())
    return AgentRun(out, footprint, sampler, manifest, collect(out).records, time.monotonic() - started)


def sweep(plan: Plan, workdir: Path) -> str:
    """What a failed run left behind, removed by the agent's own sweep (mounts, loops, twins)."""
    command = [
        sys.executable,
        "-m",
        "storagebench.agent",
        "sweep",
        "--run-id",
        plan["run_id"],
        "--config-id",
        plan["config_id"],
        "--mount-root",
        str(workdir / "mnt"),
        "--volumes-dir",
        str(workdir / "volumes"),
    ]
    env = dict(os.environ, PYTHONPATH=str(ROOT / "layers" / "storagebench"))
    swept = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
    try:
        report = json.loads(swept.stdout)
    except ValueError:
        return f"sweep exited with {swept.returncode}: {swept.stderr.strip() or swept.stdout.strip()}"
    left = "; ".join(report.get("leftovers", []))
    return f"swept: {', '.join(report.get('removed', [])) or 'nothing'}" + (f"; left: {left}" if left else "")


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
            # "all": read every block (the rate is the measurement), not the sampled cold-read check
            "prewarm": {"method": prewarm, "volumes": "all"} if prewarm != "none" else {"method": "none"},
        }
    )


def volume_name(volume: dict[str, Any]) -> str:
    return f"{volume['type']}:{volume['size_gib']}" + (f":{volume['iops']}" if "iops" in volume else "")


def combined(records: list[ResultRecord], workload: str, attribute: str) -> float:
    return sum(getattr(r, attribute) or 0.0 for r in records if r.workload == workload and r.engine == "fio")


def emulated_devices(manifest: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        device["emulated"]
        for target in manifest.get("targets", [])
        for device in target.get("devices", [])
        if device.get("emulated")
    ]


def agent_emulator(emulator: str) -> str:
    """The agent's emulator for a bench column: both twin data paths are the agent's "twin"."""
    return "twin" if emulator.startswith("twin") else emulator


def emulated_by(options: LocalOptions, emulator: str) -> LocalOptions:
    """Local options for a bench column: its agent emulator, the compiled twin but for twin-python,
    and the CPUs kept awake but for twin-halting."""
    program = None if emulator == "twin-python" else options.twin_program
    wake = "free" if emulator == "twin-halting" else "hold"
    return replace(options, emulator=agent_emulator(emulator), twin_program=program, cpu_wake=wake)


def require_emulator(run: AgentRun, emulator: str) -> None:
    """The run used the emulator asked for on every volume (the agent fails loudly otherwise), and
    a twin the data path asked for."""
    devices = emulated_devices(run.manifest)
    used = sorted({str(device.get("emulator")) for device in devices})
    paths = sorted({str(device.get("twin_implementation")) for device in devices})
    wanted = {"twin": ["native"], "twin-halting": ["native"], "twin-python": ["python"]}.get(emulator)
    if wanted is not None and paths != wanted:
        reason = run.manifest.get("emulation", {}).get("python_twin_reason")
        raise SystemExit(f"{run.out}: asked for the {emulator} data path, the agent used {paths} ({reason})")
    if emulator.startswith("twin"):  # the CPUs kept awake for every twin column but twin-halting
        wake = run.manifest.get("emulation", {}).get("cpu_wake")
        held = isinstance(wake, dict) and wake.get("cpu_wake_latency_us") == 0
        if held != (emulator != "twin-halting"):
            raise SystemExit(f"{run.out}: {emulator}: the agent's CPU wake request was {wake!r}")
    if used != [agent_emulator(emulator)]:
        reason = run.manifest.get("emulation", {}).get("fallback_reason")
        raise SystemExit(f"{run.out}: asked for the {emulator} emulator, the agent used {used} ({reason})")


def epoch(utc: str) -> float:
    return datetime.datetime.fromisoformat(utc).timestamp()


def measured_window(run: AgentRun, step_id: str, records: list[ResultRecord]) -> tuple[float, float] | None:
    """Epoch seconds of a step's measured I/O: fio's runtime (after its ramp), ending with the phase."""
    step = next((s for s in run.manifest.get("steps", []) if s.get("id") == step_id), None)
    phase = next((p for p in (step or {}).get("phases", []) if p.get("engine") == "fio"), None)
    runtime_s = max((r.runtime_s for r in records), default=0.0)
    if phase is None or not phase.get("ended_at") or runtime_s <= 0:
        return None
    ended = epoch(phase["ended_at"])
    return ended - runtime_s, ended


def step_twin_cpu(
    run: AgentRun, window: tuple[float, float], records: list[ResultRecord]
) -> dict[str, Any] | None:
    """The twin's CPU over a step's measured window, per fio I/O."""
    start, end = window
    cpu_s = delta_between(run.sampler.twin_cpu, start, end)
    if cpu_s is None:
        return None
    ios = sum(r.iops or 0.0 for r in records) * (end - start)
    return {
        "cpu_s": round(cpu_s, 3),
        "seconds": round(end - start, 2),
        **cpu_figures(cpu_s, end - start, ios),
    }


def profile_row(
    volume: str,
    emulator: str,
    step: dict[str, Any],
    shape: JobShape,
    prediction: dict[str, float],
    limits: dict[str, Any],
    run: AgentRun,
) -> dict[str, Any]:
    profile = str(step["workload"])
    records = [r for r in run.records if r.workload == profile and r.engine == "fio"]
    if not records:
        raise SystemExit(f"{run.out}: no fio records for {profile}; see {run.out}/agent.log")
    dimension = PROFILES[profile]
    block_kib = shape.block_size / 1024
    iops = combined(records, profile, "iops")
    mibps = combined(records, profile, "bw_mibps")
    directions: dict[str, Any] = {}
    for record in records:
        latency = record.latency
        if latency is None:
            raise SystemExit(f"{run.out}: {profile} {record.direction} has no latency")
        measured = {"p50": latency.p50_us, "p95": latency.p95_us, "p99": latency.p99_us}
        try:
            directions[record.direction] = compare_latency(
                {k: v / 1000 if v is not None else None for k, v in measured.items()}, prediction
            )
        except FidelityError as exc:
            raise SystemExit(f"{run.out}: {profile} {record.direction}: {exc}") from None
    limit = (
        compare_limit(limits, dimension, block_kib, iops if dimension == "iops" else mibps)
        if dimension
        else None
    )
    latency_ok = all(graded["meets_goals"] for graded in directions.values())
    window = measured_window(run, str(step["id"]), records)
    return {
        "volume": volume,
        "profile": profile,
        "emulator": emulator,
        "shape": shape.describe(),
        "limit": limit,
        "measured": {
            "iops": round(iops, 1),
            "mibps": round(mibps, 2),
            "model_iops_ratio": round(iops / prediction["iops"], 4),
        },
        "model": prediction,
        "latency": {
            "basis": LATENCY_BASIS + (f"; {MIXED_BASIS}" if shape.mixed else ""),
            "directions": directions,
            "meets_goals": latency_ok,
        },
        "twin_cpu": step_twin_cpu(run, window, records) if window and emulator.startswith("twin") else None,
        "cpu_pressure_some_pct": run.sampler.cpu_pressure_pct(*window) if window else None,
        "host_steal_pct": run.sampler.host_steal_pct(*window) if window else None,
        "twin_stalls": stalls_within(run.manifest, window) if window else None,
        "meets_goals": latency_ok and (limit is None or bool(limit["within_3pct"])),
    }


def run_summary(run: AgentRun, emulator: str) -> dict[str, Any]:
    devices = emulated_devices(run.manifest)
    summary: dict[str, Any] = {
        "emulator": emulator,
        "wall_s": round(run.wall_s, 1),
        "calibrated_overhead_us": [d.get("calibrated_overhead_us") for d in devices],
        "fallback_reason": run.manifest.get("emulation", {}).get("fallback_reason"),
    }
    twins = run.manifest.get("emulation", {}).get("twins", [])
    if emulator.startswith("twin"):
        if not twins:
            raise SystemExit(f"{run.out}: a twin run without emulation.twins in its manifest")
        try:
            summary["twin_cpu"] = [twin_cpu_from_state(twin["state"]) for twin in twins]
        except FidelityError as exc:
            raise SystemExit(f"{run.out}: {exc}") from None
    return summary


def column(emulator: str, load: str) -> str:
    """A result column: the emulator, and "busy" when measured beside other work."""
    return emulator if load == "quiet" else f"{emulator} busy"


class Hog:
    """A process spinning on one core (CPU 0) for as long as the block lasts: the "busy" load."""

    def __init__(self) -> None:
        self.process: subprocess.Popen[bytes] | None = None

    def __enter__(self) -> Hog:
        self.process = subprocess.Popen([sys.executable, "-c", "while True: pass"])
        os.sched_setaffinity(self.process.pid, {0})
        return self

    def __exit__(self, *exc: object) -> None:
        assert self.process is not None
        self.process.kill()
        self.process.wait(timeout=10)


def agents_at_once(plans: list[Plan], workdir: Path) -> list[AgentRun]:
    """Every plan's agent started together (as the demo runs its configs), each in its own thread."""
    with ThreadPoolExecutor(max_workers=len(plans)) as pool:
        return list(pool.map(lambda plan: run_agent(plan, workdir), plans))


@dataclass
class VolumePlan:
    name: str
    plan: Plan
    limits: dict[str, Any]
    latency: dict[str, Any]


def volume_plan(
    volume: dict[str, Any],
    workloads: list[dict[str, Any]],
    prewarm: str,
    options: LocalOptions,
    emulator: str,
) -> VolumePlan:
    name = volume_name(volume)
    request = request_for(volume, workloads, prewarm)
    config = request.configs[0]
    targets = local_targets(config, emulated_by(options, emulator))
    emulation = targets[0]["emulate"][0]
    limits, latency = dict(emulation["limits"]), dict(emulation.get("latency") or {})
    if not latency:
        raise SystemExit(f"{name}: the plan carries no latency model (catalog ebs.{volume['type']}.latency)")
    return VolumePlan(name, build_plan(request, config.id, "fidelity", targets), limits, latency)


def bench_profiles(
    workdir: Path,
    scale: float,
    options: LocalOptions,
    emulators: tuple[str, ...],
    predict_ios: int,
    loads: tuple[str, ...],
) -> tuple[list[dict[str, Any]], list[dict[str, Any]], list[Footprint]]:
    """Quiet: one volume at a time. Busy: the three volumes' agents at once beside a CPU hog."""
    workloads = [{"profile": p, "scale": scale} for p in PROFILES]
    entries = {volume_name(v): {"volume": volume_name(v), "runs": {}} for v in VOLUMES}
    predictions: dict[tuple[str, JobShape], dict[str, float]] = {}
    rows: list[dict[str, Any]] = []
    footprints = []
    for load in loads:
        for emulator in emulators:
            planned = [volume_plan(v, workloads, "none", options, emulator) for v in VOLUMES]
            if load == "busy":
                with Hog():
                    runs = agents_at_once([p.plan for p in planned], workdir)
            else:
                runs = [run_agent(p.plan, workdir) for p in planned]
            label = column(emulator, load)
            for planned_volume, run in zip(planned, runs, strict=True):
                name, limits, latency = planned_volume.name, planned_volume.limits, planned_volume.latency
                require_emulator(run, emulator)
                footprints.append(run.footprint)
                entries[name].update({"limits": limits, "latency": latency})
                for step in planned_volume.plan["steps"]:
                    shape = job_shape(step)
                    key = (name, shape)
                    if key not in predictions:
                        predictions[key] = model_prediction(limits, latency, shape, predict_ios)
                    row = profile_row(name, emulator, dict(step), shape, predictions[key], limits, run)
                    rows.append({**row, "load": load, "column": label})
                entries[name]["runs"][label] = run_summary(run, emulator)
                print(f"{name} {label}: {progress(rows, name, label)}", flush=True)
    return list(entries.values()), rows, footprints


def prewarm_row(
    volume: dict[str, Any], emulator: str, load: str, method: str, run: AgentRun
) -> dict[str, Any]:
    block_kib = 1024 if method == "dd" else 128
    emulated = emulated_devices(run.manifest)[0]
    prewarm = next(r for r in run.records if r.engine == "prewarm")
    limit = limit_expected(emulated["limits"], "mibps", block_kib)
    return {
        "volume": f"{volume['type']}:{volume['size_gib']}",
        "emulator": emulator,
        "load": load,
        "column": column(emulator, load),
        "method": method,
        "mibps": round(prewarm.bw_mibps or 0.0, 2),
        "limit_mibps": round(limit, 2),
        "ratio": round((prewarm.bw_mibps or 0.0) / limit, 4),
        "seconds": round(prewarm.runtime_s, 2),
        "mib_read": round(prewarm.bytes / (1 << 20), 1),
    }


def bench_prewarm(
    workdir: Path, options: LocalOptions, emulators: tuple[str, ...], loads: tuple[str, ...]
) -> list[dict[str, Any]]:
    """Each volume read end to end by dd and by fio; busy: the three volumes at once beside a hog."""
    rows = []
    workloads = [{"profile": "std-latency-4k-qd1", "scale": 0.006}]
    for load in loads:
        for emulator in emulators:
            for method in ("dd", "fio"):
                plans = [volume_plan(v, workloads, method, options, emulator).plan for v in VOLUMES]
                if load == "busy":
                    with Hog():
                        runs = agents_at_once(plans, workdir)
                else:
                    runs = [run_agent(plan, workdir) for plan in plans]
                for volume, run in zip(VOLUMES, runs, strict=True):
                    require_emulator(run, emulator)
                    rows.append(prewarm_row(volume, emulator, load, method, run))
                    print(
                        f"prewarm {rows[-1]['volume']} {rows[-1]['column']} {method}: {rows[-1]['ratio']:.3f}"
                    )
    return rows


def bench_knee(
    workdir: Path, knee_s: float, options: LocalOptions, emulator: str
) -> tuple[dict[str, Any], Footprint]:
    volume = {"type": "gp2", "size_gib": 100}
    runtime = knee_s * 1.6
    request = request_for(
        volume,
        [{"profile": "std-randread-4k", "params": {"runtime": runtime, "ramp_time": 0, "iodepth": 16}}],
        "none",
    )
    config = request.configs[0]
    knee_options = replace(emulated_by(options, emulator), knee_seconds=knee_s)
    targets = local_targets(config, knee_options)
    run = run_agent(build_plan(request, config.id, "fidelity", targets), workdir)
    require_emulator(run, emulator)
    step_dir = next((run.out / "steps").iterdir())
    series = read_timeseries(step_dir / "run" / "ts").iops["read"]
    knee = detect_knee(series)
    # Buckets are labelled by the end of their 1 s window and start at 1, so time_to_knee_s
    # (knee_t minus the first sample) is the start of the first baseline window since fio began.
    detected = knee.time_to_knee_s if knee is not None else None
    result = {
        "volume": "gp2:100",
        "emulator": emulator,
        "emulated_knee_s": knee_s,
        "detected_knee_s": detected,
        "error_pct": round(abs(detected - knee_s) / knee_s * 100, 2) if detected is not None else None,
        "burst_level": knee.before if knee else None,
        "baseline_level": knee.after if knee else None,
        # elapsed_s counts from when the emulation started (the throttle's governor, the twin's
        # model), a little before fio did.
        "emulation_events": run.manifest.get("emulation_events", []),
        "series": series,
    }
    print(f"knee {emulator}: emulated {knee_s:.0f} s, detected {detected}", flush=True)
    return result, run.footprint


def parse_list(flag: str, text: str, allowed: tuple[str, ...]) -> tuple[str, ...]:
    chosen = tuple(item.strip() for item in text.split(",") if item.strip())
    if not chosen or any(item not in allowed for item in chosen):
        raise SystemExit(f"{flag} {text!r}: a comma-separated list of {', '.join(allowed)} expected")
    return chosen


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--out", default="bench-results/fidelity.json")
    parser.add_argument(
        "--scale",
        type=float,
        default=0.04,
        help="standard suite scale (0.04: 7.2 s measured after a 1 s ramp per profile)",
    )
    parser.add_argument("--knee-seconds", type=float, default=40.0, help="when the gp2 bucket empties")
    parser.add_argument(
        "--emulators",
        default=",".join(EMULATORS),
        help="comma-separated, measured side by side: twin (compiled), twin-python, throttle; also "
        "twin-halting (the compiled twin with idle CPUs left to halt)",
    )
    parser.add_argument("--parts", default=",".join(PARTS), help=f"comma-separated: {','.join(PARTS)}")
    parser.add_argument(
        "--loads",
        default=",".join(LOADS),
        help="comma-separated: quiet (one volume at a time), busy (three at once beside a CPU hog)",
    )
    parser.add_argument("--predict-ios", type=int, default=200_000, help="I/Os the model simulates per shape")
    args = parser.parse_args()
    args.emulators = parse_list("--emulators", args.emulators, EMULATORS + OPTIONAL_EMULATORS)
    args.parts = parse_list("--parts", args.parts, PARTS)
    args.loads = parse_list("--loads", args.loads, LOADS)
    return args


def main() -> None:
    args = parse_args()
    emulators, parts, loads = args.emulators, args.parts, args.loads
    if os.geteuid() != 0:
        raise SystemExit(
            "bench-fidelity emulates EBS volumes (loop devices, FUSE, cgroup throttling): run it as root"
        )
    options = with_native_twin(LocalOptions(capacity_bytes=1 << 30))
    started = time.monotonic()
    volumes: list[dict[str, Any]] = []
    rows: list[dict[str, Any]] = []
    footprints: list[Footprint] = []
    prewarm: list[dict[str, Any]] = []
    knees: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="sb-fidelity-") as scratch:
        workdir = Path(scratch)
        if "profiles" in parts:
            volumes, rows, footprints = bench_profiles(
                workdir, args.scale, options, emulators, args.predict_ios, loads
            )
        if "prewarm" in parts:
            prewarm = bench_prewarm(workdir, replace(options, capacity_bytes=PREWARM_BYTES), emulators, loads)
        if "knee" in parts:
            for emulator in emulators:
                knee, knee_footprint = bench_knee(workdir, args.knee_seconds, options, emulator)
                knees.append(knee)
                footprints.append(knee_footprint)
    peak_rss_mb = max((f.peak_rss_kib for f in footprints), default=0) / 1024
    cpu_pct = max((f.cpu_s / f.wall_s * 100 for f in footprints if f.wall_s > 0), default=0.0)
    best = best_prewarm(prewarm)
    summary = summarize(rows)
    columns = [column(emulator, load) for load in loads for emulator in emulators]
    goals: dict[str, Any] = {label: emulator_goals(label, summary, best, knees) for label in columns}
    goals["agent_rss_below_50mb"] = peak_rss_mb < 50 if footprints else None
    goals["agent_cpu_below_2pct"] = cpu_pct < 2 if footprints else None
    report: dict[str, Any] = {
        "generated_at": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "wall_s": round(time.monotonic() - started, 1),
        "machine": {k: v for k, v in system_facts().items() if k != "instance"},
        "settings": {
            "scale": args.scale,
            "knee_seconds": args.knee_seconds,
            "emulators": list(emulators),
            "loads": list(loads),
            "busy_load": "the three volumes' agents at once, beside a process spinning on CPU 0",
            "twin_program": options.twin_program,
            "predict_ios": args.predict_ios,
            "parts": list(parts),
            "capacity_bytes": options.capacity_bytes,
        },
        "goal_definitions": {
            "limit": "IOPS (IOPS-bound) or MiB/s (throughput-bound) within 3 % of the limit",
            "latency": {p: f"within {goal:.0%} of the model" for p, goal in LATENCY_GOALS.items()},
            "latency_basis": LATENCY_BASIS,
            "model_basis": MODEL_BASIS,
            "mixed_basis": MIXED_BASIS,
        },
        "volumes": volumes,
        "profiles": rows,
        "summary": {**summary, "twin_cpu": twin_cpu_summary(volumes, rows)},
        "prewarm": prewarm,
        "prewarm_best": list(best.values()),
        "knee": knees,
        "agent_footprint": {
            "peak_rss_mb": round(peak_rss_mb, 1),
            "max_cpu_pct_of_one_core": round(cpu_pct, 3),
            "runs": len(footprints),
            "note": "the agent process only (VmHWM, utime+stime), fio, dd and the twin excluded",
        },
        "goals": goals,
    }
    path = Path(args.out)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(report, indent=2) + "\n")
    print("\n".join(table(rows)))
    print(json.dumps(report["goals"], indent=2))
    print(f"twin CPU: {json.dumps(report['summary']['twin_cpu']['runs'])}")
    print(f"agent footprint: {report['agent_footprint']}")
    print(f"wall: {report['wall_s']} s; written: {path}")


if __name__ == "__main__":
    main()

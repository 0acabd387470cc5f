"""Run one phase with fio, dd or a shell command and keep every byte of raw output.

Each engine writes into the phase directory and returns a PhaseResult; nothing is parsed
here beyond splitting fio's combined ``json+,normal`` output in two files. All benchmark
processes start inside the throttle cgroup when volumes are emulated (``procs_file``).
"""

from __future__ import annotations

import json
import math
import os
import shutil
import time
from typing import Any, Callable, Dict, List, Optional, Tuple

from storagebench.agent.log import utc_now
from storagebench.agent.node_loss import NodeLossError, log_end_ms, measure_directory
from storagebench.agent.proc import Child, CommandError, Finished, in_cgroup
from storagebench.protocol.fio_output import split_fio_output
from storagebench.protocol.fio_summary import DirectionSummary, FioSummaryError, summarize_fio
from storagebench.protocol.manifest import (
    STATUS_FAILED,
    STATUS_OK,
    PhaseResult,
    ThreadTiming,
    Timing,
    write_json_atomic,
)
from storagebench.protocol.measurable import too_small
from storagebench.protocol.node_loss import INTERVAL_MS as NODE_LOSS_INTERVAL_MS
from storagebench.protocol.plan import NodeLoss, Phase
from storagebench.protocol.sla import Measured, Probe, judge, search

DEFAULT_TIMEOUT_S = 12 * 3600


class PhaseContext:
    """Where a phase runs: the target path, its mode, the phase directory and the throttle."""

    def __init__(
        self,
        target_path: str,
        mode: str,
        workdir: Optional[str],
        phase_dir: str,
        procs_file: Optional[str],
        is_root: bool,
        on_progress: Optional[Callable[[str], None]] = None,
        clients: Optional[List[str]] = None,
    ) -> None:
        self.on_progress = on_progress  # a line for people while a long phase runs (search probes)
        # fio phases of a multi-client step: the fio servers (host,port) one fio --client drives
        self.clients = list(clients or [])
        self.target_path = target_path
        self.mode = mode  # raw | filesystem
        self.workdir = workdir  # a private directory under the target (file system targets)
        self.phase_dir = phase_dir
        self.procs_file = procs_file
        self.is_root = is_root


def _fio_value(key: str, value: Any) -> str:
    text = str(value)
    if "\n" in text or "\n" in key or "=" in key:
        raise CommandError(f"fio option {key!r} has a newline or '=': {text!r}")
    return text


def fio_job_file(phase: Phase, ctx: PhaseContext, extra: Optional[Dict[str, Any]] = None) -> str:
    """The job file: our [global] (target, logs) first, then the profile's or the user's jobs;
    ``extra`` global options come last (a search probe's rate)."""
    spec = phase.get("fio", {})
    target_key = "filename" if ctx.mode == "raw" else "directory"
    target_value = ctx.target_path if ctx.mode == "raw" else str(ctx.workdir)
    global_options: Dict[str, Any] = {target_key: target_value}
    if spec.get("timeseries", True):
        global_options.update(
            {
                "write_iops_log": "ts/sb",
                "write_lat_log": "ts/sb",
                "write_bw_log": "ts/sb",
                "log_avg_msec": NODE_LOSS_INTERVAL_MS if "node_loss" in phase else 1000,
                "per_job_logs": 1,
            }
        )
    global_options.update(spec.get("global_options", {}))
    global_options.update(extra or {})
    lines = ["[global]"] + [f"{k}={_fio_value(k, v)}" for k, v in global_options.items()]
    if spec.get("job_file"):
        lines += ["", str(spec["job_file"]).rstrip()]
    for job in spec.get("jobs", []):
        if "\n" in job["name"] or "]" in job["name"]:
            raise CommandError(f"fio job name {job['name']!r} would break the job file")
        lines += ["", f"[{job['name']}]"]
        lines += [f"{k}={_fio_value(k, v)}" for k, v in job["options"].items()]
    return "\n".join(lines) + "\n"


def _timing(finished: List[Finished], real_s: float, extra: Optional[List[Dict[str, int]]] = None) -> Timing:
    threads: List[ThreadTiming] = []
    for index, done in enumerate(finished):
        entry: ThreadTiming = {
            "thread": index,
            "rc": done.rc,
            "real_s": round(done.real_s, 6),
            "user_s": round(done.user_s, 6),
            "sys_s": round(done.sys_s, 6),
        }
        if extra and index < len(extra):
            entry.update(extra[index])  # type: ignore[typeddict-item]
        threads.append(entry)
    return {
        "real_s": round(real_s, 6),
        "user_s": round(sum(d.user_s for d in finished), 6),
        "sys_s": round(sum(d.sys_s for d in finished), 6),
        "threads": threads,
    }


def _failure(finished: List[Finished], timeout_s: float, what: str) -> Optional[str]:
    for index, done in enumerate(finished):
        if done.timed_out:
            return f"{what} thread {index} timed out after {timeout_s:.0f} s and was killed"
        if done.rc != 0:
            return f"{what} thread {index} exited with status {done.rc}"
    return None


def _start_all(
    argvs: List[List[str]],
    ctx: PhaseContext,
    stderr_names: List[str],
    timeout_s: float,
    cwd: Optional[str] = None,
    envs: Optional[List[Dict[str, str]]] = None,
    stdout_names: Optional[List[str]] = None,
) -> Tuple[List[Finished], float]:
    """Start every command at once (parallel threads), wait for all; returns (finished, wall)."""
    started = time.monotonic()
    handles = []
    children = []
    try:
        for index, argv in enumerate(argvs):
            err = open(os.path.join(ctx.phase_dir, stderr_names[index]), "wb")  # noqa: SIM115
            handles.append(err)
            out = None
            if stdout_names:
                out = open(os.path.join(ctx.phase_dir, stdout_names[index]), "wb")  # noqa: SIM115
                handles.append(out)
            env = envs[index] if envs else None
            children.append(
                Child(
                    in_cgroup(argv, ctx.procs_file),
                    cwd=cwd,
                    env=env,
                    stdout=out,
                    stderr=err,
                    timeout_s=timeout_s,
                )
            )
        finished = [child.wait() for child in children]
    except BaseException:
        for child in children:  # interrupted: never leave a benchmark process behind
            child.kill(grace_s=2)
            child.wait()
        raise
    finally:
        for handle in handles:
            handle.close()
    return finished, time.monotonic() - started


def drop_caches(ctx: PhaseContext) -> str:
    """Flush and drop the page cache so a read phase reads the storage, not RAM."""
    if not ctx.is_root:
        return "skipped: not root"
    os.sync()
    with open("/proc/sys/vm/drop_caches", "w", encoding="ascii") as handle:
        handle.write("3\n")
    return "done"


def run_phase(phase: Phase, ctx: PhaseContext) -> PhaseResult:
    os.makedirs(ctx.phase_dir, exist_ok=True)
    result: PhaseResult = {
        "name": phase["name"],
        "engine": phase["engine"],
        "started_at": utc_now(),
        "dir": ctx.phase_dir,
        "status": STATUS_OK,
        "error": None,
        "rc": None,
        "files": [],
    }
    timeout_s = float(phase.get("timeout_s", DEFAULT_TIMEOUT_S))
    try:
        if phase.get("drop_caches"):
            result["drop_caches"] = drop_caches(ctx)
        engine = phase["engine"]
        if engine == "fio" and "search" in phase:
            _fio_search(phase, ctx, result, timeout_s)
        elif engine == "fio":
            _fio(phase, ctx, result, timeout_s)
        elif engine == "dd":
            _dd(phase, ctx, result, timeout_s)
        else:
            _command(phase, ctx, result, timeout_s)
    except (CommandError, OSError) as exc:
        result["status"] = STATUS_FAILED
        result["error"] = str(exc)
    result["ended_at"] = utc_now()
    result["files"] = sorted(_listing(ctx.phase_dir))
    return result


def _listing(directory: str) -> List[str]:
    files = []
    for root, _, names in os.walk(directory):
        for name in names:
            files.append(os.path.relpath(os.path.join(root, name), directory))
    return files


def _fio(phase: Phase, ctx: PhaseContext, result: PhaseResult, timeout_s: float) -> None:
    if ctx.clients:
        _fio_clients(phase, ctx, result, timeout_s)
        return
    _fio_run(phase, ctx, ctx.phase_dir, timeout_s, result)
    if "node_loss" in phase:
        _measure_node_loss(phase, ctx.phase_dir, result)
    try:
        directions = _fio_directions(ctx.phase_dir)
    except CommandError as exc:  # the measurement stands; collect parses it with the domain's rules
        result["warnings"] = [f"not checked for a too-small measurement: {exc}"]
        return
    warnings = [
        f"{name}: {why}"
        for name, totals in sorted(directions.items())
        if (why := too_small(totals.runtime_s, totals.ios, percentiles=True)) is not None
    ]
    if warnings:
        result["warnings"] = warnings


def _measure_node_loss(phase: Phase, directory: str, result: PhaseResult) -> None:
    """The pause and recovery around the node's removal; logs that cannot say are the phase's
    ``node_loss_error`` (the throughput figures stand)."""
    loss = phase["node_loss"]
    if not phase.get("fio", {}).get("timeseries", True):
        result["node_loss_error"] = "the phase logs no time series (fio.timeseries is false)"
        return
    try:
        removed_at_ms = _removed_at_ms(loss, directory)
        result["node_loss"] = dict(
            measure_directory(os.path.join(directory, "ts"), removed_at_ms, NODE_LOSS_INTERVAL_MS)
        )
    except (NodeLossError, OSError) as exc:
        result["node_loss_error"] = f"{loss['role']}[{loss['index']}] removed at {loss['at_s']:g} s: {exc}"


def _removed_at_ms(loss: NodeLoss, directory: str) -> float:
    """When the node went, on fio's log clock. The node counts ``ramp_s + at_s`` from the primary's
    word (``told_at_ms``, given just before fio starts), but fio's clock starts only after its own
    start-up (the process, an NBD handshake, laying out files: up to seconds on a file system).
    fio's JSON ``timestamp_ms`` is when it reported, just after its last log sample: that sample's
    time on the log clock dates the clock's origin, and so the removal. Without the word's time
    (a phase run outside a topology), ``at_s`` as planned."""
    planned = float(loss["at_s"]) * 1000.0
    told = loss.get("told_at_ms")
    if told is None:
        return planned
    with open(os.path.join(directory, "fio.json"), encoding="utf-8") as handle:
        reported = json.load(handle).get("timestamp_ms")
    end = log_end_ms(os.path.join(directory, "ts"))
    if not isinstance(reported, (int, float)) or end is None:
        return planned
    origin = float(reported) - end  # epoch ms of the log clock's 0
    return float(told) + (float(loss.get("ramp_s", 0.0)) + float(loss["at_s"])) * 1000.0 - origin


def _fio_directions(directory: str) -> Dict[str, DirectionSummary]:
    with open(os.path.join(directory, "fio.json"), encoding="utf-8") as handle:
        try:
            document = json.load(handle)
        except ValueError as exc:
            raise CommandError(f"{directory}/fio.json is not JSON: {exc}") from None
    try:
        return summarize_fio(document)
    except (FioSummaryError, TypeError, ValueError) as exc:
        raise CommandError(f"{directory}/fio.json: {exc}") from None


def _fio_run(
    phase: Phase,
    ctx: PhaseContext,
    directory: str,
    timeout_s: float,
    result: PhaseResult,
    extra: Optional[Dict[str, Any]] = None,
) -> None:
    """Run fio once in ``directory`` (the phase's, or one probe's) with ``extra`` global options;
    its rc and timing go to ``result`` before any failure is raised."""
    run_ctx = PhaseContext(ctx.target_path, ctx.mode, ctx.workdir, directory, ctx.procs_file, ctx.is_root)
    job_path = os.path.join(directory, "job.fio")
    with open(job_path, "w", encoding="utf-8") as handle:
        handle.write(fio_job_file(phase, run_ctx, extra))
    os.makedirs(os.path.join(directory, "ts"), exist_ok=True)
    env = dict(os.environ, SB_TARGET=ctx.target_path if ctx.mode == "raw" else str(ctx.workdir))
    argv = ["fio", "--output-format=json+,normal", "--output=fio.out", "job.fio"]
    finished, wall = _start_all([argv], run_ctx, ["fio.stderr"], timeout_s, cwd=directory, envs=[env])
    result["rc"] = finished[0].rc
    result["timing"] = _timing(finished, wall)
    combined_path = os.path.join(directory, "fio.out")
    if os.path.exists(combined_path):
        with open(combined_path, encoding="utf-8", errors="replace") as handle:
            parts = split_fio_output(handle.read())
        if parts is not None:
            json_text, normal_text = parts
            with open(os.path.join(directory, "fio.json"), "w", encoding="utf-8") as handle:
                handle.write(json_text)
            with open(os.path.join(directory, "fio.txt"), "w", encoding="utf-8") as handle:
                handle.write(normal_text)
            os.unlink(combined_path)
    problem = _failure(finished, timeout_s, "fio")
    if problem:
        with open(os.path.join(directory, "fio.stderr"), encoding="utf-8", errors="replace") as handle:
            tail = [line for line in handle.read().splitlines() if line.strip()][-3:]
        raise CommandError(problem + (": " + " | ".join(tail) if tail else ""))
    if not os.path.exists(os.path.join(directory, "fio.json")):
        raise CommandError("fio finished but wrote no JSON output")


def _fio_clients(phase: Phase, ctx: PhaseContext, result: PhaseResult, timeout_s: float) -> None:
    """One ``fio --client=... --client=...`` run: every client's fio server starts the job file at once.

    Its stdout (the servers' text lines, then one JSON document with ``client_stats``) is the
    phase's ``fio.json`` as is: ``results.clients`` splits it per client. The job file's paths are
    the shared target's, the same on every client (fio's server prefixes each file name with the
    client's address, so the clients never write one another's files); time-series logs come back
    to ``ts/`` suffixed with each client's address. fio drops a server it cannot reach and still
    exits 0: that is a warning here, and a missing client in the records.
    """
    directory = ctx.phase_dir
    with open(os.path.join(directory, "job.fio"), "w", encoding="utf-8") as handle:
        handle.write(fio_job_file(phase, ctx))
    os.makedirs(os.path.join(directory, "ts"), exist_ok=True)
    argv = ["fio", *[f"--client={client}" for client in ctx.clients], "--output-format=json+", "job.fio"]
    finished, wall = _start_all(
        [argv], ctx, ["fio.stderr"], timeout_s, cwd=directory, stdout_names=["fio.json"]
    )
    result["rc"] = finished[0].rc
    result["timing"] = _timing(finished, wall)
    result["clients"] = list(ctx.clients)
    with open(os.path.join(directory, "fio.stderr"), encoding="utf-8", errors="replace") as handle:
        stderr = [line.strip() for line in handle.read().splitlines() if line.strip()]
    problem = _failure(finished, timeout_s, "fio --client")
    if problem:
        raise CommandError(problem + (": " + " | ".join(stderr[-3:]) if stderr else ""))
    unreachable = [line for line in stderr if "failed to connect" in line]
    if unreachable:
        result["warnings"] = unreachable
    if os.path.getsize(os.path.join(directory, "fio.json")) == 0:
        raise CommandError("fio --client finished but wrote no output")


def _fio_jobs(phase: Phase) -> int:
    """Processes the phase's jobs start (each job section's numjobs, 1 by default)."""
    total = 0
    for job in phase.get("fio", {}).get("jobs", []):
        try:
            total += max(1, int(job["options"].get("numjobs", 1)))
        except (TypeError, ValueError):
            numjobs = job["options"].get("numjobs")
            raise CommandError(f"fio job {job['name']!r}: numjobs {numjobs!r} is not a number") from None
    return max(1, total)


def _fio_search(phase: Phase, ctx: PhaseContext, result: PhaseResult, timeout_s: float) -> None:
    """Probe rates until the SLA's limit is bracketed (``protocol.sla``); every probe is kept."""
    spec = phase["search"]
    jobs = _fio_jobs(phase)
    deadline = time.monotonic() + timeout_s
    started = time.monotonic()
    timings: List[Timing] = []
    completed: List[Probe] = []

    def run_probe(number: int, rate: int) -> Probe:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise CommandError(f"the search ran out of its {timeout_s:.0f} s before probe {number}")
        name = f"probe-{number:02d}"
        directory = os.path.join(ctx.phase_dir, name)
        os.makedirs(directory, exist_ok=True)
        # fio's rate_iops is per job: the jobs share the probed rate.
        run: PhaseResult = {}
        try:
            _fio_run(phase, ctx, directory, remaining, run, {"rate_iops": math.ceil(rate / jobs)})
        finally:
            result["rc"] = run.get("rc")
            if "timing" in run:
                timings.append(run["timing"])
        measured = Measured.from_directions(_fio_directions(directory), float(spec["percentile"]))
        probe = judge(measured, rate, spec)
        probe["dir"] = name
        completed.append(probe)
        if ctx.on_progress is not None:
            verdict = "met" if probe["met"] else f"missed: {probe['why']}"
            ctx.on_progress(
                f"probe {number} at {rate:,} IOPS: achieved {probe['iops']:,.0f} IOPS, "
                f"p{spec['percentile']:g} {probe['latency_us'] / 1000:.3g} ms, {verdict}"
            )
        return probe

    try:
        try:
            outcome = search(run_probe, spec)
        except (ValueError, FioSummaryError) as exc:
            raise CommandError(f"search: {exc}") from None
    except CommandError:
        result["search"] = {"probes": list(completed), "stopped": "failed"}  # what was measured stays
        raise
    result["timing"] = {
        "real_s": round(time.monotonic() - started, 6),
        "user_s": round(sum(t["user_s"] for t in timings), 6),
        "sys_s": round(sum(t["sys_s"] for t in timings), 6),
        "threads": [],
    }
    result["search"] = dict(outcome)
    measured = outcome["answer"] or outcome["probes"][0]
    why = too_small(measured.get("runtime_s"), measured.get("ios"), percentiles=True)
    if why is not None:
        result["warnings"] = [f"{measured['dir']} (the answer's probe): {why}"]


def _dd(phase: Phase, ctx: PhaseContext, result: PhaseResult, timeout_s: float) -> None:
    spec = phase["dd"]
    if ctx.workdir is None:
        raise CommandError("dd phases need a file system target")
    threads = int(spec.get("parallel", 1))
    argvs = []
    for thread in range(threads):
        path = os.path.join(ctx.workdir, spec["file"] + (f".{thread}" if threads > 1 else ""))
        if spec["direction"] == "write":
            argv = ["dd", f"if={spec.get('input', '/dev/zero')}", f"of={path}"]
        else:
            argv = ["dd", f"if={path}", "of=/dev/null"]
        argv += [f"bs={spec['bs']}", f"count={int(spec['count'])}"]
        for flag, value in (
            ("iflag", spec.get("iflag")),
            ("oflag", spec.get("oflag")),
            ("conv", spec.get("conv")),
        ):
            if value:
                argv.append(f"{flag}={value}")
        argvs.append(argv)
    names = [f"dd.{thread}.stderr" for thread in range(threads)]
    with open(os.path.join(ctx.phase_dir, "commands.txt"), "w", encoding="utf-8") as handle:
        handle.write("\n".join(" ".join(a) for a in argvs) + "\n")
    finished, wall = _start_all(argvs, ctx, names, timeout_s)
    result["rc"] = max(d.rc for d in finished)
    result["timing"] = _timing(finished, wall)
    write_json_atomic(os.path.join(ctx.phase_dir, "timing.json"), result["timing"])
    problem = _failure(finished, timeout_s, "dd")
    if problem:
        raise CommandError(problem)
    # dd prints no latency percentiles: only its time is judged (the slowest thread's).
    why = too_small(max(d.real_s for d in finished), None, percentiles=False)
    if why is not None:
        result["warnings"] = [f"dd {spec['direction']} of {int(spec['count']) * threads:,} blocks: {why}"]


def missing_requirements(requires: List[str], search_path: Optional[str]) -> List[str]:
    """The entries of a command's ``requires`` this machine lacks: a program not on ``search_path``,
    an absolute path that does not exist."""
    return [
        item
        for item in requires
        if not (os.path.exists(item) if item.startswith("/") else shutil.which(item, path=search_path))
    ]


def _command(phase: Phase, ctx: PhaseContext, result: PhaseResult, timeout_s: float) -> None:
    spec = phase["command"]
    if ctx.workdir is None:
        raise CommandError("command phases need a file system target")
    threads = int(spec.get("parallel", 1))
    argvs = [["/bin/sh", "-c", spec["script"]] for _ in range(threads)]
    base_env = dict(os.environ, SB_TARGET_DIR=ctx.workdir, SB_THREADS=str(threads), **spec.get("env", {}))
    missing = missing_requirements(spec.get("requires") or [], base_env.get("PATH"))
    if missing:
        result["missing"] = missing
        raise CommandError(
            f"the command requires {', '.join(missing)}, not on this instance: install and stage them "
            "with the config's setup hook, or boot an image that has them (the command was not started)"
        )
    envs = [dict(base_env, SB_THREAD=str(thread)) for thread in range(threads)]
    finished, wall = _start_all(
        argvs,
        ctx,
        [f"stderr.{t}.txt" for t in range(threads)],
        timeout_s,
        cwd=ctx.workdir,
        envs=envs,
        stdout_names=[f"stdout.{t}.txt" for t in range(threads)],
    )
    result["rc"] = max(d.rc for d in finished)
    timing = _timing(finished, wall)
    if spec.get("accounting"):
        timing["accounting"] = dict(spec["accounting"])
    result["timing"] = timing
    write_json_atomic(os.path.join(ctx.phase_dir, "timing.json"), timing)
    problem = _failure(finished, timeout_s, "command")
    if problem:
        raise CommandError(problem)
    why = too_small(wall, None, percentiles=False)
    if why is not None:
        result["warnings"] = [f"command: {why}"]


def clear_workdir(workdir: str) -> None:
    """Remove what a step wrote, keeping the directory."""
    for entry in os.listdir(workdir):
        path = os.path.join(workdir, entry)
        if os.path.isdir(path) and not os.path.islink(path):
            shutil.rmtree(path)
        else:
            os.unlink(path)

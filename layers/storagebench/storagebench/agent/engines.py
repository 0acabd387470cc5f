"""Run one phase with fio, dd or a shell command and keep every byte of raw output.

Each engine writes into the phase directory and returns a PhaseResult; nothing is parsed
here beyond splitting fio's combined ``json+,normal`` output in two files. All benchmark
processes start inside the throttle cgroup when volumes are emulated (``procs_file``).
"""

from __future__ import annotations

import os
import shutil
import time
from typing import Any, Dict, List, Optional, Tuple

from storagebench.agent.fio_output import split_fio_output
from storagebench.agent.log import utc_now
from storagebench.agent.manifest import (
    STATUS_FAILED,
    STATUS_OK,
    PhaseResult,
    ThreadTiming,
    Timing,
    write_json_atomic,
)
from storagebench.agent.plan import Phase
from storagebench.agent.proc import Child, CommandError, Finished, in_cgroup

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
    ) -> None:
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


def fio_job_file(phase: Phase, ctx: PhaseContext) -> str:
    """The job file: our [global] (target, logs) first, then the profile's or the user's jobs."""
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
                "log_avg_msec": 1000,
                "per_job_logs": 1,
            }
        )
    global_options.update(spec.get("global_options", {}))
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
        if engine == "fio":
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
    job_path = os.path.join(ctx.phase_dir, "job.fio")
    with open(job_path, "w", encoding="utf-8") as handle:
        handle.write(fio_job_file(phase, ctx))
    os.makedirs(os.path.join(ctx.phase_dir, "ts"), exist_ok=True)
    env = dict(os.environ, SB_TARGET=ctx.target_path if ctx.mode == "raw" else str(ctx.workdir))
    argv = ["fio", "--output-format=json+,normal", "--output=fio.out", "job.fio"]
    finished, wall = _start_all([argv], ctx, ["fio.stderr"], timeout_s, cwd=ctx.phase_dir, envs=[env])
    result["rc"] = finished[0].rc
    result["timing"] = _timing(finished, wall)
    combined_path = os.path.join(ctx.phase_dir, "fio.out")
    if os.path.exists(combined_path):
        with open(combined_path, encoding="utf-8", errors="replace") as handle:
            parts = split_fio_output(handle.read())
        if parts is not None:
            json_text, normal_text = parts
            with open(os.path.join(ctx.phase_dir, "fio.json"), "w", encoding="utf-8") as handle:
                handle.write(json_text)
            with open(os.path.join(ctx.phase_dir, "fio.txt"), "w", encoding="utf-8") as handle:
                handle.write(normal_text)
            os.unlink(combined_path)
    problem = _failure(finished, timeout_s, "fio")
    if problem:
        with open(os.path.join(ctx.phase_dir, "fio.stderr"), encoding="utf-8", errors="replace") as handle:
            tail = [line for line in handle.read().splitlines() if line.strip()][-3:]
        raise CommandError(problem + (": " + " | ".join(tail) if tail else ""))
    if not os.path.exists(os.path.join(ctx.phase_dir, "fio.json")):
        raise CommandError("fio finished but wrote no JSON output")


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


def _command(phase: Phase, ctx: PhaseContext, result: PhaseResult, timeout_s: float) -> None:
    spec = phase["command"]
    if ctx.workdir is None:
        raise CommandError("command phases need a file system target")
    threads = int(spec.get("parallel", 1))
    argvs = [["/bin/sh", "-c", spec["script"]] for _ in range(threads)]
    base_env = dict(os.environ, SB_TARGET_DIR=ctx.workdir, SB_THREADS=str(threads), **spec.get("env", {}))
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


def clear_workdir(workdir: str) -> None:
    """Remove what a step wrote, keeping the directory."""
    for entry in os.listdir(workdir):
        path = os.path.join(workdir, entry)
        if os.path.isdir(path) and not os.path.islink(path):
            shutil.rmtree(path)
        else:
            os.unlink(path)

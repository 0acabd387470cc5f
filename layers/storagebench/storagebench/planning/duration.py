"""How long a run keeps its resources: per config, and the run's wall time under the Map's concurrency.

A config's resources live from launch to cleanup, in this order (``statemachines/benchmark.asl.json``):

1. **ready**: the instance boots, passes its status checks and comes online in SSM while its file
   systems are created (Provision starts both at once, so the longer one counts), plus one
   ``timing.ready_poll_s`` of the CheckReady loop;
2. **setup**: the agent is installed (fio from dnf, the zipapp from S3), targets are formatted
   and mounted; a config's own ``setup``/``teardown`` hooks are scripts of unknown length;
3. **prewarm**: what ``planning.initialisation`` gives each EBS target (``agent/prewarm.py``: a
   target's volumes at once, targets one after another): a read end to end (restored volumes, or
   all with ``volumes: all``) at the target's sustained envelope, or the volume's Provisioned
   Rate for Volume Initialization when it is lower; or the sampled cold-read check (its extents
   read twice, cold and warm, ``agent.cold_read``) at the same envelope;
4. **workloads**: the agent plan's steps (``planning.steps.plan_steps``: every sweep point, every
   repetition, after ``scale`` and the request's overrides; an adaptive series plans its
   ``max`` repetitions, and ``min_hours`` counts only its ``min``: the range of the run's
   cost): time-based fio phases last ``ramp_time + runtime``; size-bound phases (dd, fio without
   ``time_based``) move their bytes at the target's rate for their block size; fio lays its
   files out (writes them) before reading on a file system, and every step removes what it
   wrote, so each read step lays out again;
5. **collect and cleanup**: results parsed and stored, instance and volumes deleted.

Rates come from the catalog: EBS from ``catalog.envelope.target_envelope`` (the *sustained*
figures: volume baseline and instance baseline, because a run long enough to matter drains gp2
and st1/sc1 credits and a burstable instance's 30 minutes of EBS burst; the estimate errs long,
the safe side of a cost guardrail), EFS and FSx for Lustre from their published per-TiB and
per-client figures, capped at the client's baseline network (``target_rates``). Instance store,
NFS exports (a File Gateway's share too: its speed is the gateway's cache and upload, which the
catalog does not model) and local directories have no figure in the catalog: a size-bound phase
on them cannot be estimated and the estimate says it is incomplete, as it does for a custom
command with no duration (its own program decides how long it runs).
Everything is a pure function of the request: the dry run and the Plan step agree.
"""

from __future__ import annotations

import configparser
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from storagebench.catalog.network import network_limits
from storagebench.kinds import Rates, kind_of
from storagebench.kinds.base import INSTANCE_READY_S, MIB
from storagebench.kinds.reach import storage_side
from storagebench.planning.initialisation import prewarm_reads, sample_bytes
from storagebench.planning.steps import plan_steps
from storagebench.protocol.plan import Phase, Step
from storagebench.protocol.sample_layout import SAMPLE_BLOCK
from storagebench.protocol.sla import expected_probes
from storagebench.request.model import BenchmarkRequest, Config, Target, target_mode
from storagebench.workloads.params import parse_duration, parse_size

# fio from dnf (tens of seconds with a warm mirror), the agent zipapp from S3, mkfs and mount.
AGENT_SETUP_S = 120.0
# Per step: fio/dd start, the page cache dropped, the step's files removed, its records written.
STEP_OVERHEAD_S = 5.0
# Collect (parse, store records) and Cleanup (terminate, delete volumes and file systems, verify).
COLLECT_CLEANUP_S = 300.0
# A shell loop over files starts one process per file (fork + exec, about a millisecond) and, on
# an NFS-family file system, pays create/open/close round trips (EFS: low single-digit ms each).
PROCESS_START_S = 0.001
NETWORK_FILE_OPS_S = 0.005

_READS = {"read", "randread", "rw", "readwrite", "randrw"}
_WRITES = {"write", "randwrite", "rw", "readwrite", "randrw", "trimwrite"}


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class ConfigDuration(_Frozen):
    """How long one config keeps its resources, by stage (seconds) and in all (hours)."""

    config_id: str
    hours: float = Field(
        description="launch to cleanup: the hours its resources are paid for (adaptive repetitions: all max)"
    )
    min_hours: float = Field(
        description="the same with every adaptive series stopping at its min (= hours without adaptive ones)"
    )
    ready_s: float = Field(description="boot, status checks, SSM online; file systems created")
    setup_s: float = Field(description="agent installed, targets formatted and mounted")
    prewarm_s: float = Field(
        description="EBS targets that need it read end to end, the others' cold-read check"
    )
    workloads_s: float = Field(description="every step of the agent plan")
    min_workloads_s: float = Field(description="the steps that always run (adaptive series: up to min)")
    collect_cleanup_s: float
    steps: int
    complete: bool = Field(description="false: some part could not be estimated (see notes)")
    notes: list[str] = Field(default_factory=list)


class RunDuration(_Frozen):
    """Every config's duration and the run's wall time with ``concurrency`` configs at once."""

    configs: list[ConfigDuration]
    concurrency: int
    wall_hours: float = Field(description="the Map's schedule: configs start in order as slots free up")
    min_wall_hours: float = Field(description="the same with every adaptive series stopping at its min")
    complete: bool
    notes: list[str] = Field(default_factory=list)

    @property
    def config_hours(self) -> dict[str, float]:
        return {c.config_id: c.hours for c in self.configs}


def target_rates(config: Config, target: Target) -> Rates | None:
    """The catalog's sustained rates of a target on its config's instance; None when it has none.

    A target reached over the network (EFS, FSx, a share: ``kinds.reach``) moves its bytes through
    each client's network too, so its MiB/s each way are capped at the client's *baseline*
    network bandwidth: the sustained figure, as for the storage (a burst lasts 5-60 minutes).
    """
    rates = kind_of(target).rates(target, config.instance_type)
    cap = network_cap_mibps(config, target)
    if rates is None or cap is None:
        return rates
    return replace(rates, read_mibps=min(rates.read_mibps, cap), write_mibps=min(rates.write_mibps, cap))


def network_cap_mibps(config: Config, target: Target) -> float | None:
    """One client's baseline network in MiB/s when ``target`` is reached over it (None: it is not,
    or the client type is not in the catalog)."""
    if storage_side(config, target) is None:
        return None
    limits = network_limits(config.instance_type)
    return None if limits is None else limits.baseline_mibps


def _network_note(config: Config, target: Target) -> str | None:
    """Said when the client's network, not the storage, sets a target's estimated rate."""
    storage = kind_of(target).rates(target, config.instance_type)
    cap = network_cap_mibps(config, target)
    if storage is None or cap is None or cap >= max(storage.read_mibps, storage.write_mibps):
        return None
    return (
        f"{target.id}: estimated at {config.instance_type}'s baseline network, {cap:,.0f} MiB/s each way, "
        f"below the storage's {max(storage.read_mibps, storage.write_mibps):,.0f} MiB/s"
    )


@dataclass
class _Tally:
    """Seconds a config's steps are known to take, and what could not be estimated (and why)."""

    seconds: float = 0.0
    gaps: dict[str, str] = field(default_factory=dict)
    where: str = ""

    def gap(self, why: str) -> float:
        self.gaps.setdefault(self.where, why)
        return 0.0


def _int(value: Any, default: int) -> int:
    return int(value) if value is not None else default


def _fio_job_seconds(
    options: dict[str, Any], filesystem: bool, rates: Rates | None, tally: _Tally
) -> tuple[float, float]:
    """(layout, run) seconds of one fio job section with its numjobs copies."""
    rw = str(options.get("rw", "read"))
    jobs = _int(options.get("numjobs"), 1)
    size = parse_size(options["size"]) if "size" in options else None
    block = parse_size(options.get("bs", "4k"))
    layout = 0.0
    if filesystem and rw in _READS and size is not None:
        if rates is None:
            layout = tally.gap("fio lays out its files before reading, at a rate the catalog does not give")
        else:
            layout = rates.seconds(0, jobs * size, MIB)
    if options.get("time_based") and "runtime" in options:
        return layout, parse_duration(options["runtime"]) + parse_duration(options.get("ramp_time", 0))
    if size is None:
        return layout, tally.gap("a fio job with neither time_based runtime nor size")
    if rates is None:
        return layout, tally.gap("a size-bound fio job on a target whose rate the catalog does not give")
    mixed = rw in _READS and rw in _WRITES
    share = _int(options.get("rwmixread"), 50) / 100 if mixed else float(rw in _READS)
    total = jobs * size
    run = rates.seconds(total * share, total * (1 - share), block)
    if "runtime" in options:  # runtime without time_based caps a size-bound job
        run = min(run, parse_duration(options["runtime"]))
    return layout, run


def _job_file_seconds(text: str, tally: _Tally) -> float:
    """A custom job file's longest ramp + runtime, when every job is time based."""
    parser = configparser.ConfigParser(
        allow_no_value=True, strict=False, interpolation=None, delimiters=("=",)
    )
    parser.read_string(text)
    defaults = dict(parser["global"]) if parser.has_section("global") else {}
    longest = 0.0
    for section in (s for s in parser.sections() if s != "global"):
        options = {**defaults, **dict(parser[section])}
        if "time_based" not in options or not options.get("runtime"):
            return tally.gap("a custom fio job file without time_based and runtime on every job")
        window = parse_duration(options["runtime"]) + parse_duration(options.get("ramp_time") or "0")
        longest = max(longest, window)
    return longest


def _phase_seconds(phase: Phase, target: Target, rates: Rates | None, tally: _Tally) -> float:
    engine = phase["engine"]
    if engine == "fio":
        fio = phase["fio"]
        if fio.get("job_file"):
            return _job_file_seconds(fio["job_file"], tally)
        filesystem = target_mode(target) == "filesystem"
        shared = fio.get("global_options", {})
        parts = [
            _fio_job_seconds({**shared, **job["options"]}, filesystem, rates, tally) for job in fio["jobs"]
        ]
        # fio lays out every job's files first, then runs the jobs at once (no stonewall is used);
        # a latency-SLA search runs them once per probe (protocol.sla), on the files laid out once.
        probes = expected_probes(phase["search"]) if "search" in phase else 1
        return sum(layout for layout, _ in parts) + max(run for _, run in parts) * probes
    if "timeout_s" in phase:  # a bounded phase: at most this long
        return float(phase["timeout_s"])
    if engine == "dd":
        dd = phase["dd"]
        if rates is None:
            return tally.gap("dd moves a fixed amount at a rate the catalog does not give for this target")
        block = parse_size(dd["bs"])
        moved = block * dd["count"] * dd.get("parallel", 1)
        reading = dd["direction"] == "read"
        return rates.seconds(moved if reading else 0, 0 if reading else moved, block)
    command = phase["command"]
    accounting = command.get("accounting", {})
    if "files" not in accounting:
        return tally.gap("a custom command runs as long as its program does (no duration, no timeout)")
    if rates is None:
        return tally.gap("a file loop on a target whose rate the catalog does not give")
    per_file = PROCESS_START_S + (NETWORK_FILE_OPS_S if kind_of(target).network else 0.0)
    # The slower direction: a loop's script may write or read (create, then read back).
    slower = min(rates.mibps("read", MIB), rates.mibps("write", MIB))
    files = accounting["files"] * per_file / command.get("parallel", 1)
    return accounting.get("bytes", 0) / MIB / slower + files


def phase_seconds(phase: Phase, target: Target, rates: Rates | None) -> float | None:
    """How long one phase of a step is planned to take; None when the plan cannot say (why: as
    ``config_duration``'s notes give it)."""
    tally = _Tally()
    seconds = _phase_seconds(phase, target, rates, tally)
    return None if tally.gaps else seconds


def _ready_seconds(request: BenchmarkRequest, config: Config) -> float:
    waits = [INSTANCE_READY_S, *(kind_of(t).ready_seconds for t in config.targets)]
    return max(waits) + request.timing.ready_poll_s


def _prewarm_seconds(request: BenchmarkRequest, config: Config, notes: list[str]) -> float:
    prewarm = request.prewarm
    reads = prewarm_reads(prewarm, config)
    if not reads:
        return 0.0
    block = parse_size(prewarm.block_size or {"dd": "1M", "fio": "128k"}[prewarm.method])
    sample_block = block if prewarm.method == "dd" else parse_size(SAMPLE_BLOCK)
    total = 0.0
    for target in config.targets:
        kind = kind_of(target)
        read = reads.get(str(target.id))
        if read == "full":
            total += kind.prewarm_seconds(target, config.instance_type, block, notes)
        elif read == "sampled":
            total += kind.cold_read_seconds(
                target, config.instance_type, sample_bytes(prewarm), prewarm.sample_extents, sample_block
            )
    return total


def config_duration(
    request: BenchmarkRequest, config: Config, steps: list[Step] | None = None
) -> ConfigDuration:
    """One config from launch to cleanup, by stage (``steps``: its plan steps, when already planned)."""
    notes: list[str] = []
    complete = True
    targets = {t.id: t for t in config.targets}
    rates = {t.id: target_rates(config, t) for t in config.targets}
    steps = plan_steps(request, config) if steps is None else steps
    tally = _Tally()
    fewest = 0.0  # the steps that always run: adaptive series stopping at their min
    busy: dict[str, float] = {}  # seconds of I/O each target is estimated to serve
    for step in steps:
        target = targets[step["target"]]
        tally.where = f"{step['workload']} on {target.id} ({target.kind})"
        io_seconds = sum(_phase_seconds(p, target, rates[target.id], tally) for p in step["phases"])
        busy[str(target.id)] = busy.get(str(target.id), 0.0) + io_seconds
        seconds = STEP_OVERHEAD_S + io_seconds
        tally.seconds += seconds
        if "adaptive" not in step or step["repetition"] <= step["adaptive"]["min"]:
            fewest += seconds
    workloads = tally.seconds
    for where, why in tally.gaps.items():
        complete = False
        notes.append(f"{where}: not estimated: {why}")
    hooks = [name for name in ("setup", "teardown") if getattr(config, name)]
    if hooks:
        complete = False
        notes.append(f"the {' and '.join(hooks)} hook(s) are scripts of unknown length: not estimated")
    for note in dict.fromkeys(n for t in config.targets for n in kind_of(t).duration_notes(t)):
        notes.append(note)
    for target in config.targets:
        network = _network_note(config, target)
        if network is not None:
            notes.append(network)
        credits = kind_of(target).credit_note(target, busy.get(str(target.id), 0.0))
        if credits is not None:
            notes.append(credits)
    ready = _ready_seconds(request, config)
    prewarm = _prewarm_seconds(request, config, notes)
    total = ready + AGENT_SETUP_S + prewarm + workloads + COLLECT_CLEANUP_S
    return ConfigDuration(
        config_id=config.id,
        hours=total / 3600,
        min_hours=(ready + AGENT_SETUP_S + prewarm + fewest + COLLECT_CLEANUP_S) / 3600,
        min_workloads_s=fewest,
        ready_s=ready,
        setup_s=AGENT_SETUP_S,
        prewarm_s=prewarm,
        workloads_s=workloads,
        collect_cleanup_s=COLLECT_CLEANUP_S,
        steps=len(steps),
        complete=complete,
        notes=notes,
    )


def wall_hours(hours: list[float], concurrency: int) -> float:
    """The Map's makespan: each config starts, in order, when one of ``concurrency`` slots frees."""
    if concurrency < 1:
        raise ValueError(f"concurrency must be at least 1, got {concurrency}")
    slots = [0.0] * min(concurrency, max(1, len(hours)))
    for duration in hours:
        earliest = slots.index(min(slots))
        slots[earliest] += duration
    return max(slots)


def estimate_duration(
    request: BenchmarkRequest, concurrency: int, steps: Mapping[str, list[Step]] | None = None
) -> RunDuration:
    """Every config's expected duration and the run's wall time with ``concurrency`` at once
    (``steps``: every config's plan steps by config id, when already planned)."""
    planned = steps or {}
    configs = [config_duration(request, c, planned.get(c.id)) for c in request.configs]
    notes = [f"{c.config_id}: {note}" for c in configs for note in c.notes]
    return RunDuration(
        configs=configs,
        concurrency=concurrency,
        wall_hours=wall_hours([c.hours for c in configs], concurrency),
        min_wall_hours=wall_hours([c.min_hours for c in configs], concurrency),
        complete=all(c.complete for c in configs),
        notes=notes,
    )

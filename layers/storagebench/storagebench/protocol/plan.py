"""The agent plan: the only document the benchmark agent reads.

The domain package (``storagebench.planning``) expands a validated request config into this
plan; the agent executes it literally. Everything here is plain JSON so the agent stays
stdlib-only and runs on Python 3.9. ``check_plan`` is the agent's own guard against a
malformed plan (a hand-written plan, a version mismatch): it names every bad field.
"""

from __future__ import annotations

import math
import re
from typing import Any, Dict, List, Optional, TypedDict

from storagebench.protocol.latency import LatencySpecError, latency_modes
from storagebench.protocol.topology import Topology, check_clients, check_topology, is_primary

PLAN_VERSION = 1

TARGET_KINDS = ("ebs", "instance_store", "efs", "fsx_lustre", "nfs", "directory")
BLOCK_KINDS = ("ebs", "instance_store")
NETWORK_KINDS = ("efs", "fsx_lustre", "nfs")
FILESYSTEMS = ("xfs", "ext4", "btrfs", "raw")
PREWARM_METHODS = ("none", "dd", "fio")
ENGINES = ("fio", "dd", "command")

_JOB_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:@=,+-]{0,63}$")  # no ] or newline: it heads an ini section
_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._@=,+-]{0,127}$")


class EmulationLimits(TypedDict, total=False):
    """Combined (read + write) ceilings of an emulated EBS volume.

    ``iops``/``mibps`` are the sustained (baseline) ceilings. When ``credit_capacity`` is set,
    the volume starts with a full bucket and runs at ``burst_iops``/``burst_mibps`` until the
    bucket is empty (gp2 I/O credits; st1/sc1 throughput credits in MiB), refilling at
    ``credit_refill_per_s``. ``credit_unit`` says what a credit is: ``io`` or ``mib``.
    """

    iops: float
    mibps: float
    burst_iops: float
    burst_mibps: float
    credit_capacity: float
    credit_refill_per_s: float
    credit_unit: str
    io_size_kib: int


EMULATORS = ("auto", "twin", "throttle")
"""``auto``: the EBS twin where this machine can run one, else the throttle (with the reason)."""
CPU_WAKE = ("hold", "free")
"""While twins serve: keep every CPU awake (``hold``, the default: agent.twin.wake) or let idle CPUs
halt (``free``: twins then wake as late as this machine's idle CPUs do)."""


class _EmulationOptional(TypedDict, total=False):
    # The volume type's service-time distribution (catalog ``latency``): {"modes": [{"weight",
    # "p50_ms", "p99_ms"}], "source": ...}; the EBS twin draws every I/O's service time from it.
    latency: Dict[str, Any]
    # "auto" (the twin where this machine can run one, else the throttle), "twin" or "throttle".
    emulator: str
    # Local mode: the compiled twin (storagebench-twin) this machine provides; without it, or
    # where it is missing, twins run on the Python data path (manifest: python_twin_reason).
    twin_program: str
    # CPU_WAKE: "hold" (absent) keeps the CPUs awake while twins serve, "free" lets them halt.
    cpu_wake: str


class Emulation(_EmulationOptional):
    """A loop device standing in for one EBS volume on a machine without EBS."""

    volume_type: str
    size_gib: float
    capacity_bytes: int
    limits: EmulationLimits


class TargetSpec(TypedDict, total=False):
    id: str
    kind: str
    # ebs: the volumes to find by NVMe serial; device_names only for Xen instances.
    volume_ids: List[str]
    device_names: List[str]
    # ebs (count > 1 stripes with mdadm RAID0, or jbod: separate raw devices) and
    # instance_store (count 0 = every device).
    count: int
    layout: str
    raid_chunk_kib: int
    # Local runs: one emulation per stripe member instead of volume_ids.
    emulate: List[Emulation]
    # ebs: what was requested (type, size_gib, iops, throughput_mibps), for the manifest and for
    # standing a loop device in for the volume in local mode.
    volume: Dict[str, Any]
    filesystem: str
    mkfs_options: List[str]
    mount_options: str
    # efs / fsx_lustre / nfs: what to mount.
    source: str
    fstype: str
    lustre_stripe_count: int
    # directory: an existing directory to benchmark in place.
    path: str
    # Writing over a device that carries data is refused unless this is true.
    allow_destroy: bool
    # False: attach only (no safety check, no mkfs, no workload); the setup hook gets the
    # device paths in SB_DEVICE_<ID> and owns the device.
    prepare: bool


class FioJob(TypedDict):
    name: str
    options: Dict[str, Any]


class FioSpec(TypedDict, total=False):
    global_options: Dict[str, Any]
    jobs: List[FioJob]
    job_file: str  # a user's fio job file, run as is (jobs is then empty)
    timeseries: bool


class DdSpec(TypedDict, total=False):
    direction: str  # write: input -> file on target; read: file on target -> /dev/null
    input: str  # /dev/zero or /dev/urandom for writes
    file: str  # file name relative to the target (a thread index is appended when parallel > 1)
    bs: str
    count: int
    iflag: str
    oflag: str
    conv: str
    parallel: int


class CommandSpec(TypedDict, total=False):
    script: str  # run by /bin/sh with SB_TARGET_DIR, SB_THREAD, SB_THREADS in the environment
    parallel: int
    env: Dict[str, str]
    accounting: Dict[str, int]  # bytes / files the script moves, known to the planner (for MiB/s)
    requires: List[str]  # programs on PATH and absolute paths, checked before the script runs


class SearchSpec(TypedDict, total=False):
    """A latency-SLA search (``protocol.sla``): fio phases with it run once per probed rate."""

    percentile: float  # the latency percentile judged, e.g. 99
    target_us: float  # ... must stay at or under this
    low_iops: int  # the first and lowest rate probed
    high_iops: int  # the highest rate probed
    tolerance: float  # stop when (lowest missed - highest met) / lowest missed <= this
    max_probes: int
    min_delivered: float  # a probe meets the SLA only if fio achieved this share of its rate


class _NodeLossRequired(TypedDict):
    role: str  # the node group, e.g. controller
    index: int  # which of its nodes (0-based)
    at_s: float  # seconds into fio's logs (after the ramp)


class NodeLoss(_NodeLossRequired, total=False):
    """A node of the topology removed while this fio phase runs (the node powers itself off,
    ``agent.node``): the agent logs rates every 100 ms and measures the pause and the recovery
    around the removal."""

    ramp_s: float  # the phase's fio ramp_time: the node goes ramp_s + at_s after the primary's word
    told_at_ms: float  # set by the primary's agent at run time: when the node took the word (epoch ms)


class PowerOff(TypedDict):
    """This node's removal (``workloads[].node_loss``), in its own plan: when the primary client
    says the measured fio phase of ``step`` starts (``POST /node-loss``), the node waits ``after_s``
    (the profile's ramp plus the loss's ``at_s``: fio's clock) and powers its machine off."""

    step: str  # the primary's step whose fio phase carries the node_loss
    after_s: float  # seconds after that phase's fio starts


class Phase(TypedDict, total=False):
    name: str
    engine: str
    fio: FioSpec
    node_loss: NodeLoss  # fio only, single client
    search: SearchSpec  # fio only: search the highest rate meeting a latency SLA
    dd: DdSpec
    command: CommandSpec
    drop_caches: bool  # sync and drop the page cache before this phase (root only)
    timeout_s: int


class Adaptive(TypedDict):
    """The step is one repetition of an adaptive series (``agent.adaptive``): the runner stops the
    series once its metric's 95 % half-width is under ``ci_pct`` % of the mean, or after ``max``."""

    series: str  # the steps of one series share it (workload.target[.variant])
    min: int  # always run this many
    max: int  # the plan holds this many; the rest are not run once the series stops
    ci_pct: float
    metric: str  # iops | bw_mibps | lat_p95_us | real_s (agent.adaptive.METRICS)
    phase: str  # the phase whose metric is judged


class Step(TypedDict, total=False):
    id: str
    workload: str
    profile: str
    variant: Dict[str, Any]
    repetition: int
    target: str
    phases: List[Phase]
    cleanup: bool  # remove what the step wrote under the target afterwards
    intent: str  # iops | throughput | latency | metadata | application
    adaptive: Adaptive  # absent: a fixed repetition, always run
    # Several clients at once: fio --client connect strings ("10.0.0.5", "10.0.0.5,8765"), in
    # order; the step's fio.json is then `fio --client=... --output-format=json+` output as is
    # (results.clients). Absent: a single-client step.
    clients: List[str]


class Prewarm(TypedDict, total=False):
    method: str
    targets: List[str]  # read before the workloads, in order (every block target when absent)
    block_size: str
    iodepth: int
    # Of targets: the cold-read check (agent.cold_read) instead of the read end to end.
    sampled: List[str]
    sample_bytes: int  # per device, at most an eighth of it
    sample_extents: int


class Plan(TypedDict, total=False):
    plan_version: int
    run_id: str
    config_id: str
    targets: List[TargetSpec]
    prewarm: Prewarm
    steps: List[Step]
    setup: Optional[str]
    teardown: Optional[str]
    fail_fast: bool
    # A config of several machines (protocol.topology): who this agent is and where the others are.
    # Absent: a single machine's plan.
    topology: Topology
    # A node's own removal (workloads[].node_loss): this node powers its machine off mid-step.
    power_off: PowerOff


class PlanError(ValueError):
    """A plan the agent cannot execute; ``problems`` lists every bad field."""

    def __init__(self, problems: List[str]) -> None:
        super().__init__("invalid agent plan:\n  " + "\n  ".join(problems))
        self.problems = problems


def _check_choice(problems: List[str], path: str, value: Any, allowed: tuple) -> None:  # type: ignore[type-arg]
    if value not in allowed:
        problems.append(f"{path}: {value!r} is not one of {', '.join(allowed)}")


def _check_id(problems: List[str], path: str, value: Any) -> None:
    if not isinstance(value, str) or not _ID.match(value):
        problems.append(f"{path}: {value!r} must be 1-128 characters of letters, digits and ._@=,+-")


def _check_positive_int(problems: List[str], path: str, value: Any, minimum: int = 1) -> None:
    if not isinstance(value, int) or isinstance(value, bool) or value < minimum:
        problems.append(f"{path}: {value!r} must be an integer >= {minimum}")


def _check_target(problems: List[str], path: str, target: Dict[str, Any]) -> None:
    _check_id(problems, f"{path}.id", target.get("id"))
    kind = target.get("kind")
    _check_choice(problems, f"{path}.kind", kind, TARGET_KINDS)
    if kind in BLOCK_KINDS:
        _check_choice(problems, f"{path}.filesystem", target.get("filesystem", "xfs"), FILESYSTEMS)
        layout = target.get("layout", "raid0")
        _check_choice(problems, f"{path}.layout", layout, ("raid0", "jbod"))
        if layout == "jbod" and target.get("filesystem", "xfs") != "raw":
            problems.append(f"{path}.layout: jbod (separate devices) needs filesystem raw")
    if kind == "ebs":
        volume_ids = target.get("volume_ids") or []
        emulate = target.get("emulate") or []
        if bool(volume_ids) == bool(emulate):
            problems.append(f"{path}: an ebs target needs exactly one of volume_ids or emulate")
        for i, emu in enumerate(emulate):
            if not isinstance(emu, dict):
                problems.append(f"{path}.emulate[{i}]: expected an object, got {type(emu).__name__}")
                continue
            _check_positive_int(
                problems, f"{path}.emulate[{i}].capacity_bytes", emu.get("capacity_bytes"), 1 << 20
            )
            limits = emu["limits"] if isinstance(emu.get("limits"), dict) else {}
            for key in ("iops", "mibps"):
                value = limits.get(key)
                if not isinstance(value, (int, float)) or value <= 0:
                    problems.append(f"{path}.emulate[{i}].limits.{key}: {value!r} must be a number > 0")
            emulator = emu.get("emulator", "auto")
            if emulator not in EMULATORS:
                problems.append(
                    f"{path}.emulate[{i}].emulator: {emulator!r}, one of {', '.join(EMULATORS)} expected"
                )
            wake = emu.get("cpu_wake", "hold")
            if wake not in CPU_WAKE:
                expected = ", ".join(CPU_WAKE)
                problems.append(f"{path}.emulate[{i}].cpu_wake: {wake!r}, one of {expected} expected")
            if "latency" in emu:
                try:
                    latency_modes(emu["latency"])
                except LatencySpecError as exc:
                    problems.append(f"{path}.emulate[{i}].{exc}")
            if "twin_program" in emu:
                program = emu["twin_program"]
                if (
                    not isinstance(program, str)
                    or not program.startswith("/")
                    or not program.endswith("/storagebench-twin")
                    or any(c in program for c in "\0\n\r")
                ):
                    problems.append(
                        f"{path}.emulate[{i}].twin_program: {program!r}, an absolute path to "
                        "storagebench-twin expected"
                    )
    if kind == "instance_store":
        _check_positive_int(problems, f"{path}.count", target.get("count", 0), 0)
    if kind in NETWORK_KINDS:
        for key in ("source", "fstype"):
            if not isinstance(target.get(key), str) or not target.get(key):
                problems.append(f"{path}.{key}: required for a {kind} target")
    if kind == "directory" and not (isinstance(target.get("path"), str) and target.get("path")):
        problems.append(f"{path}.path: required for a directory target")


def _check_phase(problems: List[str], path: str, phase: Dict[str, Any]) -> None:
    engine = phase.get("engine")
    _check_choice(problems, f"{path}.engine", engine, ENGINES)
    _check_id(problems, f"{path}.name", phase.get("name"))
    section = phase.get(engine) if engine in ENGINES else None
    if section is not None and not isinstance(section, dict):
        problems.append(f"{path}.{engine}: expected an object, got {type(section).__name__}")
        return
    if engine == "fio":
        fio = phase.get("fio") or {}
        jobs = fio.get("jobs")
        if not fio.get("job_file") and (not isinstance(jobs, list) or not jobs):
            problems.append(f"{path}.fio.jobs: at least one job (or a job_file) is required")
        for i, job in enumerate(jobs if isinstance(jobs, list) else []):
            well_formed = (
                isinstance(job, dict)
                and isinstance(job.get("name"), str)
                and bool(_JOB_NAME.match(job["name"]))
            )
            if not well_formed or not isinstance(job.get("options"), dict):
                problems.append(
                    f"{path}.fio.jobs[{i}]: expected {{name, options}}, the name in letters, digits and "
                    f"._:@=,+- (no newline or bracket), got {job!r}"
                )
    elif engine == "dd":
        dd = phase.get("dd") or {}
        _check_choice(problems, f"{path}.dd.direction", dd.get("direction"), ("read", "write"))
        for key in ("file", "bs"):
            if not isinstance(dd.get(key), str) or not dd.get(key):
                problems.append(f"{path}.dd.{key}: required (text)")
        _check_positive_int(problems, f"{path}.dd.count", dd.get("count"))
        _check_positive_int(problems, f"{path}.dd.parallel", dd.get("parallel", 1))
    elif engine == "command":
        command = phase.get("command") or {}
        if not isinstance(command.get("script"), str) or not command.get("script", "").strip():
            problems.append(f"{path}.command.script: a non-empty shell script is required")
        env = command.get("env", {})
        if not isinstance(env, dict) or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in env.items()
        ):
            problems.append(f"{path}.command.env: must map names to text values, got {env!r}")
        _check_positive_int(problems, f"{path}.command.parallel", command.get("parallel", 1))
        requires = command.get("requires", [])
        if not isinstance(requires, list) or not all(isinstance(r, str) and r for r in requires):
            problems.append(f"{path}.command.requires: must list program names and paths, got {requires!r}")
    if "search" in phase:
        _check_search(problems, f"{path}.search", phase)
    if "node_loss" in phase:
        _check_node_loss(problems, f"{path}.node_loss", phase)
    if "timeout_s" in phase:
        _check_positive_int(problems, f"{path}.timeout_s", phase["timeout_s"])


def _check_node_loss(problems: List[str], path: str, phase: Dict[str, Any]) -> None:
    loss = phase["node_loss"]
    if phase.get("engine") != "fio" or "search" in phase:
        problems.append(f"{path}: a node loss is measured on a fio phase's rate logs (not a search)")
    if not isinstance(loss, dict):
        problems.append(f"{path}: expected {{role, index, at_s}}, got {loss!r}")
        return
    _check_id(problems, f"{path}.role", loss.get("role"))
    _check_positive_int(problems, f"{path}.index", loss.get("index"), minimum=0)
    at_s = loss.get("at_s")
    if isinstance(at_s, bool) or not isinstance(at_s, (int, float)) or at_s <= 0:
        problems.append(f"{path}.at_s: seconds into fio's measured run, above 0, got {at_s!r}")


def _check_power_off(problems: List[str], power_off: Any, node: bool) -> None:
    if not node:
        problems.append("power_off: only a node powers itself off (topology.self not client 0)")
    if not isinstance(power_off, dict):
        problems.append(f"power_off: expected {{step, after_s}}, got {power_off!r}")
        return
    _check_id(problems, "power_off.step", power_off.get("step"))
    after_s = power_off.get("after_s")
    if isinstance(after_s, bool) or not isinstance(after_s, (int, float)) or after_s <= 0:
        problems.append(f"power_off.after_s: seconds after the phase's fio starts, above 0, got {after_s!r}")


def _check_number(problems: List[str], path: str, value: Any, low: float, high: float, what: str) -> None:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not low < value < high:
        problems.append(f"{path}: {value!r} must be {what}")


def _check_search(problems: List[str], path: str, phase: Dict[str, Any]) -> None:
    search = phase["search"]
    if not isinstance(search, dict):
        problems.append(f"{path}: expected an object, got {type(search).__name__}")
        return
    if phase.get("engine") != "fio" or (phase.get("fio") or {}).get("job_file"):
        problems.append(f"{path}: a search runs fio jobs of the plan (engine fio, no job_file)")
    percentile = search.get("percentile")
    _check_number(problems, f"{path}.percentile", percentile, 0, 100, "a percentile in (0, 100)")
    _check_number(problems, f"{path}.target_us", search.get("target_us"), 0, math.inf, "microseconds > 0")
    _check_positive_int(problems, f"{path}.low_iops", search.get("low_iops"))
    _check_positive_int(problems, f"{path}.high_iops", search.get("high_iops"))
    low, high = search.get("low_iops"), search.get("high_iops")
    if isinstance(low, int) and isinstance(high, int) and not low < high:
        problems.append(f"{path}.high_iops: {high!r} must be above low_iops ({low!r})")
    _check_number(problems, f"{path}.tolerance", search.get("tolerance"), 0, 1, "a fraction in (0, 1)")
    _check_positive_int(problems, f"{path}.max_probes", search.get("max_probes"), 2)
    if "min_delivered" in search:
        _check_number(
            problems, f"{path}.min_delivered", search["min_delivered"], 0, 1.0001, "a fraction in (0, 1]"
        )


def _check_sample(problems: List[str], prewarm: Dict[str, Any]) -> None:
    if "sample_bytes" in prewarm:  # absent: the agent's default (protocol.sample_layout)
        _check_positive_int(problems, "prewarm.sample_bytes", prewarm["sample_bytes"], 1 << 20)
    if "sample_extents" in prewarm:
        _check_positive_int(problems, "prewarm.sample_extents", prewarm["sample_extents"])
    sampled = prewarm.get("sampled")
    if sampled is None:
        return
    if not isinstance(sampled, list):
        problems.append(f"prewarm.sampled: expected a list of target ids, got {type(sampled).__name__}")
        return
    read = prewarm.get("targets") or []
    for i, target_id in enumerate(sampled):
        if target_id not in read:
            problems.append(f"prewarm.sampled[{i}]: {target_id!r} is not one of prewarm.targets")


ADAPTIVE_METRICS = ("iops", "bw_mibps", "lat_p95_us", "real_s")


def _check_adaptive(problems: List[str], path: str, step: Dict[str, Any], policies: Dict[str, Any]) -> None:
    """An adaptive step's policy is whole, sane, names one of its phases and agrees with its series'."""
    policy = step["adaptive"]
    if not isinstance(policy, dict):
        problems.append(f"{path}: expected an object, got {type(policy).__name__}")
        return
    _check_id(problems, f"{path}.series", policy.get("series"))
    _check_positive_int(problems, f"{path}.min", policy.get("min"), 2)
    _check_positive_int(problems, f"{path}.max", policy.get("max"), 2)
    low, high = policy.get("min"), policy.get("max")
    if isinstance(low, int) and isinstance(high, int) and low > high:
        problems.append(f"{path}.min: {low!r} must be at most max ({high!r})")
    _check_number(problems, f"{path}.ci_pct", policy.get("ci_pct"), 0, 100.0001, "a percentage in (0, 100]")
    _check_choice(problems, f"{path}.metric", policy.get("metric"), ADAPTIVE_METRICS)
    phases = [p.get("name") for p in step.get("phases") or [] if isinstance(p, dict)]
    if policy.get("phase") not in phases:
        names = ", ".join(map(str, phases))
        problems.append(f"{path}.phase: {policy.get('phase')!r} names no phase of the step ({names})")
    repetition = step.get("repetition")
    if isinstance(repetition, int) and isinstance(high, int) and repetition > high:
        problems.append(f"{path}: repetition {repetition} is past the series' max ({high})")
    first = policies.setdefault(str(policy.get("series")), policy)
    if first is not policy and first != policy:
        series = policy.get("series")
        problems.append(f"{path}: differs from the policy of series {series!r} in an earlier step")


def _check_steps(problems: List[str], steps: Any, target_ids: set, unprepared: set) -> None:  # type: ignore[type-arg]
    if not isinstance(steps, list):
        problems.append("steps: expected a list")
        return
    step_ids = set()
    policies: Dict[str, Any] = {}
    for i, step in enumerate(steps):
        path = f"steps[{i}]"
        if not isinstance(step, dict):
            problems.append(f"{path}: expected an object")
            continue
        _check_id(problems, f"{path}.id", step.get("id"))
        if step.get("id") in step_ids:
            problems.append(f"{path}.id: {step.get('id')!r} is used twice")
        step_ids.add(step.get("id"))
        if step.get("target") not in target_ids:
            problems.append(f"{path}.target: {step.get('target')!r} names no target")
        elif step.get("target") in unprepared:
            problems.append(
                f"{path}.target: {step.get('target')!r} has prepare false: no workload runs on it"
            )
        _check_positive_int(problems, f"{path}.repetition", step.get("repetition"))
        if "adaptive" in step:
            _check_adaptive(problems, f"{path}.adaptive", step, policies)
        if "clients" in step:
            check_clients(problems, f"{path}.clients", step["clients"])
            for j, phase in enumerate(step.get("phases") or []):
                if isinstance(phase, dict) and "search" in phase:
                    problems.append(
                        f"{path}.phases[{j}].search: a latency search runs on one client, "
                        "the step has clients"
                    )
        phases = step.get("phases")
        if not isinstance(phases, list) or not phases:
            problems.append(f"{path}.phases: at least one phase is required")
            continue
        for j, phase in enumerate(phases):
            _check_phase(problems, f"{path}.phases[{j}]", phase if isinstance(phase, dict) else {})


def _primary_or_unknown(topology: Any) -> bool:
    """Whether the plan is the primary client's (or too malformed to tell: check_topology names why)."""
    try:
        return is_primary(topology)
    except (TypeError, KeyError):
        return True


def check_plan(plan: Any) -> Plan:
    """Validate a plan document; raise PlanError naming every bad field."""
    if not isinstance(plan, dict):
        raise PlanError([f"plan: expected a JSON object, got {type(plan).__name__}"])
    problems: List[str] = []
    if plan.get("plan_version") != PLAN_VERSION:
        problems.append(
            f"plan_version: {plan.get('plan_version')!r} is not supported (this agent reads {PLAN_VERSION})"
        )
    _check_id(problems, "run_id", plan.get("run_id"))
    _check_id(problems, "config_id", plan.get("config_id"))
    node = "topology" in plan and not _primary_or_unknown(plan["topology"])
    if "topology" in plan:
        check_topology(problems, plan["topology"])
    targets = plan.get("targets")
    if node and targets is None:
        targets = []
    if not isinstance(targets, list) or (not targets and not node):
        problems.append("targets: at least one target is required")
        targets = []
    target_ids = set()
    unprepared = {t.get("id") for t in targets if isinstance(t, dict) and t.get("prepare") is False}
    for i, target in enumerate(targets):
        if not isinstance(target, dict):
            problems.append(f"targets[{i}]: expected an object")
            continue
        _check_target(problems, f"targets[{i}]", target)
        if target.get("id") in target_ids:
            problems.append(f"targets[{i}].id: {target.get('id')!r} is used twice")
        target_ids.add(target.get("id"))
    prewarm = plan.get("prewarm") or {"method": "none"}
    if not isinstance(prewarm, dict):
        problems.append(f"prewarm: expected an object, got {type(prewarm).__name__}")
        prewarm = {"method": "none"}
    _check_choice(problems, "prewarm.method", prewarm.get("method"), PREWARM_METHODS)
    for i, target_id in enumerate(prewarm.get("targets") or []):
        if target_id not in target_ids:
            problems.append(f"prewarm.targets[{i}]: {target_id!r} names no target")
    _check_sample(problems, prewarm)
    _check_steps(problems, plan.get("steps"), target_ids, unprepared)
    if node and plan.get("steps"):
        problems.append(
            "steps: a node (topology.self not client 0) runs no steps; the primary client runs them"
        )
    if "power_off" in plan:
        _check_power_off(problems, plan["power_off"], node)
    if problems:
        raise PlanError(problems)
    return plan  # type: ignore[return-value]

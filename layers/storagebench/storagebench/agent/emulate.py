"""Emulated EBS volumes: an EBS twin where it works, a loop device under a cgroup throttle where not.

The twin (``agent.twin``, the default): sparse file -> FUSE file served by a process that admits
every I/O at the type's envelope and answers it after the catalog's service time -> loop device
with direct I/O. Its latency is the model's, queueing included (Little's law at the limit).

The throttle (the fallback, labelled ``emulator:throttle``): sparse file -> loop device -> cgroup
throttle at the envelope. It holds the limits but its latency is an artefact of the kernel's
accounting slices. What makes it faithful to the limits:

* the loop device uses direct I/O on its backing file (no second page cache) and caps its
  request size at the volume type's I/O accounting unit (256 KiB on SSD, 1 MiB on HDD), so a
  1 MiB read costs 4 operations as it does on gp2/gp3/io1/io2;
* limits are combined read + write, as EBS's are: the governor measures the read share of
  recent I/O and splits the budget to match, rewriting the kernel limits only when the mix has
  measurably moved (every rewrite restarts the kernel's accounting slice, so each one costs
  accuracy);
* gp2 I/O credits and st1/sc1 throughput credits are a bucket that starts full, drains at the
  rate of I/O above baseline and refills at baseline; when it empties the ceiling drops from
  burst to baseline, producing the knee the analysis then has to find. Buckets are scaled down
  by the planner so the knee comes in about a minute instead of half an hour.
"""

from __future__ import annotations

import contextlib
import math
import os
import threading
import time
from typing import Callable, Dict, List, Optional, Tuple

from storagebench.agent.log import utc_now
from storagebench.agent.proc import CommandError, run
from storagebench.agent.throttle import Served, Throttle, ThrottleError, create_throttle
from storagebench.agent.twin.fuse import MAX_IO, FuseError
from storagebench.agent.twin.loop_record import remove_record, write_record
from storagebench.agent.twin.model import RESTORE_SHARE
from storagebench.agent.twin.volume import TwinError, TwinVolume, native_problem, twin_unavailable
from storagebench.agent.twin.wake import WakeLatencyHold
from storagebench.protocol.plan import EMULATORS, Emulation, EmulationLimits, Phase

MIB = 1 << 20
TWIN_REQUEST_KIB = MAX_IO // 1024  # the largest request a twin takes whole
FLOOR_SHARE = 0.10  # an idle direction keeps this share, so a change of mix is seen within ~0.1 s
MIN_SAMPLE_IOS = 8  # with the variance floor below, 8 reads of 8 from an even mix is already 4.5 sigma
REGIME_CHANGE = 0.1  # a move of the read share this large starts a fresh sample
MINORITY_SLACK = 0.05  # extra share for the less frequent direction (see _Split._fractions)


class EmulationError(RuntimeError):
    """An emulated volume could not be created or throttled."""


# fio options that make the client pause on purpose: a twin following the host's path would
# take those pauses for path (native/twin/src/tracking.rs), so such phases are not tracked.
PAUSING_OPTIONS = frozenset(
    {
        "thinktime",
        "thinktime_blocks",
        "thinktime_spin",
        "thinktime_iotime",
        "rate",
        "rate_min",
        "rate_iops",
        "rate_iops_min",
        "rate_process",
        "rate_cycle",
        "flow",
        "flow_id",
        "flow_sleep",
    }
)


def trackable(phase: Phase) -> bool:
    """Whether a phase's client never pauses on purpose: fio jobs of ours, no rate or think time,
    no latency search (which sets rate_iops), no user job file (whose options are not known)."""
    if phase.get("engine") != "fio" or "search" in phase:
        return False
    spec = phase.get("fio") or {}
    if spec.get("job_file"):
        return False
    options = [spec.get("global_options") or {}] + [
        job.get("options") or {} for job in spec.get("jobs") or []
    ]
    return not any(PAUSING_OPTIONS.intersection(each) for each in options)


class LoopDevice:
    def __init__(
        self,
        backing_file: str,
        path: str,
        major_minor: str,
        direct_io: bool,
        twin: Optional[TwinVolume] = None,
    ) -> None:
        self.backing_file = backing_file
        self.path = path
        self.major_minor = major_minor
        self.direct_io = direct_io
        self.twin = twin

    @property
    def emulator(self) -> str:
        return "twin" if self.twin is not None else "throttle"

    @property
    def name(self) -> str:
        return os.path.basename(self.path)


def create_loop(backing_file: str, capacity_bytes: int, io_size_kib: int, sysfs: str = "/sys") -> LoopDevice:
    """A loop device over a new sparse file, with direct I/O and EBS's request size (throttle)."""
    if os.path.exists(backing_file):
        raise EmulationError(f"{backing_file} already exists; refusing to reuse another run's volume")
    with open(backing_file, "wb") as handle:
        handle.truncate(capacity_bytes)
    try:
        path, major_minor, direct_io = _attach(backing_file, io_size_kib, sysfs)
    except EmulationError:
        os.unlink(backing_file)
        raise
    return LoopDevice(backing_file, path, major_minor, direct_io)


def create_twin_loop(
    backing_file: str, spec: Emulation, sysfs: str = "/sys", program: Optional[str] = None
) -> LoopDevice:
    """A loop device with direct I/O over a twin's FUSE file, calibrated and not yet modelling;
    served by the compiled twin ``program``, or by the Python twin when None."""
    latency = spec.get("latency")
    if not latency:
        raise EmulationError("the plan carries no latency model for this volume (catalog latency)")
    io_size = int(spec["limits"].get("io_size_kib") or 256)
    twin = TwinVolume(
        backing_file,
        backing_file + ".twin",
        int(spec["capacity_bytes"]),
        {"limits": dict(spec["limits"]), "latency": dict(latency)},
        program=program,
    )
    try:
        twin.start()  # cleans up after itself when the twin does not come up
    except (TwinError, OSError) as exc:
        raise EmulationError(str(exc)) from None
    path = None
    try:
        # The twin's model splits an I/O into the type's units itself: a 1 MiB I/O reaches it
        # whole (one request, one reply) instead of as four requests each woken for.
        path, major_minor, direct_io = _attach(twin.volume_path, max(io_size, TWIN_REQUEST_KIB), sysfs)
        write_record(backing_file, path, twin.volume_path)  # sweep finds it even once the mount is gone
        if not direct_io:
            # Buffered loop I/O is served one request at a time: no queue could build up.
            raise EmulationError("the loop device refused direct I/O on the twin's file")
        twin.calibrate(path)
    except (EmulationError, TwinError, CommandError, OSError) as exc:
        if path is not None:
            run(["losetup", "--detach", path], check=False)
            remove_record(backing_file)
        with contextlib.suppress(TwinError, FuseError, OSError):
            twin.stop()  # the failure above is the one to report
        raise EmulationError(str(exc)) from None
    return LoopDevice(backing_file, path, major_minor, direct_io, twin)


def _attach(file: str, io_size_kib: int, sysfs: str) -> Tuple[str, str, bool]:
    try:
        path = run(["losetup", "--find", "--show", "--direct-io=on", file]).stdout.strip()
    except CommandError as exc:
        raise EmulationError(f"cannot create a loop device: {exc}") from None
    name = os.path.basename(path)
    queue = os.path.join(sysfs, "block", name, "queue")
    with open(os.path.join(sysfs, "block", name, "dev"), encoding="ascii") as handle:
        major_minor = handle.read().strip()
    for setting, value in (("max_sectors_kb", str(io_size_kib)), ("scheduler", "none")):
        try:
            with open(os.path.join(queue, setting), "w", encoding="ascii") as handle:
                handle.write(value)
        except OSError:
            pass  # older kernels: the limits still hold; the I/O unit is then the kernel's
    direct_io = False
    try:
        with open(os.path.join(sysfs, "block", name, "loop", "dio"), encoding="ascii") as handle:
            direct_io = handle.read().strip() == "1"
    except OSError:
        pass
    return path, major_minor, direct_io


def destroy_loop(loop: LoopDevice) -> None:
    run(["losetup", "--detach", loop.path])
    if loop.twin is not None:
        remove_record(loop.backing_file)
        try:
            loop.twin.stop()
        except (TwinError, FuseError) as exc:
            raise EmulationError(f"twin of {loop.path}: {exc}") from None
        return
    if os.path.exists(loop.backing_file):
        os.unlink(loop.backing_file)


class _Split:
    """Read share of a combined budget, following the workload's mix with few kernel rewrites.

    fio (like most load generators) issues reads and writes in a fixed proportion, so the
    served counters estimate the demand mix without bias. Two rules move the split:

    * an abrupt change of mix: the newest tick alone differs from the split by more than
      4 sigma of its sampling noise (seen within one tick, almost never triggered by noise);
    * accuracy: the estimate since the last abrupt change (up to ``WINDOW_IOS`` I/Os, then
      it slides) shows, beyond its own sampling noise, that the current split would deliver
      more than ``MAX_ERROR`` off the ceiling. The error is judged on what it costs the total,
      so a small mistake on a minority direction (12 % reads) is corrected even though the
      shares look close.
    """

    WINDOW_IOS = 200_000
    MAX_ERROR = 0.005

    def __init__(self) -> None:
        self.read_share = 0.5
        self._base = (0, 0, 0)
        self._last = (0, 0, 0)
        self.changes = 0

    def _fractions(self) -> Tuple[float, float]:
        """Read and write shares of the ceiling. The minority direction gets MINORITY_SLACK on
        top: its share is the hard one to estimate (few samples) and the costly one to get
        wrong (an error of 0.005 on a 12 % share loses 4 % of the total), so the error is
        left to the majority direction, where the same 0.005 moves the total by under 1 %."""
        reads, writes = self.read_share, 1 - self.read_share
        if reads < writes:
            reads *= 1 + MINORITY_SLACK
        else:
            writes *= 1 + MINORITY_SLACK
        return max(FLOOR_SHARE, reads), max(FLOOR_SHARE, writes)

    def delivered(self, demand_share: float) -> float:
        """Fraction of the ceiling a workload with this read share gets from the current split."""
        reads, writes = self._fractions()
        if demand_share <= 0:
            return writes
        if demand_share >= 1:
            return reads
        return min(reads / demand_share, writes / (1 - demand_share))

    def observe(self, read: int, write: int, ios: int) -> bool:
        """Cumulative counters of this dimension, and I/O counts for the sample size."""
        last_read, last_write, last_ios = self._last
        self._last = (read, write, ios)
        tick_read, tick_write, tick_ios = read - last_read, write - last_write, ios - last_ios
        if tick_ios >= MIN_SAMPLE_IOS and tick_read + tick_write > 0:
            share = tick_read / (tick_read + tick_write)
            noise = 4.0 * math.sqrt(max(share * (1 - share), 0.0025) / tick_ios)
            if abs(share - self.read_share) > max(0.02, noise):
                return self._move(share, rebase=(read, write, ios))
        base_read, base_write, base_ios = self._base
        sample_read, sample_write, sample_ios = read - base_read, write - base_write, ios - base_ios
        if sample_ios >= MIN_SAMPLE_IOS and sample_read + sample_write > 0:
            estimate = sample_read / (sample_read + sample_write)
            # Judge the split against the most favourable mix the sample cannot rule out (the
            # estimate moved 3 sigma towards the split): noise never moves it, a real
            # mismatch does once enough I/O has been seen.
            sigma = math.sqrt(max(estimate * (1 - estimate), 0.0025) / sample_ios)
            gap = estimate - self.read_share
            plausible = self.read_share if abs(gap) <= 3 * sigma else estimate - math.copysign(3 * sigma, gap)
            if abs(self.delivered(plausible) - 1) > self.MAX_ERROR:
                # A new regime starts a fresh sample; a refinement keeps accumulating.
                fresh = abs(gap) > REGIME_CHANGE
                return self._move(estimate, rebase=(read, write, ios) if fresh else None)
        if sample_ios > self.WINDOW_IOS:
            self._base = (read, write, ios)
        return False

    def _move(self, share: float, rebase: Optional[Tuple[int, int, int]]) -> bool:
        self.read_share = share
        if rebase is not None:
            self._base = rebase
        self.changes += 1
        return True

    def parts(self, ceiling: float) -> Tuple[float, float]:
        """Kernel limits for a ceiling: never below 1 (0 would remove the limit)."""
        reads, writes = self._fractions()
        return max(1.0, ceiling * reads), max(1.0, ceiling * writes)


class DeviceBudget:
    """The governor's state for one emulated device."""

    def __init__(self, device: LoopDevice, limits: EmulationLimits) -> None:
        self.device = device
        self.limits = limits
        self.capacity = float(limits.get("credit_capacity", 0) or 0)
        self.credits = self.capacity
        self.bursting = self.capacity > 0
        self.ios = _Split()
        self.bytes = _Split()
        self.last: Optional[Served] = None
        self.applied: Optional[Tuple[int, int, int, int]] = None

    def ceilings(self) -> Tuple[float, float]:
        limits = self.limits
        if self.bursting:
            return (
                float(limits.get("burst_iops") or limits["iops"]),
                float(limits.get("burst_mibps") or limits["mibps"]),
            )
        return float(limits["iops"]), float(limits["mibps"])

    def kernel_limits(self) -> Tuple[int, int, int, int]:
        iops, mibps = self.ceilings()
        riops, wiops = self.ios.parts(iops)
        rbps, wbps = self.bytes.parts(mibps * MIB)
        return round(riops), round(wiops), round(rbps), round(wbps)


class Governor:
    """Keeps each emulated device at its combined envelope; runs in a background thread."""

    def __init__(
        self,
        throttle: Throttle,
        budgets: List[DeviceBudget],
        period_s: float = 0.25,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.throttle = throttle
        self.budgets = budgets
        self.period_s = period_s
        self.clock = clock
        self.events: List[Dict[str, object]] = []
        self.errors: List[str] = []
        self._stop = threading.Event()
        self._thread: Optional[threading.Thread] = None
        self._started = clock()
        self._last_tick = self._started
        self.ticks = 0

    def apply(self, budget: DeviceBudget, force: bool = False) -> None:
        limits = budget.kernel_limits()
        if force or limits != budget.applied:
            self.throttle.set_limits(budget.device.major_minor, *limits)
            budget.applied = limits

    def start(self) -> None:
        for budget in self.budgets:
            self.apply(budget, force=True)
        self._started = self._last_tick = self.clock()
        self._thread = threading.Thread(target=self._loop, name="throttle-governor", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def _loop(self) -> None:
        while not self._stop.wait(self.period_s):
            try:
                self.tick(self.throttle.served())
            except (OSError, ThrottleError) as exc:  # keep measuring; the manifest reports it
                if len(self.errors) < 20:
                    self.errors.append(str(exc))

    def tick(self, served: Dict[str, Served]) -> None:
        now = self.clock()
        elapsed = now - self._last_tick
        self._last_tick = now
        self.ticks += 1
        for budget in self.budgets:
            counters = served.get(budget.device.major_minor)
            if counters is None:
                continue
            previous = budget.last or Served()
            budget.last = counters
            ios = counters.read_ios + counters.write_ios
            budget.ios.observe(counters.read_ios, counters.write_ios, ios)
            budget.bytes.observe(counters.read_bytes, counters.write_bytes, ios)
            if budget.capacity > 0:
                self._spend_credits(budget, previous, counters, elapsed, now)
            self.apply(budget)

    def _spend_credits(
        self, budget: DeviceBudget, before: Served, after: Served, elapsed: float, now: float
    ) -> None:
        limits = budget.limits
        if limits.get("credit_unit", "io") == "mib":
            spent = ((after.read_bytes + after.write_bytes) - (before.read_bytes + before.write_bytes)) / MIB
        else:
            spent = float((after.read_ios + after.write_ios) - (before.read_ios + before.write_ios))
        earned = float(limits.get("credit_refill_per_s", 0) or 0) * elapsed
        # At baseline the bucket hovers at empty; it never owes credits (AWS: balance >= 0).
        budget.credits = max(0.0, min(budget.capacity, budget.credits + earned - spent))
        if budget.bursting and budget.credits <= 0:
            budget.bursting = False
            budget.credits = 0.0
            self._event(budget, "burst-exhausted", now)
        elif not budget.bursting and budget.credits >= RESTORE_SHARE * budget.capacity:
            budget.bursting = True
            self._event(budget, "burst-restored", now)

    def _event(self, budget: DeviceBudget, name: str, now: float) -> None:
        iops, mibps = budget.ceilings()
        self.events.append(
            {
                "at": utc_now(),
                "elapsed_s": round(now - self._started, 3),
                "device": budget.device.path,
                "event": name,
                "credits": round(budget.credits, 1),
                "ceiling_iops": iops,
                "ceiling_mibps": mibps,
            }
        )

    def summary(self) -> List[Dict[str, object]]:
        return [
            {
                "device": b.device.path,
                "split_changes_ios": b.ios.changes,
                "split_changes_bytes": b.bytes.changes,
                "read_share": round(b.ios.read_share, 4),
                "credits_left": round(b.credits, 1) if b.capacity else None,
                "bursting": b.bursting if b.capacity else None,
            }
            for b in self.budgets
        ]


CGROUP_PREFIX = "storagebench:"


def cgroup_name(run_id: str, config_id: str) -> str:
    return f"{CGROUP_PREFIX}{run_id}:{config_id}"


class EmulatedFleet:
    """Every emulated volume of one agent run: twins, or loop devices sharing one throttle cgroup."""

    def __init__(self, backing_dir: str, cgroup_name: str) -> None:
        self.backing_dir = backing_dir
        self.cgroup_name = cgroup_name
        self.fallback_reason: Optional[str] = None  # why "auto" fell back to the throttle
        self.python_twin_reason: Optional[str] = None  # why twins run on the Python data path
        self.loops: List[LoopDevice] = []
        self.specs: List[Emulation] = []
        self.throttle: Optional[Throttle] = None
        self.governor: Optional[Governor] = None
        self.wake: Optional[WakeLatencyHold] = None  # the CPUs kept awake while twins serve

    def add(self, name: str, spec: Emulation) -> LoopDevice:
        """A loop device for one volume, on the emulator its spec asks for (``auto`` by default)."""
        os.makedirs(self.backing_dir, exist_ok=True)
        backing_file = os.path.join(self.backing_dir, f"{name}.img")
        choice = spec.get("emulator", "auto")
        if choice not in EMULATORS:
            raise EmulationError(f"emulator {choice!r}: one of {', '.join(EMULATORS)} expected")
        loop: Optional[LoopDevice] = None
        if choice != "throttle" and self._twin_possible(spec, choice):
            program = spec.get("twin_program")
            problem = native_problem(program)
            if problem is not None:
                self.python_twin_reason = problem
            try:
                loop = create_twin_loop(backing_file, spec, program=None if problem else program)
                if self.wake is None and spec.get("cpu_wake", "hold") == "hold":
                    self.wake = WakeLatencyHold()  # twins wake on time only on an awake CPU (twin.wake)
            except EmulationError as exc:
                if choice == "twin":
                    raise EmulationError(f"EBS twin: {exc}") from None
                self.fallback_reason = f"EBS twin failed: {exc}"
        if loop is None:
            io_size = int(spec["limits"].get("io_size_kib") or 256)
            loop = create_loop(backing_file, int(spec["capacity_bytes"]), io_size)
        self.loops.append(loop)
        self.specs.append(spec)
        return loop

    def _twin_possible(self, spec: Emulation, choice: str) -> bool:
        """Whether to try a twin; "auto" stops trying after the first failure on this machine."""
        if choice == "auto" and self.fallback_reason is not None:
            return False
        reason = twin_unavailable() or (None if spec.get("latency") else "the plan carries no latency model")
        if reason is None:
            return True
        if choice == "twin":
            raise EmulationError(f"EBS twin: {reason}")
        self.fallback_reason = reason
        return False

    def start(self) -> None:
        """Limits on from here: file-system creation is not part of any measurement."""
        throttled = [(loop, spec) for loop, spec in zip(self.loops, self.specs) if loop.twin is None]
        for loop in self.loops:
            if loop.twin is not None:
                try:
                    loop.twin.command("model")
                except TwinError as exc:
                    raise EmulationError(str(exc)) from None
        if not self.loops:
            return
        # The run's cgroup also names its processes (fio runs in it) for sweep, which stops them
        # when the agent was killed: twins need it for that alone, with no limit set.
        try:
            self.throttle = create_throttle(self.cgroup_name)
        except ThrottleError as exc:
            if throttled:
                raise EmulationError(str(exc)) from None
            return  # twins without a cgroup: a killed agent's fio ends on EIO once its twin goes
        if not throttled:
            return
        budgets = [DeviceBudget(loop, spec["limits"]) for loop, spec in throttled]
        self.governor = Governor(self.throttle, budgets)
        self.governor.start()

    def track(self, on: bool) -> bool:
        """Twins follow the host's I/O path while ``on`` (native/twin/src/tracking.rs); whether
        any twin was told. Only for phases whose client never pauses on purpose (``trackable``)."""
        told = False
        for loop in self.loops:
            if loop.twin is not None:
                try:
                    loop.twin.command("track on" if on else "track off")
                except TwinError as exc:
                    raise EmulationError(str(exc)) from None
                told = True
        return told

    @property
    def procs_file(self) -> Optional[str]:
        return self.throttle.procs_file if self.throttle is not None else None

    def twin_reports(self) -> List[Dict[str, object]]:
        """What each twin reported when it stopped (counters, CPU, burst events)."""
        reports: List[Dict[str, object]] = []
        for loop in self.loops:
            if loop.twin is not None:
                reports.append(
                    {
                        "device": loop.path,
                        "implementation": loop.twin.implementation,
                        "overhead_s": loop.twin.overhead_s,
                        "state": loop.twin.state or {},
                    }
                )
        return reports

    def stop(self) -> List[str]:
        """Stop throttling and remove the cgroup; returns what could not be undone."""
        problems: List[str] = []
        if self.wake is not None:
            self.wake.release()  # the twins have stopped (the targets' teardown)
        if self.governor is not None:
            self.governor.stop()
        if self.throttle is not None:
            try:
                self.throttle.remove()
            except ThrottleError as exc:
                problems.append(str(exc))
        return problems

"""How long a process waited for a CPU: the run queue delay the kernel keeps per task
(``/proc/<pid>/task/<tid>/schedstat``, second field: ns runnable but not running), and the time
the hypervisor kept this virtual machine's CPUs from running at all (steal, ``/proc/stat``).

A start-up deadline in wall time is a guess at this machine's load: DynamoDB Local's JVM needs
about 6 s of CPU to answer, which takes 6 s on a quiet core and minutes beside a full test suite
and a CPU hog. ``ProgressClock`` counts the wall time a process did not spend waiting for a CPU,
so a deadline on it means the same on a quiet and on a busy machine.

Steal is the other half of that wait, and the guest's scheduler cannot see it: a task "running"
on a vCPU the host has descheduled makes no progress and queues no delay. On this VM it was 12 %
of the CPUs' time since boot and 27 % over a 10 s window (2026-12-08); with one emulated volume
at work beside it, a timed 200 us sleep then woke 51 us late at the median and 1.5-3.5 ms late at
p95-p99 under SCHED_FIFO, where the guest's scheduler lets nothing else run first.
"""

from __future__ import annotations

import time
from pathlib import Path

PROC = Path("/proc")


def schedstat_ns(pid: int) -> dict[int, tuple[int, int]]:
    """Each live task of ``pid``: (ns on a CPU, ns waiting for one) so far; {} once it is gone.
    The time on a CPU excludes what the hypervisor stole meanwhile (the kernel's task clock)."""
    stats: dict[int, tuple[int, int]] = {}
    try:
        tasks = list((PROC / str(pid) / "task").iterdir())
    except OSError:
        return stats
    for task in tasks:
        try:
            fields = (task / "schedstat").read_text().split()
            stats[int(task.name)] = (int(fields[0]), int(fields[1]))
        except (OSError, IndexError, ValueError):
            continue
    return stats


def run_delay_ns(pid: int) -> dict[int, int]:
    """Each live task of ``pid``: its run queue delay so far (ns); {} when the process is gone."""
    return {tid: waited for tid, (_, waited) in schedstat_ns(pid).items()}


def cpu_ticks() -> list[tuple[int, int]]:
    """Each CPU's (busy, stolen) clock ticks so far (``/proc/stat`` ``cpuN`` lines): busy is what
    the guest ran (user, nice, system, irq, softirq), stolen the time its vCPU wanted to run while
    the hypervisor ran something else (steal, kept from the hypervisor's clock). [] without it."""
    ticks: list[tuple[int, int]] = []
    try:
        lines = (PROC / "stat").read_text().splitlines()
    except OSError:
        return ticks
    for line in lines:
        fields = line.split()
        if fields and fields[0].startswith("cpu") and fields[0] != "cpu" and len(fields) > 8:
            user, nice, system, _idle, _iowait, irq, softirq, steal = map(int, fields[1:9])
            ticks.append((user + nice + system + irq + softirq, steal))
    return ticks


class HostSteal:
    """The share of the time the most-stolen vCPU wanted to run that the hypervisor took, over a
    window: steal / (busy + steal) per CPU, the largest. A task on a CPU for ``t`` s of its own
    (its clock excludes steal) so lost about ``t x share / (1 - share)`` more (:meth:`stolen_s`).
    Per CPU and not averaged: an idle vCPU accrues no steal, and would hide a busy one's.
    """

    def __init__(self) -> None:
        self.first = cpu_ticks()
        self.last = list(self.first)

    def sample(self) -> None:
        self.last = cpu_ticks()

    def share(self) -> float:
        shares = [
            (stolen - stolen0) / ((busy - busy0) + (stolen - stolen0))
            for (busy0, stolen0), (busy, stolen) in zip(self.first, self.last, strict=False)
            if (busy - busy0) + (stolen - stolen0) > 0
        ]
        return min(0.95, max(shares, default=0.0))  # 0.95: a vCPU that never ran says nothing

    def stolen_s(self, on_cpu_s: float) -> float:
        """What the hypervisor took from a task that ran ``on_cpu_s`` in the window (s)."""
        share = self.share()
        return on_cpu_s * share / (1.0 - share)


class ProgressClock:
    """Wall time since ``pid`` started, less its most-delayed task's wait for a CPU meanwhile and
    the hypervisor's steal of the most-stolen CPU (what it lost before its run queue wait).

    The most-delayed task stands for the process's critical path (a JVM's main thread, say): the
    tasks run in parallel, so their waits do not add up. A task born later counts from 0, its
    delay at birth. Read it at least as often as the deadline's resolution: a task that ended
    between reads keeps the delay of the last read.
    """

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.started = time.monotonic()
        self.first = schedstat_ns(pid)
        self.waited: dict[int, int] = {}
        self.ran: dict[int, int] = {}
        self.steal = HostSteal()

    def wall_s(self) -> float:
        return time.monotonic() - self.started

    def _read(self) -> None:
        for tid, (ran, delay) in schedstat_ns(self.pid).items():
            ran0, delay0 = self.first.get(tid, (0, 0))
            self.ran[tid], self.waited[tid] = ran - ran0, delay - delay0
        self.steal.sample()

    def waited_s(self) -> float:
        """The most-delayed task's wait for a CPU since the start (s)."""
        self._read()
        return max(self.waited.values(), default=0) / 1e9

    def stolen_s(self) -> float:
        """What the hypervisor took from the task that ran longest since the start (s)."""
        self._read()
        return self.steal.stolen_s(max(self.ran.values(), default=0) / 1e9)

    def progress_s(self) -> float:
        """The wall time the process had a CPU whenever it wanted one (s)."""
        waited = self.waited_s() + self.stolen_s()
        return max(0.0, self.wall_s() - waited)

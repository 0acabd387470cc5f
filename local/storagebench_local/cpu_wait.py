"""How long a process waited for a CPU: the run queue delay the kernel keeps per task
(``/proc/<pid>/task/<tid>/schedstat``, second field: ns runnable but not running).

A start-up deadline in wall time is a guess at this machine's load: DynamoDB Local's JVM needs
about 6 s of CPU to answer, which takes 6 s on a quiet core and minutes beside a full test suite
and a CPU hog. ``ProgressClock`` counts the wall time a process did not spend waiting for a CPU,
so a deadline on it means the same on a quiet and on a busy machine.
"""

from __future__ import annotations

import time
from pathlib import Path

PROC = Path("/proc")


def run_delay_ns(pid: int) -> dict[int, int]:
    """Each live task of ``pid``: its run queue delay so far (ns); {} when the process is gone."""
    delays: dict[int, int] = {}
    try:
        tasks = list((PROC / str(pid) / "task").iterdir())
    except OSError:
        return delays
    for task in tasks:
        try:
            delays[int(task.name)] = int((task / "schedstat").read_text().split()[1])
        except (OSError, IndexError, ValueError):
            continue
    return delays


class ProgressClock:
    """Wall time since ``pid`` started, less its most-delayed task's wait for a CPU meanwhile.

    The most-delayed task stands for the process's critical path (a JVM's main thread, say): the
    tasks run in parallel, so their waits do not add up. A task born later counts from 0, its
    delay at birth. Read it at least as often as the deadline's resolution: a task that ended
    between reads keeps the delay of the last read.
    """

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.started = time.monotonic()
        self.first = run_delay_ns(pid)
        self.waited: dict[int, int] = {}

    def wall_s(self) -> float:
        return time.monotonic() - self.started

    def waited_s(self) -> float:
        """The most-delayed task's wait for a CPU since the start (s)."""
        for tid, delay in run_delay_ns(self.pid).items():
            self.waited[tid] = delay - self.first.get(tid, 0)
        return max(self.waited.values(), default=0) / 1e9

    def progress_s(self) -> float:
        """The wall time the process had a CPU whenever it wanted one (s)."""
        waited = self.waited_s()
        return max(0.0, self.wall_s() - waited)

"""How long the processes a test measures waited for a CPU: the run queue delay the kernel keeps
per task (``/proc/<pid>/task/<tid>/schedstat``, second field, ns runnable but not running),
sampled while they run.

An emulated volume's rate is held to its model's tolerance only for the time its load generator
(fio) and the emulator had a CPU: a task that waited a share ``w`` of the run for one can have
driven up to ``w`` less I/O (at QD8 the volume serves what is queued, then idles). So a rate check
reads ``rate x (1 - waited) x (1 - tolerance) <= measured``: on a quiet machine ``waited`` is about
0 and the check is the model's own; beside ``make test`` or a CPU hog it is what this machine's
load measurably took, not a guessed margin (issue 26). The figure is the most-delayed task of each
process, summed over the processes given (the generator and the emulator, whose delays add up).

The hypervisor's steal adds to it (``storagebench_local.cpu_wait.HostSteal``): a vCPU the host
has descheduled runs none of its tasks and queues no run queue delay, so on a virtual machine whose
host is busy the processes lose that share too, unseen by their schedstat.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from types import TracebackType

from storagebench_local.cpu_wait import HostSteal, schedstat_ns

PROC = Path("/proc")


def children(pid: int) -> list[int]:
    """The processes whose parent is ``pid`` (fio forks one per job)."""
    found: list[int] = []
    for stat in PROC.glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if len(fields) > 1 and fields[1] == str(pid):
            found.append(int(stat.parent.name))
    return found


def working_in(directory: Path) -> list[int]:
    """The processes whose working directory lies in ``directory`` (the agent runs fio in its phase's
    output directory)."""
    found: list[int] = []
    for cwd in PROC.glob("[0-9]*/cwd"):
        try:
            where = str(cwd.readlink())
        except OSError:
            continue
        if where == str(directory) or where.startswith(f"{directory}/"):
            found.append(int(cwd.parent.name))
    return found


class CpuWait:
    """Samples the run queue delay of ``pids()`` every ``interval_s`` between enter and exit.

    ``pids`` is called at each sample (processes come and go: fio's job processes, an agent's
    fio). A task's delay counts from its first sample to its last, so a task that ended between
    samples loses at most one interval of it.
    """

    def __init__(self, pids: Callable[[], Iterable[int]], interval_s: float = 0.05) -> None:
        self.pids = pids
        self.interval_s = interval_s
        self.first: dict[tuple[int, int], tuple[int, int]] = {}  # (ns on a CPU, ns waiting for one)
        self.last: dict[tuple[int, int], tuple[int, int]] = {}
        self.started = 0.0
        self.wall_s = 0.0
        self.steal = HostSteal()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="cpu-wait", daemon=True)

    def _sample(self) -> None:
        for pid in set(self.pids()):
            for tid, times in schedstat_ns(pid).items():
                self.first.setdefault((pid, tid), times)
                self.last[(pid, tid)] = times

    def _run(self) -> None:
        while not self._stop.is_set():
            self._sample()
            self._stop.wait(self.interval_s)

    def __enter__(self) -> CpuWait:
        self.started = time.monotonic()
        self.steal = HostSteal()
        self._sample()
        self._thread.start()
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        self._stop.set()
        self._thread.join()
        self.wall_s = time.monotonic() - self.started
        self.steal.sample()

    def waited_s(self) -> dict[int, float]:
        """Per process: its most-delayed task's wait for a CPU over the sampled time (s)."""
        out: dict[int, float] = {}
        for (pid, tid), first in self.first.items():
            waited = (self.last[(pid, tid)][1] - first[1]) / 1e9
            out[pid] = max(out.get(pid, 0.0), waited)
        return out

    def stolen_s(self) -> float:
        """What the hypervisor took from the processes over the sampled time (s): per process, from
        its task that ran longest, at the most-stolen CPU's share (``HostSteal``), summed."""
        ran: dict[int, float] = {}
        for (pid, tid), first in self.first.items():
            ran[pid] = max(ran.get(pid, 0.0), (self.last[(pid, tid)][0] - first[0]) / 1e9)
        return sum(self.steal.stolen_s(seconds) for seconds in ran.values())

    def share(self) -> float:
        """The share of the wall time sampled that the processes could not run (0..1): their waits
        for a CPU and what the hypervisor took from them."""
        if self.wall_s <= 0:
            return 0.0
        return min(1.0, (sum(self.waited_s().values()) + self.stolen_s()) / self.wall_s)

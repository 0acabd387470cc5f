"""What the emulation costs this machine: the agent's footprint and the EBS twin's CPU.

Two samplers read /proc while an agent runs (the agent process alone, children excluded; the
agent's twin processes with the machine's CPU pressure, to tell a twin that is slow from a
machine that is busy), and two pure functions turn what they saw, or what the twin reported
when it stopped (``manifest["emulation"]["twins"][].state``), into CPU figures.

CPU per 1,000 IOPS is the twin's share of one core divided by the I/O rate it served, in
thousands: ``(100 * cpu_s / seconds) / (ios / seconds / 1000) = 100,000 * cpu_s / ios``. It
is the CPU one I/O costs, scaled to a load of 1,000 IOPS (10 % means 100 us per I/O). From the
twin's state ``ios`` are the requests the twin served (a 1 MiB fio I/O reaches it as 256 KiB
requests: the loop device splits at the I/O unit); per step they are fio's own I/Os.
"""

from __future__ import annotations

import bisect
import os
import threading
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from fidelity_latency import FidelityError
from storagebench.agent.sweep import is_twin_argv
from storagebench_local.cpu_wait import cpu_ticks

CLOCK_TICKS = os.sysconf("SC_CLK_TCK")
CPU_DEFINITION = (
    "pct_of_one_core_per_1000_iops = cpu_share_pct_of_one_core / (iops / 1000) = 100,000 x cpu_s / ios: "
    "the twin's CPU per I/O scaled to 1,000 IOPS (10 % = 100 us per I/O); run figures count the "
    "requests the twin served (256 KiB pieces of a 1 MiB I/O), step figures count fio's I/Os"
)


def process_cpu_s(pid: int) -> float | None:
    """utime + stime of one process (its threads, not its children), or None once it is gone."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = stat.rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLOCK_TICKS  # fields 14 and 15 of proc(5)


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
        except OSError:
            return None
        cpu = process_cpu_s(self.pid)
        if cpu is None:
            return None
        hwm = next((int(line.split()[1]) for line in status.splitlines() if line.startswith("VmHWM:")), 0)
        return hwm, cpu

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


def cpu_pressure_s() -> float | None:
    """Seconds during which some runnable task waited for a CPU (PSI), or None without PSI."""
    try:
        some = Path("/proc/pressure/cpu").read_text().split("\n", 1)[0]
    except OSError:
        return None
    total = next(word for word in some.split() if word.startswith("total="))
    return int(total.split("=", 1)[1]) / 1e6


class RunSampler:
    """While an agent runs: its EBS twins' summed CPU and the machine's CPU pressure.

    Twins are the agent's children running a twin (the compiled one or ``agent.twin.serve``); a twin that has
    ended keeps its last reading in the sum, so the series never goes back. Each series is a
    list of (epoch seconds, cumulative seconds) for :func:`delta_between`. Pressure (PSI) is the
    scheduler's own clock of runnable tasks kept waiting; the machine's busy time in /proc/stat
    is not used: it is sampled at the timer tick, which aliases with I/O paced at a few ms
    (1 MiB writes at 125/s read as 2 % busy while the twin alone used 11 % of a core).
    """

    def __init__(self, agent_pid: int, period_s: float = 0.25) -> None:
        self.agent_pid = agent_pid
        self.period_s = period_s
        self.twin_cpu: list[tuple[float, float]] = []
        self.cpu_pressure: list[tuple[float, float]] = []
        # per CPU: (epoch seconds, stolen ticks), cumulative
        self.cpu_stolen: list[list[tuple[float, float]]] = []
        self._last: dict[int, float] = {}  # twin pid -> last CPU reading
        self._not_twins: set[int] = set()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _children(self) -> list[int]:
        pids: list[int] = []
        try:
            tasks = list(Path(f"/proc/{self.agent_pid}/task").iterdir())
        except OSError:
            return pids
        for task in tasks:
            try:
                text = (task / "children").read_text()
            except OSError:
                continue
            pids.extend(int(pid) for pid in text.split())
        return pids

    def _is_twin(self, pid: int) -> bool:
        if pid in self._last:
            return True
        if pid in self._not_twins:
            return False
        try:
            argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        except OSError:
            return False
        if is_twin_argv(argv):
            return True
        self._not_twins.add(pid)
        return False

    def _sample(self) -> None:
        for pid in self._children():
            if self._is_twin(pid):
                cpu = process_cpu_s(pid)
                if cpu is not None:
                    self._last[pid] = cpu
        now = time.time()
        self.twin_cpu.append((now, sum(self._last.values())))
        pressure = cpu_pressure_s()
        if pressure is not None:
            self.cpu_pressure.append((now, pressure))
        ticks = cpu_ticks()
        if len(self.cpu_stolen) != len(ticks):  # the first sample (CPUs do not come and go mid-run here)
            self.cpu_stolen = [[] for _ in ticks]
        for n, (_, stolen) in enumerate(ticks):
            self.cpu_stolen[n].append((now, float(stolen)))

    def _run(self) -> None:
        while True:
            self._sample()
            if self._stop.wait(self.period_s):
                break
        self._sample()  # after the agent ended: the series cover its last step's end

    def stop(self) -> None:
        """Once the agent has exited: a last sample, then the thread ends."""
        self._stop.set()
        self._thread.join(timeout=5)

    def cpu_pressure_pct(self, start: float, end: float) -> float | None:
        """Share of a window during which some runnable task waited for a CPU (None: no PSI)."""
        pressure = delta_between(self.cpu_pressure, start, end)
        return round(100 * pressure / (end - start), 1) if pressure is not None else None

    def host_steal_pct(self, start: float, end: float) -> float | None:
        """The most-stolen CPU's steal as a share of a window's wall time: what the hypervisor took
        from it (None: unsampled). Of the wall, not of the time the CPU wanted to run: the guest's
        busy time is tick-sampled, which at a row's few percent of a core swings the latter wildly."""
        stolen = [delta_between(series, start, end) for series in self.cpu_stolen]
        if not stolen or any(ticks is None for ticks in stolen):
            return None
        worst = max(ticks for ticks in stolen if ticks is not None)
        return round(100 * worst / CLOCK_TICKS / (end - start), 1)


def delta_between(samples: Sequence[tuple[float, float]], start: float, end: float) -> float | None:
    """How much a cumulative counter grew between two wall-clock times, interpolated; None outside."""
    if end <= start:
        raise FidelityError(f"window: end {end!r} is not after start {start!r}")
    if len(samples) < 2 or start < samples[0][0] or end > samples[-1][0]:
        return None
    times = [at for at, _ in samples]

    def at(moment: float) -> float:
        index = bisect.bisect_right(times, moment)
        if index >= len(samples):
            return samples[-1][1]
        (t0, c0), (t1, c1) = samples[index - 1], samples[index]
        return c0 + (c1 - c0) * (moment - t0) / (t1 - t0) if t1 > t0 else c1

    return at(end) - at(start)


def _number(state: Mapping[str, Any], key: str) -> float:
    value = state.get(key)
    if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
        raise FidelityError(f"twin state {key}: {value!r}, a number >= 0 expected")
    return float(value)


def cpu_figures(cpu_s: float, seconds: float, ios: float) -> dict[str, float | None]:
    """Share of one core and CPU per 1,000 IOPS for ``ios`` I/Os served in ``seconds``."""
    if not seconds > 0:
        raise FidelityError(f"cpu figures: {seconds!r} s, a positive duration expected")
    share = 100 * cpu_s / seconds
    iops = ios / seconds
    return {
        "cpu_share_pct_of_one_core": round(share, 2),
        "iops": round(iops, 1),
        "cpu_us_per_io": round(1e6 * cpu_s / ios, 1) if ios else None,
        "pct_of_one_core_per_1000_iops": round(share / (iops / 1000), 2) if ios else None,
    }


def twin_cpu_from_state(state: Mapping[str, Any]) -> dict[str, Any]:
    """The twin's own account of its run (``cpu_s``, ``ios``, ``modelled_s``) as CPU figures."""
    cpu_s, ios, modelled_s = (_number(state, key) for key in ("cpu_s", "ios", "modelled_s"))
    return {"cpu_s": cpu_s, "ios": int(ios), "modelled_s": modelled_s, **cpu_figures(cpu_s, modelled_s, ios)}


def stalls_within(manifest: dict[str, Any], window: tuple[float, float]) -> dict[str, Any]:
    """Stalls of the twins (replies 5 ms or more late: the machine did not run the twin) during a
    step's measured window: how many and how long in all. A row missing a latency goal with
    stalls in its window missed it because the host froze the emulator, not through the model."""
    start, end = window
    found = []
    for twin in manifest.get("emulation", {}).get("twins", []):
        state = twin.get("state") or {}
        origin = state.get("model_started_unix")
        timing = state.get("reply_timing") or {}
        if origin is None:
            continue
        found += [s for s in timing.get("stalls", []) if start <= origin + s["elapsed_s"] <= end]
    return {"count": len(found), "late_ms": round(sum(s["late_ms"] for s in found), 1)}

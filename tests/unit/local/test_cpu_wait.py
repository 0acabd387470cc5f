"""The clock start-up deadlines count in: wall time less the process's wait for a CPU."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.support.processes import process_state

from storagebench_local import cpu_wait
from storagebench_local.cpu_wait import ProgressClock, run_delay_ns

CPU = max(os.sched_getaffinity(0))


def spinner(cpu: int) -> subprocess.Popen[bytes]:
    code = f"import os; os.sched_setaffinity(0, {{{cpu}}}); [None for _ in iter(int, 1)]"
    return subprocess.Popen([sys.executable, "-c", code])


@pytest.fixture
def two_on_one_cpu() -> Iterator[subprocess.Popen[bytes]]:
    processes = [spinner(CPU), spinner(CPU)]
    try:
        yield processes[0]
    finally:
        for process in processes:
            process.kill()
            process.wait()


def test_a_process_sharing_its_cpu_progresses_at_most_half_the_wall(
    two_on_one_cpu: subprocess.Popen[bytes],
) -> None:
    clock = ProgressClock(two_on_one_cpu.pid)
    time.sleep(1.5)
    waited, wall = clock.waited_s(), clock.wall_s()
    # two spinners on one CPU each wait about half the time (more when anything else runs there)
    assert waited >= 0.35 * wall
    assert clock.progress_s() <= 0.65 * clock.wall_s()


def test_a_sleeping_process_progresses_with_the_wall() -> None:
    sleeper = subprocess.Popen(["sleep", "5"])
    try:
        while process_state(sleeper.pid) != "S":  # asleep: past its start, which may wait for a CPU
            time.sleep(0.01)
        clock = ProgressClock(sleeper.pid)
        time.sleep(1.0)
        assert clock.waited_s() < 0.1  # it never asked for a CPU
        assert clock.progress_s() == pytest.approx(clock.wall_s(), abs=0.1)
    finally:
        sleeper.kill()
        sleeper.wait()


def test_a_gone_process_has_no_tasks_and_its_clock_keeps_the_last_reading() -> None:
    process = subprocess.Popen(["true"])
    clock = ProgressClock(process.pid)
    process.wait()
    assert run_delay_ns(process.pid) == {}
    assert clock.waited_s() >= 0.0
    assert clock.progress_s() <= clock.wall_s()


# ---------------------------------------------------------------- the hypervisor's steal


def write_stat(proc: Path, per_cpu: list[tuple[int, int, int]]) -> None:
    """A /proc/stat whose cpuN lines have (user, idle, steal) and the rest 0; the aggregate line
    holds a steal no CPU has, which must be ignored."""
    lines = ["cpu  1 0 0 1 0 0 0 999999 0 0"]
    lines += [f"cpu{n} {user} 0 0 {idle} 0 0 0 {steal} 0 0" for n, (user, idle, steal) in enumerate(per_cpu)]
    (proc / "stat").write_text("\n".join([*lines, "intr 0", "ctxt 0"]) + "\n")


def test_steal_is_the_most_stolen_cpus_share_of_the_time_it_wanted_to_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(cpu_wait, "PROC", tmp_path)
    write_stat(tmp_path, [(100, 100, 10), (100, 100, 10)])
    steal = cpu_wait.HostSteal()
    # cpu0 ran 300 ticks and lost 100 (25 % of the 400 it wanted); cpu1 idled and lost none
    write_stat(tmp_path, [(400, 100, 110), (110, 1000, 10)])
    steal.sample()
    assert steal.share() == pytest.approx(0.25)
    # a task that ran 3 s of its own on that CPU waited 1 s more for the host
    assert steal.stolen_s(3.0) == pytest.approx(1.0)
    assert steal.stolen_s(0.0) == 0.0  # a task that never ran lost nothing to the host


def test_no_steal_where_the_kernel_reports_none(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cpu_wait, "PROC", tmp_path)  # no stat file at all
    steal = cpu_wait.HostSteal()
    steal.sample()
    assert steal.share() == 0.0
    write_stat(tmp_path, [(100, 100, 0)])
    idle = cpu_wait.HostSteal()
    idle.sample()  # nothing moved: no share to speak of
    assert idle.share() == 0.0


def test_progress_leaves_out_what_the_host_took_while_the_process_ran(
    two_on_one_cpu: subprocess.Popen[bytes], monkeypatch: pytest.MonkeyPatch
) -> None:
    clock = ProgressClock(two_on_one_cpu.pid)
    time.sleep(0.5)
    monkeypatch.setattr(clock.steal, "share", lambda: 0.5)  # the host took half of every CPU's time
    waited, stolen = clock.waited_s(), clock.stolen_s()
    ran = max(clock.ran.values()) / 1e9  # the spinner's own time on its CPU, read with the above
    assert ran > 0.1
    assert stolen == pytest.approx(ran, rel=0.05)  # a half share: as long again as it ran
    # read after the figures above, each only grown since; progress stops at 0 (a busy CPU may
    # leave the spinner nothing of the wall once its waits and the host's share are out)
    assert clock.progress_s() <= max(0.0, clock.wall_s() - waited - stolen)

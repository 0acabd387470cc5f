"""The clock start-up deadlines count in: wall time less the process's wait for a CPU."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from storagebench_local.cpu_wait import ProgressClock, run_delay_ns

CPU = max(os.sched_getaffinity(0))


def spinner(cpu: int) -> subprocess.Popen[bytes]:
    code = f"import os; os.sched_setaffinity(0, {{{cpu}}}); [None for _ in iter(int, 1)]"
    return subprocess.Popen([sys.executable, "-c", code])


def state(pid: int) -> str:
    return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]


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
        while state(sleeper.pid) != "S":  # asleep: past its start, which may wait for a CPU
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

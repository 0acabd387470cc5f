"""sweep finds a run's EBS twin processes by their command line and stops them (agent.sweep).

The "twin" here is a harmless sleeper whose argv looks like the twin's
(``... storagebench.agent.twin.serve --mountpoint <volumes>/<run>/<config>/<name>.img.twin``):
that is all sweep reads, so no root, FUSE or loop device is needed.
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path
from typing import Iterator, List

import pytest
from tests.support.processes import started_processes

from storagebench.agent.sweep import resources_of, sweep

SLEEPER = "import time; time.sleep(60)"


def fake_twin(mountpoint: Path) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [
            sys.executable,
            "-c",
            SLEEPER,
            "storagebench.agent.twin.serve",
            "--backing",
            "x",
            "--mountpoint",
            str(mountpoint),
        ]
    )


@pytest.fixture
def started() -> Iterator[List[subprocess.Popen[bytes]]]:
    yield from started_processes()  # only what this test started, by its own handle


def wait_for_argv(process: subprocess.Popen[bytes]) -> None:
    """Until the child has exec'd (its cmdline is the twin's, not pytest's)."""
    deadline = time.monotonic() + 10
    while b"storagebench.agent.twin.serve" not in Path(f"/proc/{process.pid}/cmdline").read_bytes():
        assert time.monotonic() < deadline, "the fake twin never started"
        time.sleep(0.01)


def test_resources_of_finds_the_runs_twins_only(
    tmp_path: Path, started: List[subprocess.Popen[bytes]]
) -> None:
    volumes = tmp_path / "vol"
    ours = fake_twin(volumes / "r1" / "c1" / "vol-0.img.twin")
    other_config = fake_twin(volumes / "r1" / "c2" / "vol-0.img.twin")
    other_run = fake_twin(volumes / "r1-retry" / "c1" / "vol-0.img.twin")  # an id that extends r1
    elsewhere = fake_twin(tmp_path / "elsewhere" / "r1" / "c1" / "vol-0.img.twin")
    started += [ours, other_config, other_run, elsewhere]
    for process in started:
        wait_for_argv(process)
    run_wide = resources_of("r1", str(tmp_path / "mnt"), str(volumes))
    assert run_wide["twins"] == sorted([str(ours.pid), str(other_config.pid)], key=int)
    assert run_wide["twin_mounts"] == []
    one_config = resources_of("r1", str(tmp_path / "mnt"), str(volumes), config_id="c1")
    assert one_config["twins"] == [str(ours.pid)]


def test_a_process_without_the_twins_module_is_not_a_twin(
    tmp_path: Path, started: List[subprocess.Popen[bytes]]
) -> None:
    mountpoint = tmp_path / "vol" / "r1" / "c1" / "vol-0.img.twin"
    lookalike = subprocess.Popen(
        [sys.executable, "-c", SLEEPER, "something.else", "--mountpoint", str(mountpoint)]
    )
    started.append(lookalike)
    deadline = time.monotonic() + 10
    while b"something.else" not in Path(f"/proc/{lookalike.pid}/cmdline").read_bytes():
        assert time.monotonic() < deadline
        time.sleep(0.01)
    assert resources_of("r1", str(tmp_path / "mnt"), str(tmp_path / "vol"))["twins"] == []


def test_sweep_stops_the_runs_twin_and_removes_its_directory(
    tmp_path: Path, started: List[subprocess.Popen[bytes]]
) -> None:
    volumes = tmp_path / "vol"
    run_dir = volumes / "r1" / "c1"
    run_dir.mkdir(parents=True)
    (run_dir / "vol-0.img").write_bytes(b"")
    ours = fake_twin(run_dir / "vol-0.img.twin")
    neighbour = fake_twin(volumes / "r2" / "c1" / "vol-0.img.twin")
    started += [ours, neighbour]
    wait_for_argv(ours)
    wait_for_argv(neighbour)
    began = time.monotonic()
    report = sweep("r1", str(tmp_path / "mnt"), str(volumes))
    # The sweeper may be the twin's parent (an agent sweeping its own run): a killed child it
    # has not reaped yet is a zombie, and sweep must not wait on it.
    assert time.monotonic() - began < 5
    assert report["leftovers"] == []
    assert f"stop EBS twin processes {ours.pid}" in report["removed"]
    assert ours.wait(timeout=10) == -9
    assert neighbour.poll() is None  # another run's twin is left alone
    assert not (volumes / "r1").exists()
    assert resources_of("r1", str(tmp_path / "mnt"), str(volumes))["twins"] == []

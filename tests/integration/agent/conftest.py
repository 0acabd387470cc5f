"""The agent's integration tests: real fio, dd, loop devices, mkfs, mounts and cgroup throttles.

Every test gets an ``AgentEnv``: a unique run id and its own output, mount-root and volumes
directories under ``tmp_path``. After the test the fixture checks that the run left nothing on
the machine (no loop device backed under its volumes directory, no ``storagebench:<run>:*``
cgroup, no mount under its mount root, no EBS twin process or FUSE mount under its volumes
directory), cleans up whatever it finds (so a failing test never
leaves a throttled loop device behind for the next one) and reports it as an error.

Markers: ``root`` (loop devices, mkfs, mount, cgroup blkio), ``fio`` (the fio binary) and
``py39`` (the agent under Python 3.9) skip with the reason when the machine lacks them.
Measured fidelity numbers are printed in the terminal summary.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from agent_plans import python39

from storagebench.agent.cli import main
from storagebench.agent.sweep import is_twin_argv, sweep
from storagebench.agent.throttle import V1_ROOT, V2_ROOTS
from storagebench.agent.twin.loop_record import recorded_loops

REPO = Path(__file__).resolve().parents[3]
AGENT_SOURCE = REPO / "layers" / "storagebench"
MIB = 1 << 20
GIB = 1 << 30

FIDELITY: dict[str, Any] = {}


def throttle_available() -> bool:
    if Path(V1_ROOT, "blkio.throttle.read_iops_device").is_file():
        return True
    for root in V2_ROOTS:
        try:
            if "io" in Path(root, "cgroup.controllers").read_text().split():
                return True
        except OSError:
            continue
    return False


@pytest.fixture(autouse=True)
def _requirements(request: pytest.FixtureRequest) -> None:
    if request.node.get_closest_marker("root"):
        if os.geteuid() != 0:
            pytest.skip("needs root: loop devices, mkfs, mount and cgroup blkio throttling")
        for tool in ("losetup", "mount", "umount", "blkid"):
            if shutil.which(tool) is None:
                pytest.skip(f"{tool} is not installed")
        if not throttle_available():
            pytest.skip("no cgroup v1 blkio throttle and no cgroup v2 io controller on this machine")
    if request.node.get_closest_marker("fio") and shutil.which("fio") is None:
        pytest.skip("fio is not installed (apt-get install fio)")
    if request.node.get_closest_marker("py39") and python39() is None:
        pytest.skip("no Python 3.9 interpreter (pyenv install 3.9)")


class AgentEnv:
    """One agent run's identity and directories, plus what it may have left on the machine."""

    def __init__(self, tmp_path: Path, name: str) -> None:
        self.tmp = tmp_path
        self.run_id = f"t{uuid.uuid4().hex[:8]}-{name}"[:40]
        self.config_id = "c1"
        self.tag = f"{self.run_id}-{self.config_id}"
        self.out = tmp_path / "out"
        self.mount_root = tmp_path / "mnt"
        self.volumes = tmp_path / "vol"
        self.plan_path = tmp_path / "plan.json"

    # ---------------------------------------------------------------- plans and runs

    def plan(
        self, targets: list[dict[str, Any]], steps: list[dict[str, Any]], **extra: Any
    ) -> dict[str, Any]:
        return {
            "plan_version": 1,
            "run_id": self.run_id,
            "config_id": self.config_id,
            "targets": targets,
            "steps": steps,
            **extra,
        }

    def args(self, plan: dict[str, Any]) -> list[str]:
        self.plan_path.write_text(json.dumps(plan, indent=2))
        return [
            "run",
            "--plan",
            str(self.plan_path),
            "--out",
            str(self.out),
            "--mount-root",
            str(self.mount_root),
            "--volumes-dir",
            str(self.volumes),
            "--quiet",
        ]

    def run(self, plan: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        """The agent in-process, through its command line."""
        code = main(self.args(plan))
        return code, self.manifest()

    def start(self, plan: dict[str, Any], python: str | None = None) -> subprocess.Popen[bytes]:
        """The agent as a subprocess (``python -m storagebench.agent``), from the source tree only."""
        env = dict(os.environ, PYTHONPATH=str(AGENT_SOURCE), PYTHONDONTWRITEBYTECODE="1")
        self.stderr_path = self.tmp / "agent.stderr"
        with self.stderr_path.open("wb") as stderr:
            return subprocess.Popen(
                [python or sys.executable, "-m", "storagebench.agent", *self.args(plan)],
                cwd=str(self.tmp),
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=stderr,
            )

    def manifest(self) -> dict[str, Any]:
        return json.loads((self.out / "manifest.json").read_text())

    def phase_dir(self, step: str, phase: str) -> Path:
        return self.out / "steps" / step / phase

    def fio_json(self, step: str, phase: str = "p") -> dict[str, Any]:
        return json.loads((self.phase_dir(step, phase) / "fio.json").read_text())

    def wait_for(self, condition: Any, what: str, timeout_s: float = 30.0) -> None:
        deadline = time.monotonic() + timeout_s
        while not condition():
            if time.monotonic() > deadline:
                raise AssertionError(f"timed out after {timeout_s:.0f} s waiting for {what}")
            time.sleep(0.05)

    # ---------------------------------------------------------------- what is left

    def cgroups(self) -> list[Path]:
        found = []
        for root in (V1_ROOT, *V2_ROOTS):
            base = Path(root)
            if base.is_dir():
                # storagebench:<run>:<config> (and the older storagebench-<run>-<config>)
                found += sorted(base.glob(f"storagebench[-:]{self.run_id}[-:]*"))
        return found

    def cgroup_pids(self) -> list[int]:
        pids = []
        for group in self.cgroups():
            try:
                pids += [int(p) for p in (group / "cgroup.procs").read_text().split()]
            except OSError:
                continue
        return pids

    @contextlib.contextmanager
    def reaping(self, agent: subprocess.Popen[bytes]) -> Iterator[None]:
        """However the block ends, an agent it left running is killed and waited for."""
        try:
            yield
        finally:
            if agent.poll() is None:
                agent.kill()
                agent.wait()

    @staticmethod
    def loop_listing(check: bool = False) -> str:
        """``losetup``'s NAME BACK-FILE lines (``check``: a failing losetup fails the test)."""
        return subprocess.run(
            ["losetup", "--list", "--noheadings", "--output", "NAME,BACK-FILE"],
            capture_output=True,
            text=True,
            check=check,
        ).stdout

    def loops(self) -> list[str]:
        listing = self.loop_listing()
        loops = []
        for line in listing.splitlines():
            parts = line.split(None, 1)
            if len(parts) == 2 and parts[1].strip().startswith(str(self.volumes) + "/"):
                loops.append(f"{parts[0]} ({parts[1].strip()})")
        # a twin's loop device whose mount went first is named by its record, not its path
        by_path = {loop.split()[0] for loop in loops}
        loops += [f"{d} (recorded twin)" for d in recorded_loops(str(self.volumes)) if d not in by_path]
        return loops

    def mounts(self, root: Path | None = None) -> list[str]:
        prefix = str(root or self.mount_root)
        found = []
        for line in Path("/proc/self/mountinfo").read_text().splitlines():
            fields = line.split()
            if len(fields) > 4 and (fields[4] == prefix or fields[4].startswith(prefix + "/")):
                found.append(fields[4])
        return found

    def twin_mounts(self) -> list[str]:
        """EBS twins' FUSE mounts (``<volumes>/.../<name>.img.twin``), dead or alive."""
        return self.mounts(self.volumes)

    def twins(self) -> list[int]:
        """EBS twin processes serving a mount under this run's volumes directory."""
        pids = []
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit():
                continue
            try:
                argv = (entry / "cmdline").read_bytes().split(b"\0")
            except OSError:
                continue
            if is_twin_argv(argv) and b"--mountpoint" in argv:
                index = argv.index(b"--mountpoint") + 1
                if index < len(argv) and argv[index].decode().startswith(str(self.volumes) + "/"):
                    pids.append(int(entry.name))
        return pids

    def leftovers(self) -> list[str]:
        left = [f"mount {m}" for m in self.mounts()]
        left += [f"loop {loop}" for loop in self.loops()]
        left += [f"cgroup {c}" for c in self.cgroups()]
        left += [f"EBS twin process {pid}" for pid in self.twins()]
        left += [f"EBS twin mount {m}" for m in self.twin_mounts()]
        return left

    def assert_clean(self) -> None:
        assert self.leftovers() == []

    def force_clean(self) -> None:
        """Kill what still runs in the run's cgroup, then sweep; used after a failed test."""
        for pid in self.cgroup_pids():
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        deadline = time.monotonic() + 10
        while self.cgroup_pids() and time.monotonic() < deadline:
            time.sleep(0.1)
        sweep(self.run_id, str(self.mount_root), str(self.volumes))  # twins and their mounts too
        deadline = time.monotonic() + 10
        # lazily unmounted / autoclear loops; twins the sweep killed, still exiting
        while (self.loops() or self.twins()) and time.monotonic() < deadline:
            time.sleep(0.2)


@pytest.fixture
def agent_env(request: pytest.FixtureRequest, tmp_path: Path) -> Any:
    env = AgentEnv(tmp_path, request.node.name.split("[")[0].replace("test_", "")[:20].replace("_", "-"))
    yield env
    left = env.leftovers()
    if left:
        env.force_clean()
        still = env.leftovers()
        pytest.fail(
            f"the run left {left} on the machine" + (f"; still there after a sweep: {still}" if still else "")
        )


@pytest.fixture
def fidelity() -> dict[str, Any]:
    return FIDELITY


def pytest_terminal_summary(terminalreporter: Any) -> None:
    if not FIDELITY:
        return
    terminalreporter.section("storagebench agent: measured emulation fidelity")
    for key, value in FIDELITY.items():
        terminalreporter.write_line(f"{key}: {value}")

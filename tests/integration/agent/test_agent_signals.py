"""Stopping the agent: SIGTERM (teardown still runs) and SIGKILL (``sweep`` cleans up after it).

The agent runs as a subprocess here; the SIGTERM case runs it under Python 3.9 as on Amazon
Linux 2023.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest
from agent_plans import MIB, ebs_target, emulated, fio_step, python39

from storagebench.agent.cli import main

pytestmark = [pytest.mark.root, pytest.mark.fio]

GP3 = {"iops": 3000, "mibps": 125}


def long_fio_plan(agent_env: Any, filesystem: str, capacity: int, **extra: Any) -> dict[str, Any]:
    target = ebs_target("vol", [emulated("gp3", capacity, **GP3)], filesystem=filesystem)
    job = {"rw": "randread", "bs": "4k", "iodepth": 16, "runtime": 60}
    if filesystem != "raw":
        job["size"] = "16M"
    return agent_env.plan([target], [fio_step("s-long", "vol", {"rr": job}, time_based=1)], **extra)


def wait_until_fio_runs(agent_env: Any, agent: subprocess.Popen[bytes]) -> list[int]:
    """The pids in the run's cgroup once fio is measuring (after its file layout)."""

    def running() -> bool:
        assert agent.poll() is None, f"the agent exited early: {agent_env.stderr_path.read_text()}"
        return bool(agent_env.cgroup_pids()) and (agent_env.phase_dir("s-long", "p") / "ts").is_dir()

    agent_env.wait_for(running, "fio to start in the run's cgroup", timeout_s=60)
    time.sleep(1.0)
    pids = agent_env.cgroup_pids()
    assert pids
    return pids


def alive(pids: list[int]) -> list[int]:
    living = []
    for pid in pids:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if state not in ("Z", "X"):
            living.append(pid)
    return living


@pytest.mark.py39
def test_sigterm_mid_fio_tears_down_and_exits_130(agent_env: Any, tmp_path: Path) -> None:
    marker = tmp_path / "teardown-ran"
    plan = long_fio_plan(agent_env, "raw", 256 * MIB, teardown=f'touch "{marker}"')
    agent = agent_env.start(plan, python=python39())
    with agent_env.reaping(agent):
        fio_pids = wait_until_fio_runs(agent_env, agent)
        sent = time.monotonic()
        agent.send_signal(signal.SIGTERM)
        code = agent.wait(timeout=30)
    assert time.monotonic() - sent < 15

    assert code == 130, agent_env.stderr_path.read_text()
    manifest = agent_env.manifest()
    assert manifest["system"]["python"].startswith("3.9.")
    assert manifest["status"] == "failed"
    assert manifest["error"] == "stopped by signal SIGTERM"
    assert "signal" in manifest["error"]
    assert manifest["cleanup"]["status"] == "ok"
    assert manifest["ended_at"] is not None
    assert manifest["hooks"]["teardown"]["rc"] == 0
    assert marker.exists()
    assert alive(fio_pids) == []  # fio (in its own session) was stopped with the agent
    assert "FAILED: stopped by signal SIGTERM" in (agent_env.out / "agent.log").read_text()
    assert json.loads((agent_env.out / "progress.json").read_text())["status"] == "failed"
    agent_env.assert_clean()


def sigkill_mid_fio(agent_env: Any) -> list[int]:
    agent = agent_env.start(long_fio_plan(agent_env, "xfs", 512 * MIB))
    with agent_env.reaping(agent):
        pids = wait_until_fio_runs(agent_env, agent)
        agent.kill()
        agent.wait(timeout=10)
    assert agent_env.mounts()
    assert agent_env.loops()
    assert agent_env.cgroups()
    return pids


def sweep_run(agent_env: Any, capsys: pytest.CaptureFixture[str]) -> tuple[int, dict[str, Any]]:
    capsys.readouterr()
    code = main(
        [
            "sweep",
            "--run-id",
            agent_env.run_id,
            "--mount-root",
            str(agent_env.mount_root),
            "--volumes-dir",
            str(agent_env.volumes),
        ]
    )
    return code, json.loads(capsys.readouterr().out)


def test_sweep_removes_what_a_killed_agent_left(agent_env: Any, capsys: pytest.CaptureFixture[str]) -> None:
    pids = sigkill_mid_fio(agent_env)
    # What the instance's process supervisor does with a killed command's tree: nothing of it runs on.
    for pid in alive(pids):
        os.kill(pid, signal.SIGKILL)
    agent_env.wait_for(lambda: not alive(pids) and not agent_env.cgroup_pids(), "fio to die", timeout_s=10)

    code, report = sweep_run(agent_env, capsys)
    assert code == 0, report
    assert report["leftovers"] == []
    removed = report["removed"]
    assert [r for r in removed if r.startswith(f"unmount {agent_env.mount_root}/") and r.endswith("/vol")]
    assert [r for r in removed if r.startswith("detach /dev/loop")]
    assert [r for r in removed if r.startswith("remove cgroup ") and agent_env.run_id in r]
    assert [r for r in removed if r.startswith(f"remove {agent_env.volumes}/")]
    agent_env.wait_for(lambda: not agent_env.loops(), "the loop device to go", timeout_s=10)
    agent_env.assert_clean()
    assert list(agent_env.mount_root.iterdir()) == []
    assert list(agent_env.volumes.iterdir()) == []
    # A second sweep finds nothing.
    code, report = sweep_run(agent_env, capsys)
    assert (code, report) == (0, {"found": [], "removed": [], "leftovers": []})


def test_sweep_right_after_sigkill_leaves_nothing(agent_env: Any, capsys: pytest.CaptureFixture[str]) -> None:
    pids = sigkill_mid_fio(agent_env)
    try:
        code, report = sweep_run(agent_env, capsys)
        left = agent_env.leftovers()
        running = alive(pids)
    finally:
        agent_env.force_clean()
    assert running == [], f"fio still running after the sweep: {running}"
    assert left == []
    assert code == 0, report

"""A node removes itself in its node_loss step: real agent processes on their own loopback addresses.

The primary tells controller-1 when the measured fio phase starts (``POST /node-loss``); the node
waits its plan's ``after_s`` and runs ``systemctl poweroff`` found on its PATH. Here that PATH starts
with a stand-in that records the call and freezes the agent that made it (SIGSTOP: its endpoint goes
silent, as a machine that lost power does). The primary checks that the node is gone, skips the
later steps with the reason, and does not tell the removed node to finish; the other controller
finishes as usual.
"""

from __future__ import annotations

import os
import shutil
import signal
import threading
import time
from pathlib import Path
from typing import Any, Dict

import pytest
from machines import Cluster

from storagebench.agent import barrier
from storagebench.agent.control import ControlEndpoint
from storagebench.agent.node import Node
from storagebench.agent.runner import EXIT_OK
from storagebench.protocol.topology import NodeLostError

pytestmark = [pytest.mark.skipif(shutil.which("fio") is None, reason="fio is not installed"), pytest.mark.fio]

AFTER_S = 3.0
STAND_IN = """#!/bin/sh
# systemctl as a machine's power button, for this test: record, then freeze the caller (the agent)
echo "$* $(date +%s.%N)" >> "{calls}"
kill -STOP "$PPID"
"""


def fio_step(step_id: str, node_loss: bool) -> Dict[str, Any]:
    phase: Dict[str, Any] = {
        "name": "run",
        "engine": "fio",
        "fio": {
            "global_options": {"ioengine": "null", "size": "16m", "time_based": 1, "runtime": "8s"},
            "jobs": [{"name": "w", "options": {"rw": "randwrite", "bs": "4k"}}],
        },
    }
    if node_loss:
        phase["node_loss"] = {"role": "controller", "index": 1, "at_s": AFTER_S}
    return {"id": step_id, "target": "shared", "repetition": 1, "phases": [phase]}


def test_the_node_powers_off_in_its_step_and_the_primary_skips_what_follows(
    cluster: Cluster, tmp_path: Path
) -> None:
    primary = cluster.machine("client", 0)
    keeper, lost = cluster.machine("controller", 0), cluster.machine("controller", 1)
    shared = tmp_path / "shared"
    shared.mkdir()
    calls = tmp_path / "power-calls"
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "systemctl").write_text(STAND_IN.format(calls=calls))
    (bin_dir / "systemctl").chmod(0o755)
    path = {"PATH": f"{bin_dir}:{os.environ['PATH']}"}
    step = fio_step("s1-loss", node_loss=True)
    agents = {
        "controller-0": cluster.start("controller-0", cluster.plan(keeper), path),
        "controller-1": cluster.start(
            "controller-1", cluster.plan(lost, power_off={"step": "s1-loss", "after_s": AFTER_S}), path
        ),
    }
    target = {"id": "shared", "kind": "directory", "path": str(shared)}
    client = cluster.start(
        "client-0", cluster.plan(primary, targets=[target], steps=[step, fio_step("s2-after", False)]), path
    )
    try:
        assert client.wait(90) == EXIT_OK, client.log()
        manifest = client.manifest()
        first, second = manifest["steps"]
        assert first["status"] == "ok", first
        assert "node_loss" in first["phases"][0], first["phases"][0].get("node_loss_error")
        # on fio's clock: fio starts after the primary's word, so the removal lands before 3.0 s
        removed_at_s = first["phases"][0]["node_loss"]["write"]["removed_at_s"]
        assert AFTER_S - 2.0 < removed_at_s <= AFTER_S, removed_at_s
        assert second["status"] == "skipped"
        assert second["error"].startswith("skipped: controller-1 was removed by step s1-loss"), second
        assert manifest["topology"]["finish_problems"] == []  # the removed node was not asked
        assert "controller-1" in client.log() and "not told to finish" in client.log()
        assert agents["controller-0"].wait(30) == EXIT_OK  # the other controller finished as usual
        (call,) = calls.read_text().splitlines()
        assert call.split()[0] == "poweroff"
        assert agents["controller-1"].process.poll() is None  # frozen, never finished
        assert "powering off 3 s into step s1-loss" in agents["controller-1"].log()
    finally:
        agent = agents["controller-1"].process
        if agent.poll() is None:
            os.killpg(agent.pid, signal.SIGKILL)
            agent.wait()


def test_a_node_refuses_a_removal_it_was_not_planned_for(cluster: Cluster) -> None:
    me = cluster.machine("controller", 0)
    cluster.ports()
    planned = ControlEndpoint("controller", 0, me["ip"], cluster.control_port, loss_step="s1")
    try:
        assert planned.start_loss("s2") == "controller-0 is removed in step s1, not s2"
        assert not planned.loss_started.is_set()
        assert planned.start_loss("s1") is None and planned.loss_started.is_set()
    finally:
        planned.close()
    unplanned = ControlEndpoint("controller", 0, me["ip"], cluster.control_port)
    try:
        with pytest.raises(
            NodeLostError, match=r"controller-0 .* refused its removal in step s1: .*no planned"
        ):
            barrier.start_node_loss(me, cluster.control_port, "s1")  # type: ignore[arg-type]
        assert not unplanned.loss_started.is_set()
    finally:
        unplanned.close()


def test_the_removal_waits_after_s_from_the_primarys_word(tmp_path: Path, cluster: Cluster) -> None:
    me = cluster.machine("controller", 0)
    cluster.machine("client", 0)
    topology: Any = cluster.topology(me)
    said: list = []  # type: ignore[type-arg]
    off: list = []  # type: ignore[type-arg]
    node = Node(
        topology,
        str(tmp_path),
        said.append,
        {"step": "s1", "after_s": 0.8},
        lambda: off.append(time.monotonic()),
    )
    node.start()
    assert node.endpoint is not None
    try:
        told = time.monotonic()
        assert node.endpoint.start_loss("s1") is None
        holder = threading.Thread(target=node._hold, daemon=True)
        holder.start()
        deadline = time.monotonic() + 5
        while not off and time.monotonic() < deadline:
            time.sleep(0.02)
        assert off and 0.8 <= off[0] - told < 1.3
        node.endpoint.finish_requested.set()
        holder.join(5)
        assert len(off) == 1  # once
    finally:
        node.endpoint.close()


def test_a_node_that_could_not_power_off_voids_the_measurement(cluster: Cluster, tmp_path: Path) -> None:
    """systemctl fails (no bus): the node stays, says failed with why; the primary records no pause
    or recovery but node_loss_error naming it, and tells the node to finish with the others."""
    primary, lost = cluster.machine("client", 0), cluster.machine("controller", 0)
    shared = tmp_path / "shared"
    shared.mkdir()
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "systemctl").write_text("#!/bin/sh\necho 'Failed to connect to bus' >&2\nexit 1\n")
    (bin_dir / "systemctl").chmod(0o755)
    path = {"PATH": f"{bin_dir}:{os.environ['PATH']}"}
    step = fio_step("s1-loss", node_loss=True)
    step["phases"][0]["node_loss"]["index"] = 0
    node = cluster.start(
        "controller-0", cluster.plan(lost, power_off={"step": "s1-loss", "after_s": AFTER_S}), path
    )
    target = {"id": "shared", "kind": "directory", "path": str(shared)}
    client = cluster.start("client-0", cluster.plan(primary, targets=[target], steps=[step]), path)
    assert client.wait(90) == EXIT_OK, client.log()
    (phase,) = client.manifest()["steps"][0]["phases"]
    assert "node_loss" not in phase
    assert phase["node_loss_error"].startswith("controller-0 (i-controller0, "), phase["node_loss_error"]
    assert (
        "still answered failed (systemctl poweroff exited with status 1: Failed to connect to bus)"
        in (phase["node_loss_error"])
    )
    assert node.wait(30) != EXIT_OK  # told to finish; it ends failed, as a node whose step failed

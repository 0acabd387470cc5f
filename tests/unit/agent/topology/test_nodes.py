"""Nodes and the primary client as real agent processes on their own loopback addresses."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path
from typing import Any, Dict

from machines import Cluster

from storagebench.agent.runner import EXIT_OK, EXIT_PREPARE, EXIT_TOPOLOGY

ENV_DUMP = 'env | grep "^SB_" | sort > "{path}"'


def read_env(path: Path) -> Dict[str, str]:
    return dict(line.split("=", 1) for line in path.read_text().splitlines())


def command_step(step_id: str, script: str, target: str = "shared") -> Dict[str, Any]:
    return {
        "id": step_id,
        "target": target,
        "repetition": 1,
        "phases": [{"name": "run", "engine": "command", "command": {"script": script}}],
    }


def shared_target(tmp_path: Path) -> Dict[str, Any]:
    shared = tmp_path / "shared"
    shared.mkdir(exist_ok=True)
    return {"id": "shared", "kind": "directory", "path": str(shared)}


def test_a_server_says_setting_up_then_ready_and_tears_down_when_told_to_finish(
    cluster: Cluster, tmp_path: Path
) -> None:
    primary = cluster.machine("client", 0)
    server = cluster.machine("server", 0)
    marker = tmp_path / "torn-down"
    gate = tmp_path / "gate"
    plan = cluster.plan(
        server,
        setup=f'while [ ! -e "{gate}" ]; do sleep 0.05; done; '
        + ENV_DUMP.format(path=tmp_path / "server.env"),
        teardown=f'echo "$SB_NODE_ROLE-$SB_NODE_INDEX" > "{marker}"',
    )
    agent = cluster.start("server", plan)
    seen = cluster.await_state(server, "setting-up")
    assert seen == {"role": "server", "index": 0, "state": "setting-up", "error": None}
    assert cluster.status(primary) is None  # nobody else serves: the endpoint is the server's own address
    gate.touch()
    cluster.await_state(server, "ready")
    time.sleep(0.3)
    assert not marker.exists() and agent.process.poll() is None  # holds until told
    assert cluster.finish(server) == 202
    cluster.await_state(server, "finished")
    assert agent.wait(20) == EXIT_OK
    assert marker.read_text() == "server-0\n"
    manifest = agent.manifest()
    assert manifest["status"] == "ok"
    assert manifest["topology"] == {"role": "server", "index": 0, "finish_problems": []}
    env = read_env(tmp_path / "server.env")
    assert env["SB_NODE_ROLE"] == "server" and env["SB_NODE_IP"] == server["ip"]


def test_every_hook_gets_the_topology_and_servers_run_theirs_before_the_clients(
    cluster: Cluster, tmp_path: Path
) -> None:
    primary = cluster.machine("client", 0)
    server = cluster.machine("server", 0)
    storage = cluster.machine("storage-node", 0)
    order = tmp_path / "order"
    server_plan = cluster.plan(
        server,
        setup=f"sleep 0.5; echo server >> {order}; " + ENV_DUMP.format(path=tmp_path / "server.env"),
    )
    storage_plan = cluster.plan(storage, setup=f"echo storage >> {order}")
    primary_plan = cluster.plan(
        primary,
        targets=[shared_target(tmp_path)],
        steps=[command_step("s1", "true")],
        setup=f"echo client >> {order}; " + ENV_DUMP.format(path=tmp_path / "client.env"),
        teardown=ENV_DUMP.format(path=tmp_path / "client-teardown.env"),
    )
    nodes = [cluster.start("server", server_plan), cluster.start("storage", storage_plan)]
    lead = cluster.start("primary", primary_plan)
    assert lead.wait(30) == EXIT_OK, lead.log()
    assert [n.wait(20) for n in nodes] == [EXIT_OK, EXIT_OK]
    assert order.read_text().splitlines()[-1] == "client"  # after both servers' setup
    client_env = read_env(tmp_path / "client.env")
    assert client_env["SB_NODE_ROLE"] == "client" and client_env["SB_NODE_INDEX"] == "0"
    assert client_env["SB_NODE_IP"] == primary["ip"]
    assert client_env["SB_NODES_CLIENT_IPS"] == primary["ip"]
    assert client_env["SB_NODES_SERVER_IPS"] == server["ip"]
    assert client_env["SB_NODES_STORAGE_NODE_IPS"] == storage["ip"]
    assert '"machines"' in Path(client_env["SB_TOPOLOGY"]).read_text()
    assert read_env(tmp_path / "client-teardown.env") == client_env
    server_env = read_env(tmp_path / "server.env")
    assert server_env["SB_NODE_ROLE"] == "server" and server_env["SB_NODES_CLIENT_IPS"] == primary["ip"]
    assert lead.manifest()["steps"][0]["status"] == "ok"


def test_a_failed_server_fails_the_primary_at_once_naming_it(cluster: Cluster, tmp_path: Path) -> None:
    primary = cluster.machine("client", 0)
    server = cluster.machine("server", 0)
    server_plan = cluster.plan(
        server, setup="echo no disk >&2; exit 3", teardown=f"touch {tmp_path}/server-down"
    )
    primary_plan = cluster.plan(
        primary,
        targets=[shared_target(tmp_path)],
        steps=[command_step("s1", "true")],
        setup=f"touch {tmp_path}/client-setup",
        teardown=f"touch {tmp_path}/client-down",
    )
    node = cluster.start("server", server_plan)
    started = time.monotonic()
    lead = cluster.start("primary", primary_plan)
    assert lead.wait(30) == EXIT_TOPOLOGY
    assert time.monotonic() - started < 10  # at once, not at ready_timeout_s
    manifest = lead.manifest()
    assert manifest["error"] == (
        f"NodeFailedError: server-0 (i-server0, {server['ip']}) failed: "
        "the setup hook exited with status 3 (see hooks/setup.out)"
    )
    assert manifest["steps"] == []
    assert not (tmp_path / "client-setup").exists()  # the client's setup never ran
    assert (tmp_path / "client-down").exists()  # its teardown did
    assert node.wait(20) == EXIT_PREPARE  # told to finish by the primary
    assert (tmp_path / "server-down").exists()
    assert node.manifest()["error"] == "the setup hook exited with status 3 (see hooks/setup.out)"


def test_servers_not_ready_in_time_fail_the_primary_naming_what_was_seen(
    cluster: Cluster, tmp_path: Path
) -> None:
    primary = cluster.machine("client", 0)
    cluster.machine("server", 0)  # never started: nothing answers on its address
    lead = cluster.start(
        "primary",
        cluster.plan(
            primary, targets=[shared_target(tmp_path)], steps=[command_step("s1", "true")], ready_timeout_s=1
        ),
    )
    assert lead.wait(30) == EXIT_TOPOLOGY
    error = lead.manifest()["error"]
    assert error.startswith(
        f"BarrierTimeoutError: not ready after 1 s: server-0 (i-server0, {cluster.net}.3): no answer"
    )
    problems = lead.manifest()["topology"]["finish_problems"]
    assert (
        problems and problems[0].startswith("server-0 (i-server0") and "was not told to finish" in problems[0]
    )


def test_a_killed_server_stops_the_run_between_steps_keeping_what_was_measured(
    cluster: Cluster, tmp_path: Path
) -> None:
    primary = cluster.machine("client", 0)
    server = cluster.machine("server", 0)
    node = cluster.start("server", cluster.plan(server))
    cluster.await_state(server, "ready")
    kill = f"kill -9 {node.process.pid}"  # the kernel closes its sockets at once (it stays a zombie)
    lead = cluster.start(
        "primary",
        cluster.plan(
            primary,
            targets=[shared_target(tmp_path)],
            steps=[command_step("s1", "echo measured"), command_step("s2", kill), command_step("s3", "true")],
        ),
    )
    assert lead.wait(40) == EXIT_TOPOLOGY
    node.process.wait(5)
    manifest = lead.manifest()
    assert manifest["error"].startswith(
        f"NodeLostError: server-0 (i-server0, {server['ip']}) stopped answering after step s2 (no answer from"
    )
    assert [(s["id"], s["status"]) for s in manifest["steps"]] == [("s1", "ok"), ("s2", "ok")]
    assert (lead.out / "steps" / "s1" / "run").is_dir()


def test_a_server_killed_while_setting_up_fails_the_primary_at_once(cluster: Cluster, tmp_path: Path) -> None:
    primary = cluster.machine("client", 0)
    server = cluster.machine("server", 0)
    node = cluster.start("server", cluster.plan(server, setup="sleep 30"))
    cluster.await_state(server, "setting-up")
    lead = cluster.start(
        "primary",
        cluster.plan(primary, targets=[shared_target(tmp_path)], steps=[command_step("s1", "true")]),
    )
    # the primary has seen it setting up:
    cluster.await_log(lead, f"server-0 (i-server0, {server['ip']}) answers: setting-up")
    killed = time.monotonic()
    os.killpg(node.process.pid, signal.SIGKILL)  # its machine dies: nothing listens any more
    assert lead.wait(30) == EXIT_TOPOLOGY
    assert time.monotonic() - killed < 15  # at once, not at ready_timeout_s (30 s)
    error = lead.manifest()["error"]
    assert error.startswith(
        f"NodeLostError: server-0 (i-server0, {server['ip']}) stopped answering while state setting-up"
    ), error
    assert lead.manifest()["steps"] == []


def test_a_node_stopped_by_a_signal_tears_down_and_exits(cluster: Cluster, tmp_path: Path) -> None:
    cluster.machine("client", 0)
    server = cluster.machine("server", 0)
    node = cluster.start("server", cluster.plan(server, teardown=f"touch {tmp_path}/down"))
    cluster.await_state(server, "ready")
    os.killpg(node.process.pid, signal.SIGTERM)  # the command's deadline or a cancel
    assert node.wait(20) == 130
    assert (tmp_path / "down").exists()
    assert node.manifest()["status"] == "failed"

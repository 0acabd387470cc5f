"""Several clients: extra clients serve fio, the primary drives them all with one fio --client."""

from __future__ import annotations

import json
import os
import shutil
import signal
from pathlib import Path
from typing import Any, Dict

import pytest
from machines import Cluster

from storagebench.agent.runner import EXIT_OK, EXIT_PREPARE, EXIT_TOPOLOGY

pytestmark = pytest.mark.skipif(shutil.which("fio") is None, reason="fio is not installed")


def fio_step(cluster: Cluster, clients: list) -> Dict[str, Any]:  # type: ignore[type-arg]
    return {
        "id": "randrw-4k.r1",
        "workload": "randrw-4k",
        "target": "shared",
        "repetition": 1,
        "clients": [f"{m['ip']},{cluster.fio_port}" for m in clients],
        "phases": [
            {
                "name": "measure",
                "engine": "fio",
                "fio": {
                    "global_options": {"ioengine": "psync", "time_based": 1, "runtime": 1, "size": "4m"},
                    "jobs": [{"name": "randrw", "options": {"rw": "randrw", "bs": "4k"}}],
                },
            }
        ],
    }


def client_output(path: Path) -> Dict[str, Any]:
    """The JSON document of fio's client output (after the servers' text lines)."""
    text = path.read_text()
    return dict(json.loads(text[text.index("\n{") + 1 if not text.startswith("{") else 0 :]))


@pytest.mark.fio
def test_the_primary_runs_one_fio_phase_on_every_client_at_once(cluster: Cluster, tmp_path: Path) -> None:
    primary = cluster.machine("client", 0)
    extra = cluster.machine("client", 1)
    server = cluster.machine("server", 0)
    shared = tmp_path / "shared"
    shared.mkdir()
    target = {"id": "shared", "kind": "directory", "path": str(shared)}
    order = tmp_path / "teardowns"
    nodes = [
        cluster.start("server", cluster.plan(server, teardown=f"echo server >> {order}")),
        cluster.start(
            "extra",
            cluster.plan(
                extra,
                targets=[target],
                setup=f'echo "$SB_NODES_CLIENT_IPS" > {tmp_path}/extra.ips',
                teardown=f"sleep 0.3; echo client-1 >> {order}",
            ),
        ),
    ]
    lead = cluster.start(
        "primary",
        cluster.plan(
            primary,
            targets=[target],
            steps=[fio_step(cluster, [primary, extra])],
            teardown=f"echo client-0 >> {order}",
        ),
    )
    assert lead.wait(60) == EXIT_OK, lead.log()
    assert [n.wait(20) for n in nodes] == [EXIT_OK, EXIT_OK]
    assert order.read_text().split() == ["client-0", "client-1", "server"]  # clients before servers
    phase = lead.out / "steps" / "randrw-4k.r1" / "measure"
    document = client_output(phase / "fio.json")
    stats = document["client_stats"]
    hosts = sorted({entry["hostname"] for entry in stats if entry["jobname"] != "All clients"})
    assert hosts == sorted([primary["ip"], extra["ip"]])
    assert all(entry["port"] == cluster.fio_port for entry in stats)
    [total] = [entry for entry in stats if entry["jobname"] == "All clients"]
    per_client = [entry for entry in stats if entry["jobname"] == "randrw"]
    assert total["read"]["total_ios"] == sum(e["read"]["total_ios"] for e in per_client) > 0
    [result] = lead.manifest()["steps"][0]["phases"]
    assert result["status"] == "ok" and result["clients"] == fio_step(cluster, [primary, extra])["clients"]
    assert "fio.json" in result["files"] and "job.fio" in result["files"]
    logs = [path.name for path in (phase / "ts").iterdir()]
    assert any(name.endswith(primary["ip"]) for name in logs) and any(
        name.endswith(extra["ip"]) for name in logs
    )
    assert (tmp_path / "extra.ips").read_text().split() == [primary["ip"], extra["ip"]]
    assert (cluster.root / "extra" / "out" / "fio-server.log").exists()
    # one config on one host: the extra client's names carry its role and index, never the primary's
    [lead_target] = lead.manifest()["targets"]
    [extra_target] = nodes[1].manifest()["targets"]
    assert lead_target["path"] == str(shared / "storagebench-r-topo-c1-shared")
    assert extra_target["path"] == str(shared / "storagebench-r-topo-c1-client-1-shared")
    assert list(shared.iterdir()) == []  # each removed its own on teardown


@pytest.mark.fio
def test_an_extra_client_waits_for_the_servers_and_fails_with_their_error(
    cluster: Cluster, tmp_path: Path
) -> None:
    cluster.machine("client", 0)
    extra = cluster.machine("client", 1)
    server = cluster.machine("server", 0)
    node = cluster.start("server", cluster.plan(server, setup="exit 4"))
    client = cluster.start("extra", cluster.plan(extra, setup=f"touch {tmp_path}/extra-setup"))
    seen = cluster.await_state(extra, "failed")
    assert seen["error"] == (
        f"NodeFailedError: server-0 (i-server0, {server['ip']}) failed: "
        "the setup hook exited with status 4 (see hooks/setup.out)"
    )
    assert not (tmp_path / "extra-setup").exists()
    assert cluster.finish(extra) == 202 and cluster.finish(server) == 202
    cluster.await_state(extra, "finished")  # a finished node lingers until someone has seen it finished
    cluster.await_state(server, "finished")
    assert client.wait(20) == EXIT_TOPOLOGY and node.wait(20) != EXIT_OK


@pytest.mark.fio
def test_an_extra_client_whose_fio_server_dies_says_failed_and_the_primary_stops(
    cluster: Cluster, tmp_path: Path
) -> None:
    primary = cluster.machine("client", 0)
    extra = cluster.machine("client", 1)
    shared = tmp_path / "shared"
    shared.mkdir()
    target = {"id": "shared", "kind": "directory", "path": str(shared)}
    client = cluster.start("extra", cluster.plan(extra, targets=[target]))
    cluster.await_state(extra, "ready")
    servers = {
        p.name
        for p in Path("/proc").iterdir()
        if p.name.isdigit() and _is_fio_server(p.name, extra["ip"], cluster.fio_port)
    }
    # the agent's listening probe makes fio fork a child for that connection: it may still be there
    pid_of_fio = [pid for pid in servers if _parent_of(pid) not in servers]
    assert len(pid_of_fio) == 1
    os.kill(int(pid_of_fio[0]), signal.SIGKILL)
    seen = cluster.await_state(extra, "failed")
    assert seen["error"].startswith(f"fio --server on {extra['ip']},{cluster.fio_port} exited with status -9")
    steps = [
        {
            "id": f"s{i}",
            "target": "shared",
            "repetition": 1,
            "phases": [{"name": "run", "engine": "command", "command": {"script": "true"}}],
        }
        for i in (1, 2)
    ]
    lead = cluster.start("primary", cluster.plan(primary, targets=[target], steps=steps))
    assert lead.wait(30) == EXIT_TOPOLOGY
    assert lead.manifest()["error"].startswith(
        f"NodeFailedError: client-1 (i-client1, {extra['ip']}) failed: fio --server"
    )
    assert client.wait(20) == EXIT_PREPARE  # told to finish by the primary, then exits non-zero
    assert client.manifest()["error"].startswith(f"fio --server on {extra['ip']},{cluster.fio_port} exited")


def _parent_of(pid: str) -> str:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return ""
    return stat.rsplit(")", 1)[1].split()[1]  # the field after the state; comm may hold spaces


def _is_fio_server(pid: str, ip: str, port: int) -> bool:
    try:
        argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return False
    return bool(argv) and argv[0].endswith(b"fio") and f"--server={ip},{port}".encode() in argv

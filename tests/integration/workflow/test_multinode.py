"""A config of three machines end to end: one server node and two clients, on this machine.

Each machine is a local instance of its own (own metadata service, own /opt and /var/lib paths, own
loopback address, 127.x.y.z for its VPC address 10.x.y.z) running the stack's SSM document with its
own plan. The server's setup hook starts a user-space HTTP server on its address; each client's
setup hook can only succeed once that server answers (so the servers' hooks ran first), checks that
another user of the machine cannot reach it (the local session's fence), and writes what its
topology environment says into the shared directory; the workloads run on both clients at once
through fio's client/server mode. Stored: one record per client and one aggregate per step and
direction. Then the fault matrix kills the server and a client mid-run: each run ends with every
machine, volume, security group and loop device released.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

from storagebench_local.adapters.faults import Fault

from .conftest import SUMMARY, Bench, RunResult, request

pytestmark = [pytest.mark.root, pytest.mark.slow]

SERVER_SETUP = """set -eu
mkdir -p /var/lib/storagebench/served
echo "$SB_NODE_ROLE-$SB_NODE_INDEX" > /var/lib/storagebench/served/hello
python3 -m http.server 9000 --bind "$SB_NODE_IP" --directory /var/lib/storagebench/served >/dev/null 2>&1 &
echo $! > /var/lib/storagebench/http.pid
for _ in $(seq 100); do
  python3 -c "import urllib.request; urllib.request.urlopen('http://$SB_NODE_IP:9000/hello', timeout=1)" \
    2>/dev/null && exit 0
  sleep 0.1
done
echo "the HTTP server did not come up on $SB_NODE_IP:9000" >&2; exit 1
"""
SERVER_TEARDOWN = 'kill "$(cat /var/lib/storagebench/http.pid)" || true'
CLIENT_SETUP = """set -eu
hello="http://$SB_NODES_SERVER_IPS:9000/hello"
served=$(python3 -c "import sys, urllib.request; print(urllib.request.urlopen(sys.argv[1], timeout=5).read().decode().strip())" "$hello")
# another user of this machine, as nobody: the session's fence (local instances' security group) refuses it
if setpriv --reuid=65534 --regid=65534 --clear-groups bash -c "exec 3<>/dev/tcp/$SB_NODES_SERVER_IPS/9000" 2>/dev/null
then nobody=reached; else nobody=refused; fi
SERVED="$served" NOBODY="$nobody" python3 - "{shared}" <<'EOF'
import json, os, sys
keys = ("SB_NODE_ROLE", "SB_NODE_INDEX", "SB_NODE_IP", "SB_NODES_SERVER_IPS", "SB_NODES_CLIENT_IPS")
seen = {k: os.environ.get(k) for k in keys}
seen["topology"] = json.load(open(os.environ["SB_TOPOLOGY"]))["self"]
seen["served"] = os.environ["SERVED"]
seen["nobody"] = os.environ["NOBODY"]
with open(os.path.join(sys.argv[1], f"client-{os.environ['SB_NODE_INDEX']}.json"), "w") as out:
    json.dump(seen, out)
EOF
"""  # noqa: E501


def three_machines(shared: Path, config_id: str = "three") -> dict[str, Any]:
    shared.mkdir(parents=True, exist_ok=True)
    return {
        "id": config_id,
        "instance_type": "c5.large",
        "clients": 2,
        "targets": [{"kind": "local", "id": "shared", "path": str(shared)}],
        "setup": CLIENT_SETUP.replace("{shared}", str(shared)),
        "nodes": [
            {
                "role": "server",
                "instance_type": "c5.large",
                "ports": ["tcp/9000"],
                "setup": SERVER_SETUP,
                "teardown": SERVER_TEARDOWN,
            }
        ],
    }


def workloads(runtime_s: int) -> list[dict[str, Any]]:
    params = {"runtime": runtime_s, "ramp_time": 0, "size": "16m", "numjobs": 1}
    return [
        {"profile": "std-randread-4k", "params": params},
        {"profile": "std-seqread-1m", "params": params},
    ]


@pytest.fixture(scope="module")
def healthy(bench: Bench) -> RunResult:
    shared = bench.directory("multinode-shared")
    started = time.monotonic()
    result = bench.run(request("wf-three-machines", [three_machines(shared)], workloads=workloads(3)))
    SUMMARY["measured"]["3-machine config (1 server, 2 clients), 2 fio workloads x 3 s (s)"] = round(
        time.monotonic() - started, 1
    )
    return result


def test_the_three_machines_run_end_to_end(healthy: RunResult) -> None:
    assert healthy.execution.status == "SUCCEEDED", (healthy.execution.error, healthy.execution.cause)
    config = healthy.configs["three"]
    assert config["status"] == "succeeded" and config["errors"] == [] and config["leftovers"] == [], config
    assert healthy.leaks == []


def test_the_servers_hooks_ran_first_and_every_client_saw_the_topology(
    bench: Bench, healthy: RunResult
) -> None:
    shared = bench.directory("multinode-shared")
    seen = {p.name: json.loads(p.read_text()) for p in sorted(shared.glob("client-*.json"))}
    assert set(seen) == {"client-0.json", "client-1.json"}
    server_ip = seen["client-0.json"]["SB_NODES_SERVER_IPS"]
    assert server_ip.startswith("127.") and seen["client-1.json"]["SB_NODES_SERVER_IPS"] == server_ip
    for index in (0, 1):
        entry = seen[f"client-{index}.json"]
        assert entry["served"] == "server-0"  # the server answered: its setup had run
        assert entry["nobody"] == "refused"  # to root only: the fence of local instances (issue 27 #6)
        assert entry["SB_NODE_ROLE"] == "client" and entry["SB_NODE_INDEX"] == str(index)
        assert entry["topology"] == {"role": "client", "index": index}
        assert entry["SB_NODES_CLIENT_IPS"].split() == [
            seen["client-0.json"]["SB_NODE_IP"],
            seen["client-1.json"]["SB_NODE_IP"],
        ]


def test_per_client_and_aggregate_records_are_stored(bench: Bench, healthy: RunResult) -> None:
    results = [r["record"] for r in bench.results_of(healthy.run_id, "three")]
    fio = [r for r in results if r["engine"] == "fio"]
    aggregates = [r for r in fio if r.get("clients") == 2]
    per_client = [r for r in fio if r.get("client")]
    # the workload's name carries its parameters: std-randread-4k[numjobs=1,...]
    assert sorted(r["workload"].split("[")[0] for r in aggregates) == ["std-randread-4k", "std-seqread-1m"], (
        fio
    )
    assert len(per_client) == 2 * len(aggregates) and len(fio) == 3 * len(aggregates)
    for aggregate in aggregates:
        mine = [
            r
            for r in per_client
            if (r["workload"], r["direction"], r["repetition"])
            == (aggregate["workload"], aggregate["direction"], aggregate["repetition"])
        ]
        assert len(mine) == 2 and {r["client_index"] for r in mine} == {1, 2}
        assert all(r["client"].startswith("127.") for r in mine)  # each client's loopback address
        # as fio's All clients: I/O summed over the longest runtime
        ios = sum(r["ios"] for r in mine)
        assert aggregate["ios"] == ios > 0
        longest = max(r["runtime_s"] for r in mine)
        assert aggregate["iops"] == pytest.approx(ios / longest, rel=1e-6)
    assert healthy.configs["three"]["records"] == len(results)


@pytest.mark.parametrize("machine", ["server-0", "client-1"])
def test_a_machine_killed_mid_run_leaks_nothing(bench: Bench, machine: str) -> None:
    shared = bench.directory(f"multinode-dying-{machine}")
    document = request(f"wf-three-{machine}", [three_machines(shared, "dying")], workloads=workloads(6))
    started = time.monotonic()
    result = bench.run(document, [Fault(f"node.run/{machine}", "instance_died", "dying", after_s=3.0)])
    assert result.fired_count(f"node.run/{machine}", "dying") == 1
    config = result.configs["dying"]
    SUMMARY["measured"][f"3-machine config, {machine} killed 3 s after it was ready"] = {
        "status": config["status"],
        "records kept": config["records"],
        "errors": [f"{e['step']}: {e['error']}: {e['cause'][:90]}" for e in config["errors"]],
        "leaks": len(result.leaks),
        "wall (s)": round(time.monotonic() - started, 1),
    }
    assert config["status"] in ("failed", "partial"), config
    assert any(machine in json.dumps(error) for error in config["errors"]), config["errors"]
    assert config["leftovers"] == [] and result.leaks == []

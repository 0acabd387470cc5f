"""The virtual SAN's controller loss end to end on this machine: a 3-node config (one client, two
controllers) whose first controller powers itself off mid-run, and the record's pause
and recovery.

Each machine is a local instance (own metadata service, paths and loopback address). Each
controller's setup hook starts ``storagebench_local/nbd_multipath.py controller`` on its address,
serving one backing file (both controllers serve the same file: io2 multi-attach); the client's
setup hook starts its multipath NBD server (both controllers' addresses, a path silent for 1 s
fails over). The workload is a fio job file on fio's ``nbd`` engine through that multipath, with
``node_loss`` on controller 0 at 4 s. The workflow gives controller 0 its ``power_off``; the primary
tells it when fio starts; its agent runs ``systemctl poweroff``, which on a local instance freezes
every process of that instance (``ssm/power/systemctl``), the controller's server among them. The
client's I/O stalls until the multipath fails over; the agent's 100 ms logs measure the pause and
the recovery; Collect stores them on the record; Cleanup terminates the frozen instance.

Real: the workflow (ASL on moto's interpreter, the handlers), the node's plan, the agents' control
endpoints, the power-off call, fio and its I/O over NBD to the controllers, the failover, the
measurement, the store. Stand-ins: the machine's power button (frozen processes, not a kernel
going down), the controllers and multipath (user-space NBD instead of nvmet/NVMe-TCP and
dm-multipath, which this kernel lacks).
"""

from __future__ import annotations

import socket
import time
from pathlib import Path
from typing import Any

import pytest
from tests.support.host import fio_has_nbd

from .conftest import SUMMARY, Bench, RunResult, request

pytestmark = [pytest.mark.root, pytest.mark.slow, pytest.mark.fio]

MODULE = Path(__file__).resolve().parents[3] / "local" / "storagebench_local" / "nbd_multipath.py"
SIZE = 64 << 20
CONTROLLER_PORT = 10809
AT_S = 4.0
RUNTIME_S = 12
FAILOVER_MS = 1000

LISTENING = """for _ in $(seq 100); do
  python3 -c "import socket, sys; socket.create_connection((sys.argv[1], int(sys.argv[2])), 1).close()" \\
    "{host}" {port} 2>/dev/null && exit 0
  sleep 0.1
done
echo "nothing listens on {host}:{port}" >&2; exit 1
"""
CONTROLLER_SETUP = """set -eu
python3 {module} controller --file {volume} --listen "$SB_NODE_IP:{port}" \\
  >/var/lib/storagebench/controller.log 2>&1 &
echo $! > /var/lib/storagebench/controller.pid
""" + LISTENING.replace("{host}", "$SB_NODE_IP")
CLIENT_SETUP = """set -eu
paths=""
for ip in $SB_NODES_CONTROLLER_IPS; do paths="$paths $ip:{port}"; done
python3 {module} multipath --paths $paths --size {size} --listen 127.0.0.1:{nbd} --timeout-ms {failover} \\
  >/var/lib/storagebench/multipath.log 2>&1 &
echo $! > /var/lib/storagebench/multipath.pid
""" + LISTENING.replace("{host}", "127.0.0.1").replace("{port}", "{nbd}")
STOP = 'kill "$(cat /var/lib/storagebench/{name}.pid)" || true'


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def vsan(bench: Bench, nbd_port: int) -> dict[str, Any]:
    volume = bench.directory("vsan-volume") / "volume.img"
    volume.parent.mkdir(parents=True, exist_ok=True)
    volume.write_bytes(bytes(SIZE))  # allocated: a sparse file's first writes would ramp the rate up
    shared = bench.directory("vsan-client")
    shared.mkdir(parents=True, exist_ok=True)
    fill = {"{module}": str(MODULE), "{volume}": str(volume), "{port}": str(CONTROLLER_PORT)}
    fill |= {"{size}": str(SIZE), "{nbd}": str(nbd_port), "{failover}": str(FAILOVER_MS)}

    def filled(text: str) -> str:
        for key, value in fill.items():
            text = text.replace(key, value)
        return text

    return {
        "id": "vsan-loss",
        "instance_type": "c5.large",
        "targets": [{"kind": "local", "id": "vsan", "path": str(shared)}],
        "setup": filled(CLIENT_SETUP),
        "teardown": STOP.format(name="multipath"),
        "nodes": [
            {
                "role": "controller",
                "count": 2,
                "instance_type": "c5.large",
                "ports": [f"tcp/{CONTROLLER_PORT}"],
                "setup": filled(CONTROLLER_SETUP),
                "teardown": STOP.format(name="controller"),
            }
        ],
    }


def job_file(nbd_port: int) -> str:
    return "\n".join(
        [
            "[global]",
            "ioengine=nbd",
            f"uri=nbd://127.0.0.1:{nbd_port}/",
            "time_based=1",
            f"runtime={RUNTIME_S}s",
            f"size={SIZE}",
            "[w]",
            "rw=randwrite",
            "bs=4k",
            "iodepth=4",
            "",
        ]
    )


@pytest.fixture(scope="module")
def lost(bench: Bench) -> RunResult:
    if not fio_has_nbd():
        pytest.skip("needs fio with its nbd engine (libnbd)")
    nbd_port = _free_port()
    workload = {
        "profile": "fio-custom",
        "params": {"job_file": job_file(nbd_port)},
        "node_loss": {"role": "controller", "index": 0, "after_s": AT_S},
    }
    started = time.monotonic()
    result = bench.run(
        request("wf-vsan-controller-loss", [vsan(bench, nbd_port)], workloads=[workload]), timeout_s=150
    )
    SUMMARY["measured"]["3-node vSAN stand-in, controller-0 powered off 4 s into 12 s (s)"] = round(
        time.monotonic() - started, 1
    )
    return result


def test_the_config_succeeds_and_leaves_nothing(lost: RunResult) -> None:
    assert lost.execution.status == "SUCCEEDED", (lost.execution.error, lost.execution.cause)
    config = lost.configs["vsan-loss"]
    assert config["status"] == "succeeded" and config["errors"] == [] and config["leftovers"] == [], config
    assert lost.leaks == []


def test_the_record_has_the_pause_and_the_recovery(bench: Bench, lost: RunResult) -> None:
    records = [r["record"] for r in bench.results_of(lost.run_id, "vsan-loss")]
    (write,) = [r for r in records if r["engine"] == "fio" and r["direction"] == "write"]
    loss = write["node_loss"]
    iops = loss["iops"]
    print(f"controller loss measured (IOPS): {iops}")
    SUMMARY["measured"]["3-node vSAN stand-in, controller-0 lost: write IOPS"] = {
        key: iops[key]
        for key in ("before", "after", "pause_s", "pause_start_s", "recovery_s", "after_pct_of_before")
    }
    assert (loss["role"], loss["index"], loss["at_s"]) == ("controller", 0, AT_S)
    assert iops["before"] > 0
    # the frozen controller answers nothing: I/O stalls until the multipath's 1 s path timeout
    assert 0.2 <= iops["pause_s"] <= FAILOVER_MS / 1000 + 1.5, iops
    # dated on fio's clock from the primary's word: the stall starts at the removal, give or take the
    # stand-in's freeze (one grep over /proc) and a 100 ms interval
    start = iops["pause_start_s"]
    assert start is not None and -0.3 <= start <= 1.0, iops
    assert iops["recovered"] is True and iops["recovery_s"] is not None, iops
    assert iops["recovery_s"] >= start + iops["pause_s"] - 0.15, iops

"""A controller lost mid-run on a real I/O path, measured by the agent end to end.

fio (its ``nbd`` engine: libnbd, user space) writes through ``storagebench_local.nbd_multipath``: an
NBD server that sends each request to one of two controller processes serving one backing file (io2
multi-attach), failing a path that does not answer within 1 s over to the other. The agent runs the
phase with ``node_loss`` (100 ms rate logs, then ``agent.node_loss``); at ``at_s`` into fio's run the
test freezes controller 0 (SIGSTOP: its socket goes silent as a stopped machine's does, no reset).

Real: fio's I/O, the NBD protocol, the controllers' reads and writes of the shared file, the path
going silent, the failover, the 100 ms logs and the agent's measurement. Not real: the removal is
the test's (in tests/integration/workflow/test_node_loss_local.py the node powers itself off), the
controllers are processes on this machine rather than nodes of a local topology, and the multipath
is this module's, not the kernel's.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.support.host import fio_has_nbd

from storagebench.agent.engines import PhaseContext, run_phase

pytestmark = [pytest.mark.fio, pytest.mark.slow]

SIZE = 64 << 20
AT_S = 4.0
TIMEOUT_MS = 1000
RUNTIME_S = 10


def _port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _wait_listening(port: int) -> None:
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return
        except OSError:
            time.sleep(0.05)
    raise AssertionError(f"nothing listens on 127.0.0.1:{port}")


def _client_connected(port: int) -> bool:
    """Whether a client holds an established connection to 127.0.0.1:``port`` (/proc/net/tcp)."""
    local = f"0100007F:{port:04X}"
    rows = Path("/proc/net/tcp").read_text().splitlines()[1:]
    return any(row.split()[1] == local and row.split()[3] == "01" for row in rows)


@pytest.fixture
def vsan(tmp_path: Path) -> Iterator[tuple[list[subprocess.Popen[bytes]], int]]:
    if not fio_has_nbd():
        pytest.skip("needs fio with its nbd engine (libnbd)")
    volume = tmp_path / "volume.img"
    with volume.open("wb") as handle:
        handle.truncate(SIZE)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    module = [sys.executable, "-m", "storagebench_local.nbd_multipath"]
    ports = [_port(), _port()]
    started: list[subprocess.Popen[bytes]] = []
    try:
        for port in ports:
            started.append(
                subprocess.Popen(
                    [*module, "controller", "--file", str(volume), "--listen", f"127.0.0.1:{port}"], env=env
                )
            )
            _wait_listening(port)
        nbd = _port()
        paths = [f"127.0.0.1:{port}" for port in ports]
        argv = [*module, "multipath", "--paths", *paths, "--size", str(SIZE), "--listen", f"127.0.0.1:{nbd}"]
        started.append(subprocess.Popen([*argv, "--timeout-ms", str(TIMEOUT_MS)], env=env))
        _wait_listening(nbd)
        yield started, nbd
    finally:
        for process in started:
            process.send_signal(signal.SIGCONT)
            process.kill()
            process.wait(timeout=10)


def test_a_frozen_controller_pauses_the_io_until_the_failover(
    vsan: tuple[list[subprocess.Popen[bytes]], int], tmp_path: Path
) -> None:
    processes, nbd = vsan
    phase_dir = tmp_path / "phase"
    workdir = tmp_path / "work"
    workdir.mkdir()
    options = {
        "rw": "randwrite",
        "bs": "4k",
        "size": SIZE,
        "time_based": 1,
        "runtime": RUNTIME_S,
        "iodepth": 4,
    }
    phase = {
        "name": "run",
        "engine": "fio",
        "fio": {
            "global_options": {"ioengine": "nbd", "uri": f"nbd://127.0.0.1:{nbd}/"},
            "jobs": [{"name": "w", "options": options}],
        },
        "node_loss": {"role": "controller", "index": 0, "at_s": AT_S},
    }
    removed: list[float] = []

    def remove_controller() -> None:  # the workflow's part: at at_s into fio's run
        while not _client_connected(nbd):  # fio's job starts with its NBD handshake
            time.sleep(0.01)
        started = time.monotonic()
        time.sleep(AT_S)
        processes[0].send_signal(signal.SIGSTOP)
        removed.append(time.monotonic() - started)

    remover = threading.Thread(target=remove_controller, daemon=True)
    remover.start()
    context = PhaseContext(str(workdir), "filesystem", str(workdir), str(phase_dir), None, is_root=False)
    result = run_phase(phase, context)  # type: ignore[arg-type]
    remover.join(timeout=5)
    assert result["status"] == "ok", result.get("error")
    assert removed, "the controller was never frozen"
    assert "node_loss_error" not in result, result.get("node_loss_error")
    write = result["node_loss"]["write"]
    print(f"node loss measured: {write}")
    # The frozen path answers nothing for TIMEOUT_MS before the request is re-sent on the survivor.
    assert 0.5 <= write["pause_s"] <= TIMEOUT_MS / 1000 + 1.0
    # The removal is timed from fio's NBD connection, fio's clock from its job's start just after
    # the handshake: the freeze lands within a few 100 ms windows of at_s.
    start = write["pause_start_s"]
    assert start is not None and -0.5 <= start <= 0.5
    assert write["recovered"] is True
    assert write["recovery_s"] is not None and write["recovery_s"] >= start + write["pause_s"] - 0.15

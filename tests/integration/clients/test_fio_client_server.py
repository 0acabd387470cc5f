"""Aggregation across clients on real fio client/server output, produced here.

Two ``fio --server`` daemons (loopback, free ports, each in its own directory) and one
``fio --client=... --client=... --output-format=json+`` run: the aggregate must be fio's own
"All clients" entry (I/Os, bytes and runtime exactly; rates to fio's rounding; latency mean and
stdev to its printed decimals; percentiles when this fio prints them, from 3.39 on) and the sums
of the per-client entries by hand. Skipped, with the reason, where fio is not installed.
"""

from __future__ import annotations

import math
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from storagebench.results.clients.aggregate import (
    aggregate_clients,
    all_clients_disagreements,
    client_records,
)
from storagebench.results.clients.errors import AggregateWithheldError, MissingClientError
from storagebench.results.clients.output import ALL_CLIENTS, load_client_json, split_clients
from storagebench.results.fio_latency import merge_bins, percentile_from_bins

FIO = shutil.which("fio")
pytestmark = pytest.mark.skipif(
    FIO is None, reason="fio is not installed: no client/server run to compare with"
)

JOB = """\
[global]
ioengine=psync
rw=randrw
rwmixread=70
bs=4k
size=8m
time_based=1
runtime=2
lat_percentiles=1
[mix]
numjobs=2
"""


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_listening(port: int, server: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise RuntimeError(f"fio --server on port {port} exited with {server.returncode}")
        with socket.socket() as sock:
            if sock.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.05)
    raise RuntimeError(f"fio --server on port {port} is not listening after 10 s")


@pytest.fixture
def servers(tmp_path: Path) -> Iterator[list[str]]:
    """Two fio servers; their ``--client`` connect strings. Stopped (by their own pid) after the test."""
    started: list[subprocess.Popen[bytes]] = []
    clients: list[str] = []
    try:
        for index in (1, 2):
            directory = tmp_path / f"server{index}"
            directory.mkdir()
            port = free_port()
            server = subprocess.Popen(
                [str(FIO), f"--server=ip:127.0.0.1,{port}"],
                cwd=directory,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
            started.append(server)
            wait_listening(port, server)
            clients.append(f"127.0.0.1,{port}")
        yield clients
    finally:
        for server in started:
            server.terminate()
        for server in started:
            try:
                server.wait(timeout=10)
            except subprocess.TimeoutExpired:
                server.kill()
                server.wait()


def run_clients(tmp_path: Path, clients: list[str]) -> str:
    job = tmp_path / "randrw.fio"
    job.write_text(JOB)
    command = [str(FIO), "--output-format=json+"]
    for client in clients:
        command += [f"--client=ip:{client}", str(job)]
    done = subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_the_aggregate_is_fios_all_clients_and_the_clients_summed(tmp_path: Path, servers: list[str]) -> None:
    output = run_clients(tmp_path, servers)
    results = aggregate_clients(split_clients(output, servers, "fio.json"))
    assert results.errors == [] and all_clients_disagreements(results) == []

    raw = load_client_json(output)
    entries = [e for e in raw["client_stats"] if e["jobname"] != ALL_CLIENTS]
    (fio_sum,) = [e for e in raw["client_stats"] if e["jobname"] == ALL_CLIENTS]
    assert len(entries) == 4  # numjobs=2 on each server
    assert {r.direction for r in (a.result for a in results.aggregates)} == {"read", "write"}
    for aggregate in results.aggregates:
        ours, direction = aggregate.result, aggregate.result.direction
        theirs = fio_sum[direction]
        # fio's own sum: I/Os, bytes and runtime exactly; rates to its rounding.
        assert (ours.ios, ours.io_bytes, ours.runtime_max_ms) == (
            theirs["total_ios"],
            theirs["io_bytes"],
            theirs["runtime"],
        )
        assert math.floor(ours.bw_bytes_per_s) == theirs["bw_bytes"]
        assert ours.iops == pytest.approx(theirs["iops"], abs=1e-6)
        assert ours.latency is not None
        assert ours.latency.mean_us * 1000 == pytest.approx(theirs["lat_ns"]["mean"], abs=1e-6)
        assert ours.latency.stdev_us * 1000 == pytest.approx(theirs["lat_ns"]["stddev"], rel=1e-6)
        # The per-client entries summed by hand.
        ios = sum(e[direction]["total_ios"] for e in entries)
        runtime = max(e[direction]["runtime"] for e in entries)
        assert ours.ios == ios and ours.iops == ios * 1000 / runtime
        # Percentiles: the clients' json+ bins merged and walked as fio walks them; fio's own when it
        # prints them for "All clients" (fio >= 3.39; 3.33 prints none).
        merged = merge_bins({int(k): v for k, v in e[direction]["lat_ns"]["bins"].items()} for e in entries)
        assert ours.latency.p99_us is not None
        assert ours.latency.p99_us * 1000 == percentile_from_bins(merged, 99.0)
        printed = theirs["lat_ns"].get("percentile")
        if printed is not None:
            assert ours.latency.p99_us * 1000 == printed["99.000000"]

    records = client_records(
        results,
        config_id="efs-2",
        target_id="efs0",
        workload="randrw",
        profile="oltp",
        repetition=1,
        phase="run",
    )
    per_client = [r for r in records if r.client is not None]
    totals = [r for r in records if r.clients == 2]
    assert len(per_client) == 4 and len(totals) == 2
    for total in totals:
        mine = [r for r in per_client if r.direction == total.direction]
        assert total.ios == sum(r.ios or 0 for r in mine)
        assert total.bytes == sum(r.bytes for r in mine)
        assert total.client_spread is not None
        assert total.client_spread.iops_min == min(r.iops or 0 for r in mine)


def test_a_server_that_is_down_is_a_missing_client_though_fio_exits_0(
    tmp_path: Path, servers: list[str]
) -> None:
    down = f"127.0.0.1,{free_port()}"
    job = tmp_path / "randrw.fio"
    job.write_text(JOB.replace("runtime=2", "runtime=1"))
    command = [
        str(FIO),
        "--output-format=json+",
        f"--client=ip:{servers[0]}",
        str(job),
        f"--client=ip:{down}",
        str(job),
    ]
    done = subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0 and "failed to connect" in done.stderr  # fio itself does not fail
    results = aggregate_clients(split_clients(done.stdout, [servers[0], down], "fio.json"))
    missing, withheld = results.errors
    assert isinstance(missing, MissingClientError) and missing.index == 2
    assert isinstance(withheld, AggregateWithheldError) and results.aggregates == []
    assert [r.client.index for r in results.per_client] == [1]
    assert sum(part.ios for part in results.per_client[0].parts) > 0  # what it measured is kept

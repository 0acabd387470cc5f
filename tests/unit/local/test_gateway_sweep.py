"""`storagebench cleanup --run` after a killed local session: the run's File Gateway stand-ins (an
nfs-ganesha in a process session of its own, the appliance's directory) are found by the run and
config their directory names, stopped and removed; another run's are left alone."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.support.processes import started_processes

from storagebench_local.gateway_sweep import ganesha_under, sweep_gateways, write_owner


@pytest.fixture
def servers() -> Iterator[list[subprocess.Popen[bytes]]]:
    yield from started_processes()


def fake_ganesha(directory: Path, started: list[subprocess.Popen[bytes]]) -> subprocess.Popen[bytes]:
    """A process whose command line is ganesha's (``ganesha.nfsd -F -f <conf>``), sleeping."""
    config = directory / "nfs-server" / "ganesha.conf"
    config.parent.mkdir(parents=True)
    config.write_text("")
    script = f'exec -a /usr/bin/ganesha.nfsd {sys.executable} -c "import time; time.sleep(60)" -F -f "$0"'
    process = subprocess.Popen(["bash", "-c", script, str(config)], start_new_session=True)
    started.append(process)
    return process


def wait_listed(directory: Path, pid: int) -> None:
    for _ in range(100):
        if pid in ganesha_under(directory):
            return
        subprocess.run(["sleep", "0.02"], check=True)
    raise AssertionError(f"{pid} never showed as ganesha under {directory}")


def test_the_runs_servers_are_stopped_and_their_directories_removed(
    tmp_path: Path, servers: list[subprocess.Popen[bytes]]
) -> None:
    mine, other, sibling = tmp_path / "i-mine", tmp_path / "i-other", tmp_path / "i-sibling"
    write_owner(mine, "run-1", "gw")
    write_owner(sibling, "run-1", "gw-b")
    write_owner(other, "run-2", "gw")
    doomed = fake_ganesha(mine, servers)
    kept = fake_ganesha(other, servers)
    wait_listed(mine, doomed.pid)
    wait_listed(other, kept.pid)

    removed, left = sweep_gateways(tmp_path, "run-1", "gw")
    assert removed == [f"NFS server (ganesha, pid {doomed.pid}) of i-mine", f"appliance directory {mine}"]
    assert left == []
    assert doomed.wait(timeout=10) is not None and not mine.exists()
    assert kept.poll() is None and other.exists() and sibling.exists()  # another run, another config

    removed, _ = sweep_gateways(tmp_path, "run-1")  # without --config: every config of the run
    assert removed == [f"appliance directory {sibling}"]


def test_an_unreadable_owner_is_said_not_guessed(tmp_path: Path) -> None:
    (tmp_path / "i-x").mkdir()
    (tmp_path / "i-x" / "owner.json").write_text("{not json")
    removed, left = sweep_gateways(tmp_path, "run-1")
    assert removed == [] and len(left) == 1 and "unreadable" in left[0]
    assert (tmp_path / "i-x").exists()


def test_cleanup_run_sweeps_the_gateway_stand_ins(
    tmp_path: Path, servers: list[subprocess.Popen[bytes]], monkeypatch: pytest.MonkeyPatch
) -> None:
    import json

    from typer.testing import CliRunner

    from storagebench.cli.main import app
    from storagebench_local import dynamodb_local

    monkeypatch.setattr(dynamodb_local, "default_root", lambda: tmp_path)
    appliance = tmp_path / "gateways" / "i-0abc"
    write_owner(appliance, "run-killed", "gw")
    server = fake_ganesha(appliance, servers)
    wait_listed(appliance, server.pid)
    done = CliRunner().invoke(app, ["cleanup", "--run", "run-killed", "--json"])
    assert done.exit_code == 0, done.output
    report = json.loads(done.output)
    assert f"NFS server (ganesha, pid {server.pid}) of i-0abc" in report["removed"]
    assert server.wait(timeout=10) is not None and not appliance.exists()

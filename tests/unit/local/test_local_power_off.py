"""A local instance's power button (``storagebench_local/ssm/power/systemctl``): ``poweroff`` stops
every process that carries the instance's metadata address and nothing else; other power verbs
and a shell without that address are refused, so the host is never powered off or rebooted."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.support.processes import started_processes

from storagebench_local.ssm.agent import _stopped
from storagebench_local.ssm.instance import POWER

SYSTEMCTL = POWER / "systemctl"
ADDRESS = "http://127.0.0.1:1"  # an address only this test's processes carry


@pytest.fixture
def processes() -> Iterator[list[subprocess.Popen[bytes]]]:
    yield from started_processes()


def _sleeper(env: dict[str, str], started: list[subprocess.Popen[bytes]]) -> subprocess.Popen[bytes]:
    process = subprocess.Popen(["sleep", "60"], env=env)
    started.append(process)
    return process


def _wait_stopped(pid: int) -> bool:
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        if _stopped(pid):
            return True
        time.sleep(0.02)
    return False


def test_poweroff_stops_the_instances_processes_only(
    processes: list[subprocess.Popen[bytes]], tmp_path: Path
) -> None:
    mine = {"PATH": os.environ["PATH"], "AWS_EC2_METADATA_SERVICE_ENDPOINT": ADDRESS}
    other = {"PATH": os.environ["PATH"], "AWS_EC2_METADATA_SERVICE_ENDPOINT": ADDRESS + "0"}
    daemon = _sleeper(mine, processes)  # a server the instance's hook started
    neighbour = _sleeper(other, processes)  # another instance's process
    host = _sleeper({"PATH": os.environ["PATH"]}, processes)
    button = subprocess.Popen([str(SYSTEMCTL), "poweroff"], env=mine, stderr=subprocess.PIPE)
    processes.append(button)
    assert _wait_stopped(daemon.pid) and _wait_stopped(button.pid)  # the caller goes too, last
    assert not _stopped(neighbour.pid) and not _stopped(host.pid)
    assert neighbour.poll() is None and host.poll() is None
    os.kill(button.pid, signal.SIGCONT)
    assert button.wait(5) == 0


@pytest.mark.parametrize("verb", ["reboot", "halt", "isolate"])
def test_other_power_verbs_are_refused(verb: str) -> None:
    done = subprocess.run(
        [str(SYSTEMCTL), verb],
        env={"PATH": os.environ["PATH"], "AWS_EC2_METADATA_SERVICE_ENDPOINT": ADDRESS},
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 1 and f"systemctl {verb}: not on a local instance" in done.stderr


def test_a_shell_without_the_instance_address_is_refused() -> None:
    done = subprocess.run(
        [str(SYSTEMCTL), "poweroff"],
        env={"PATH": os.environ["PATH"]},
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 1 and "not a local instance: refused" in done.stderr


def test_the_instance_binds_it_first_on_its_path() -> None:
    from storagebench_local.ssm.instance import SYSTEM_PATH

    assert SYSTEM_PATH.split(":")[0] == "/usr/local/sbin"
    assert os.access(SYSTEMCTL, os.X_OK)


# A hook may power off by name: on the host those names are systemctl acting on argv[0], so each
# must resolve to the stand-in first on the instance's PATH.
@pytest.mark.parametrize("command", [["poweroff"], ["shutdown", "-h", "now"], ["shutdown"]])
def test_poweroff_by_name_stops_the_instance_not_the_host(
    command: list[str], processes: list[subprocess.Popen[bytes]]
) -> None:
    mine = {"PATH": os.environ["PATH"], "AWS_EC2_METADATA_SERVICE_ENDPOINT": ADDRESS}
    daemon = _sleeper(mine, processes)
    host = _sleeper({"PATH": os.environ["PATH"]}, processes)
    button = subprocess.Popen([str(POWER / command[0]), *command[1:]], env=mine, stderr=subprocess.PIPE)
    processes.append(button)
    assert _wait_stopped(daemon.pid) and not _stopped(host.pid)
    for pid in (daemon.pid, button.pid):
        os.kill(pid, signal.SIGCONT)


@pytest.mark.parametrize(
    ("command", "said"),
    [
        (["reboot"], "reboot: not on a local instance"),
        (["halt"], "halt: not on a local instance"),
        (["shutdown", "-r", "now"], "shutdown -r: not on a local instance"),
        (["shutdown", "-c"], "shutdown -c: not on a local instance"),
    ],
)
def test_reboot_and_halt_by_name_are_refused(command: list[str], said: str) -> None:
    env = {"PATH": os.environ["PATH"], "AWS_EC2_METADATA_SERVICE_ENDPOINT": ADDRESS}
    done = subprocess.run(
        [str(POWER / command[0]), *command[1:]], env=env, capture_output=True, text=True, check=False
    )
    assert done.returncode == 1 and said in done.stderr


def test_every_power_name_has_a_stand_in() -> None:
    assert all(
        os.access(POWER / name, os.X_OK) for name in ("systemctl", "poweroff", "shutdown", "reboot", "halt")
    )

"""proc: exact timing from wait4, timeouts that kill the whole process group, the cgroup wrapper."""

from __future__ import annotations

import os
import signal
import sys
import time
from pathlib import Path

import pytest

from storagebench.agent.proc import Child, CommandError, in_cgroup, run


def gone(pid: int, within_s: float = 3.0) -> bool:
    """True once the process no longer runs (reaped, or a zombie waiting for init)."""
    deadline = time.monotonic() + within_s
    while time.monotonic() < deadline:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except (FileNotFoundError, ProcessLookupError):
            return True
        if state in ("Z", "X"):
            return True
        time.sleep(0.02)
    return False


def test_rc_of_a_failing_command() -> None:
    done = Child(["/bin/sh", "-c", "exit 7"]).wait()
    assert done.rc == 7
    assert not done.timed_out
    assert done.argv == ["/bin/sh", "-c", "exit 7"]


def test_real_user_sys_come_from_wait4() -> None:
    burn = "import time\nend = time.process_time() + 0.4\nwhile time.process_time() < end: pass\n"
    busy = Child([sys.executable, "-c", burn]).wait()
    assert busy.rc == 0
    assert busy.user_s + busy.sys_s >= 0.35
    assert busy.real_s >= busy.user_s * 0.9
    idle = Child(["sleep", "0.4"]).wait()
    assert 0.39 <= idle.real_s < 2
    assert idle.user_s + idle.sys_s < 0.1


def test_parallel_children_are_timed_separately() -> None:
    short = Child(["sleep", "0.1"])
    long = Child(["sleep", "0.6"])
    assert long.wait().real_s >= 0.59
    assert short.wait().real_s < 0.5


def test_output_goes_where_asked(tmp_path: Path) -> None:
    with (tmp_path / "out").open("wb") as out, (tmp_path / "err").open("wb") as err:
        Child(
            ["/bin/sh", "-c", 'echo "$X" in "$(pwd)"; echo oops >&2'],
            cwd=str(tmp_path),
            env={"X": "hello", "PATH": os.environ["PATH"]},
            stdout=out,
            stderr=err,
        ).wait()
    assert (tmp_path / "out").read_text() == f"hello in {tmp_path}\n"
    assert (tmp_path / "err").read_text() == "oops\n"


def test_timeout_kills_the_whole_process_group(tmp_path: Path) -> None:
    pidfile = tmp_path / "grandchild.pid"
    script = f'sleep 60 & echo $! > "{pidfile}"; sleep 60'
    started = time.monotonic()
    done = Child(["/bin/sh", "-c", script], timeout_s=0.5).wait()
    assert time.monotonic() - started < 4
    assert done.timed_out
    assert done.rc == -signal.SIGTERM
    assert 0.45 <= done.real_s < 4
    grandchild = int(pidfile.read_text())
    assert gone(grandchild), f"grandchild {grandchild} survived the timeout"


def test_kill_escalates_to_sigkill_after_the_grace(tmp_path: Path) -> None:
    ready = tmp_path / "ready"
    child = Child(["/bin/sh", "-c", f'trap "" TERM; touch "{ready}"; while :; do sleep 0.05; done'])
    deadline = time.monotonic() + 5
    while not ready.exists() and time.monotonic() < deadline:
        time.sleep(0.01)
    child.kill(grace_s=0.3)
    done = child.wait()
    assert done.rc == -signal.SIGKILL
    assert not done.timed_out
    child.kill()  # already finished: nothing to do, no error


def test_a_command_that_cannot_start() -> None:
    with pytest.raises(CommandError, match="cannot start /nonexistent/fio: No such file or directory"):
        Child(["/nonexistent/fio"])


def test_in_cgroup_wrapper_argv() -> None:
    procs = "/sys/fs/cgroup/blkio/storagebench-r-c/cgroup.procs"
    argv = ["fio", "--output=fio.out", "job file.fio"]
    assert in_cgroup(argv, procs) == [
        "/bin/sh",
        "-c",
        'echo $$ > "$0" && exec "$@"',
        procs,
        "fio",
        "--output=fio.out",
        "job file.fio",
    ]
    plain = in_cgroup(argv, None)
    assert plain == argv
    assert plain is not argv


def test_in_cgroup_wrapper_writes_the_pid_that_then_execs(tmp_path: Path) -> None:
    procs = tmp_path / "cgroup procs"  # a plain file standing in for cgroup.procs
    procs.write_text("")
    out = tmp_path / "out"
    with out.open("wb") as handle:
        child = Child(in_cgroup(["/bin/sh", "-c", 'echo "$$ $1"', "sh", "a b"], str(procs)), stdout=handle)
        done = child.wait()
    assert done.rc == 0
    assert procs.read_text() == f"{child.pid}\n"  # the same process: exec kept the pid
    assert out.read_text() == f"{child.pid} a b\n"


def test_in_cgroup_wrapper_refuses_to_run_outside_the_cgroup(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    err = tmp_path / "err"
    with err.open("wb") as handle:
        done = Child(
            in_cgroup(["touch", str(marker)], str(tmp_path / "no" / "cgroup.procs")), stderr=handle
        ).wait()
    assert done.rc != 0
    assert not marker.exists()  # an unthrottled benchmark would measure the wrong thing


def test_run_captures_and_reports() -> None:
    assert run(["/bin/sh", "-c", "echo out; echo err >&2"]).stdout == "out\n"
    with pytest.raises(CommandError, match=r"failed with status 3: second line"):
        run(["/bin/sh", "-c", "echo first >&2; echo second line >&2; exit 3"])
    assert run(["/bin/sh", "-c", "exit 3"], check=False).returncode == 3
    with pytest.raises(CommandError, match="no-such-tool is not installed"):
        run(["no-such-tool", "--help"])
    with pytest.raises(CommandError, match="did not finish within 0 s"):
        run(["sleep", "5"], timeout_s=0.2)

"""Run and time child processes: real/user/sys from wait4, timeouts that kill the whole group.

Each child is reaped by ``os.wait4`` in its own waiter thread, so every process gets its own
exact resource usage and end time even when several run in parallel, and the agent itself
sleeps in the kernel instead of polling.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import threading
import time
from typing import IO, Dict, List, Optional, Sequence


class CommandError(RuntimeError):
    """A command that could not start, failed, or timed out; the message says which and how."""


class Finished:
    """How one child process ended."""

    def __init__(
        self, argv: Sequence[str], rc: int, real_s: float, user_s: float, sys_s: float, timed_out: bool
    ) -> None:
        self.argv = list(argv)
        self.rc = rc
        self.real_s = real_s
        self.user_s = user_s
        self.sys_s = sys_s
        self.timed_out = timed_out


class Child:
    """A started process; ``wait`` returns its Finished record."""

    def __init__(
        self,
        argv: Sequence[str],
        *,
        cwd: Optional[str] = None,
        env: Optional[Dict[str, str]] = None,
        stdout: Optional[IO[bytes]] = None,
        stderr: Optional[IO[bytes]] = None,
        timeout_s: Optional[float] = None,
    ) -> None:
        self.argv = list(argv)
        self._started = time.monotonic()
        try:
            self._proc = subprocess.Popen(
                self.argv,
                cwd=cwd,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=stdout if stdout is not None else subprocess.DEVNULL,
                stderr=stderr if stderr is not None else subprocess.DEVNULL,
                start_new_session=True,  # its own process group: a timeout kills fio's job processes too
            )
        except OSError as exc:
            raise CommandError(f"cannot start {self.argv[0]}: {exc.strerror}") from None
        self._timed_out = False
        self._done = threading.Event()
        self._result: Optional[Finished] = None
        self._waiter = threading.Thread(target=self._reap, name=f"wait-{self._proc.pid}", daemon=True)
        self._waiter.start()
        self._timer: Optional[threading.Timer] = None
        if timeout_s is not None:
            self._timer = threading.Timer(timeout_s, self._expire)
            self._timer.daemon = True
            self._timer.start()

    @property
    def pid(self) -> int:
        return self._proc.pid

    def _reap(self) -> None:
        _, status, usage = os.wait4(self._proc.pid, 0)
        rc = os.waitstatus_to_exitcode(status)
        self._proc.returncode = rc  # so Popen never waits on a pid we reaped
        self._result = Finished(
            self.argv, rc, time.monotonic() - self._started, usage.ru_utime, usage.ru_stime, self._timed_out
        )
        self._done.set()

    def _expire(self) -> None:
        self._timed_out = True
        self.kill()

    def kill(self, grace_s: float = 5.0) -> None:
        """SIGTERM the process group, then SIGKILL what is left after ``grace_s``."""
        if self._done.is_set():
            return
        try:
            os.killpg(self._proc.pid, signal.SIGTERM)
        except ProcessLookupError:
            return
        if not self._done.wait(grace_s):
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self._proc.pid, signal.SIGKILL)

    def wait(self) -> Finished:
        self._done.wait()
        if self._timer is not None:
            self._timer.cancel()
        assert self._result is not None
        return self._result


def in_cgroup(argv: Sequence[str], procs_file: Optional[str]) -> List[str]:
    """Wrap a command so it joins a cgroup before exec: every byte it moves is throttled there."""
    if not procs_file:
        return list(argv)
    return ["/bin/sh", "-c", 'echo $$ > "$0" && exec "$@"', procs_file, *argv]


def run(
    argv: Sequence[str],
    *,
    timeout_s: float = 600,
    cwd: Optional[str] = None,
    env: Optional[Dict[str, str]] = None,
    check: bool = True,
) -> subprocess.CompletedProcess:  # type: ignore[type-arg]
    """Run a short system command (losetup, mkfs, mount) and capture its output."""
    try:
        done = subprocess.run(
            list(argv),
            cwd=cwd,
            env=env,
            capture_output=True,
            text=True,
            timeout=timeout_s,
            check=False,
            stdin=subprocess.DEVNULL,
        )
    except FileNotFoundError:
        raise CommandError(f"{argv[0]} is not installed (needed for: {' '.join(argv)})") from None
    except subprocess.TimeoutExpired:
        raise CommandError(f"{' '.join(argv)} did not finish within {timeout_s:.0f} s") from None
    if check and done.returncode != 0:
        detail = (done.stderr or done.stdout).strip().splitlines()
        raise CommandError(
            f"{' '.join(argv)} failed with status {done.returncode}: {detail[-1] if detail else 'no output'}"
        )
    return done

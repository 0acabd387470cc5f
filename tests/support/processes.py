"""Processes a test starts, each killed if still running and waited for when the test ends.

Only what the test appended, by its own handle: nothing is found or stopped by name. Python 3.9
compatible (the agent's tests import it).
"""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path


def started_processes() -> Iterator[list[subprocess.Popen[bytes]]]:
    """The body of a fixture (``yield from started_processes()``): the list the test appends to."""
    started: list[subprocess.Popen[bytes]] = []
    yield started
    for process in started:
        if process.poll() is None:
            process.kill()
        process.wait(timeout=10)


def task_state(stat: Path) -> str | None:
    """The state letter (R, S, D, Z, ...) of a process or task from its ``stat`` file, or None
    once it is gone. The command name may hold spaces and parentheses: the state follows the last
    ``)`` (proc(5), field 3)."""
    try:
        return stat.read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return None


def process_state(pid: int) -> str | None:
    """:func:`task_state` of process ``pid``."""
    return task_state(Path(f"/proc/{pid}/stat"))

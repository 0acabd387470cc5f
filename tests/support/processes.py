"""Processes a test starts, each killed if still running and waited for when the test ends.

Only what the test appended, by its own handle: nothing is found or stopped by name. Python 3.9
compatible (the agent's tests import it).
"""

from __future__ import annotations

import subprocess
from collections.abc import Iterator


def started_processes() -> Iterator[list[subprocess.Popen[bytes]]]:
    """The body of a fixture (``yield from started_processes()``): the list the test appends to."""
    started: list[subprocess.Popen[bytes]] = []
    yield started
    for process in started:
        if process.poll() is None:
            process.kill()
        process.wait(timeout=10)

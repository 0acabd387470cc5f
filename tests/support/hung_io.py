"""What a process stuck on emulated I/O is waiting for, for a test's failure message.

When fio does not exit in time the question is who holds the I/O: fio's tasks (in exit, waiting
for an AIO that never completed?), the loop device's worker (waiting for a FUSE reply?) or the
twin. Each task's state, wait channel and kernel stack (root reads them) answer it.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from tests.support.processes import task_state

PROC = Path("/proc")


def _read(path: Path) -> str:
    try:
        return path.read_text(errors="replace").strip()
    except OSError as exc:
        return f"<{exc.strerror}>"


def task_report(pid: int) -> list[str]:
    """One block per task of ``pid``: name, state, wchan, then its kernel stack."""
    lines: list[str] = []
    try:
        tasks = sorted((PROC / str(pid) / "task").iterdir(), key=lambda t: int(t.name))
    except OSError:
        return [f"{pid}: gone"]
    for task in tasks:
        status = dict(line.split(":", 1) for line in _read(task / "status").splitlines() if ":" in line)
        lines.append(
            f"{pid}/{task.name} {status.get('Name', '?').strip()} state {status.get('State', '?').strip()}"
            f" wchan {_read(task / 'wchan')}"
        )
        lines += ["    " + frame for frame in _read(task / "stack").splitlines()]
    return lines


def blocked_tasks() -> list[int]:
    """Every process with a task in uninterruptible sleep (D): loop workers, FUSE waiters."""
    found: list[int] = []
    for stat in PROC.glob("[0-9]*/task/[0-9]*/stat"):
        if task_state(stat) == "D":
            found.append(int(stat.parent.parent.parent.name))
    return sorted(set(found))


def hung_io_report(pids: Iterable[int]) -> str:
    """The given processes' tasks and every D-state task on the machine, with kernel stacks."""
    wanted = list(dict.fromkeys([*pids, *blocked_tasks()]))
    return "\n".join(line for pid in wanted for line in task_report(pid))

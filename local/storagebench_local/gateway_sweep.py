"""What a killed local session left of its File Gateway stand-ins, found by run (and config).

Each appliance's directory (``.storagebench/gateways/<instance>``) names its run and config in
``owner.json``. Its nfs-ganesha runs in a process session of its own (so a Ctrl-C of the session
is handled by ``NfsServer.stop``), which a SIGKILL of the session does not reach: ``storagebench
cleanup --run`` stops every ganesha whose configuration lies in such a directory, then removes it.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import time
from pathlib import Path

from storagebench.agent.sweep import alive

OWNER = "owner.json"
STOP_TIMEOUT_S = 10.0
PROC = Path("/proc")


def write_owner(directory: Path, run_id: str, config_id: str) -> None:
    """Say which run and config an appliance's directory belongs to."""
    directory.mkdir(parents=True, exist_ok=True)
    (directory / OWNER).write_text(json.dumps({"run_id": run_id, "config_id": config_id}) + "\n")


def ganesha_under(directory: Path) -> list[int]:
    """ganesha processes whose configuration (``-f``) lies in ``directory``."""
    found: list[int] = []
    for cmdline in PROC.glob("[0-9]*/cmdline"):
        try:
            argv = cmdline.read_bytes().decode(errors="replace").split("\0")
        except OSError:
            continue
        if not argv or "ganesha" not in Path(argv[0]).name or "-f" not in argv:
            continue
        config = argv[argv.index("-f") + 1] if argv.index("-f") + 1 < len(argv) else ""
        if config.startswith(f"{directory}/"):
            found.append(int(cmdline.parent.name))
    return found


def _stop(pid: int) -> bool:
    """SIGTERM, then SIGKILL after STOP_TIMEOUT_S; whether it is gone."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.kill(pid, sig)
        except ProcessLookupError:
            return True
        deadline = time.monotonic() + STOP_TIMEOUT_S
        while time.monotonic() < deadline:
            if not alive(pid):
                return True
            time.sleep(0.05)
    return not alive(pid)


def sweep_gateways(root: Path, run_id: str, config_id: str | None = None) -> tuple[list[str], list[str]]:
    """Stop the run's ganesha servers and remove its appliance directories: (removed, left)."""
    removed: list[str] = []
    left: list[str] = []
    for owner in sorted(root.glob(f"*/{OWNER}")):
        try:
            names = json.loads(owner.read_text())
        except (OSError, ValueError) as exc:
            left.append(f"{owner}: unreadable ({exc}): not swept")
            continue
        if names.get("run_id") != run_id or (config_id is not None and names.get("config_id") != config_id):
            continue
        directory = owner.parent
        alive = False
        for pid in ganesha_under(directory):
            if _stop(pid):
                removed.append(f"NFS server (ganesha, pid {pid}) of {directory.name}")
            else:
                alive = True
                left.append(f"NFS server (ganesha, pid {pid}) of {directory.name}: still running")
        if alive:
            left.append(f"{directory} kept: its NFS server still runs")
            continue
        shutil.rmtree(directory)
        removed.append(f"appliance directory {directory}")
    return removed, left

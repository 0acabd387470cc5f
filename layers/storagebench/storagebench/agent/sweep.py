"""Remove what an aborted run left on this machine, found by its names (the local "tags").

Every machine-side resource of a run carries the run id in its name: mounts under
``<mount root>/<run id>-<config id>/``, md arrays ``/dev/md/sb-*`` over its devices, loop devices
whose backing file lies under ``<volumes dir>/<run id>-<config id>/`` and cgroups named
``storagebench-<run id>-<config id>``. A killed agent cannot run its own teardown; this can.
"""

from __future__ import annotations

import os
import shutil
from typing import Dict, List

from storagebench.agent.proc import CommandError, run
from storagebench.agent.targets import unmount
from storagebench.agent.throttle import V1_ROOT, V2_ROOTS


def _mounts_under(prefix: str) -> List[str]:
    found = []
    with open("/proc/self/mountinfo", encoding="utf-8") as handle:
        for line in handle:
            fields = line.split()
            if len(fields) > 4 and (fields[4] == prefix or fields[4].startswith(prefix + "/")):
                found.append(fields[4])
    return sorted(found, key=len, reverse=True)  # deepest first


def _loops_backed_under(prefix: str) -> List[str]:
    try:
        listing = run(["losetup", "--list", "--noheadings", "--output", "NAME,BACK-FILE"], check=False).stdout
    except CommandError:
        return []
    loops = []
    for line in listing.splitlines():
        parts = line.split(None, 1)
        if len(parts) == 2 and parts[1].strip().startswith(prefix + "/"):
            loops.append(parts[0])
    return loops


def _md_over(devices: List[str]) -> List[str]:
    arrays = []
    for loop in devices:
        holders = f"/sys/block/{os.path.basename(loop)}/holders"
        if os.path.isdir(holders):
            arrays += [f"/dev/{h}" for h in os.listdir(holders) if h.startswith("md")]
    return sorted(set(arrays))


def resources_of(run_id: str, mount_root: str, volumes_dir: str) -> Dict[str, List[str]]:
    """What this machine still holds for a run, without changing anything."""
    tags = [
        d for d in (os.listdir(mount_root) if os.path.isdir(mount_root) else []) if d.startswith(run_id + "-")
    ]
    tags += [
        d
        for d in (os.listdir(volumes_dir) if os.path.isdir(volumes_dir) else [])
        if d.startswith(run_id + "-") and d not in tags
    ]
    mounts: List[str] = []
    loops: List[str] = []
    for tag in tags:
        mounts += _mounts_under(os.path.join(mount_root, tag))
        loops += _loops_backed_under(os.path.join(volumes_dir, tag))
    cgroups = []
    for root in (V1_ROOT, *V2_ROOTS):
        if os.path.isdir(root):
            cgroups += [
                os.path.join(root, d) for d in os.listdir(root) if d.startswith(f"storagebench-{run_id}-")
            ]
    return {
        "mounts": mounts,
        "arrays": _md_over(loops),
        "loops": loops,
        "cgroups": cgroups,
        "directories": [
            os.path.join(r, t)
            for r in (mount_root, volumes_dir)
            for t in tags
            if os.path.isdir(os.path.join(r, t))
        ],
    }


def sweep(run_id: str, mount_root: str, volumes_dir: str) -> Dict[str, List[str]]:
    found = resources_of(run_id, mount_root, volumes_dir)
    removed: List[str] = []
    leftovers: List[str] = []

    def attempt(description: str, action: object) -> None:
        try:
            action()  # type: ignore[operator]
            removed.append(description)
        except (CommandError, OSError) as exc:
            leftovers.append(f"{description}: {exc}")

    for mount in found["mounts"]:
        attempt(f"unmount {mount}", lambda m=mount: unmount(m))
    for array in found["arrays"]:
        attempt(f"stop {array}", lambda a=array: run(["mdadm", "--stop", a]))
    for loop in found["loops"]:
        attempt(f"detach {loop}", lambda device=loop: run(["losetup", "--detach", device]))
    for cgroup in found["cgroups"]:
        attempt(f"remove cgroup {cgroup}", lambda c=cgroup: os.rmdir(c))
    for directory in found["directories"]:
        attempt(f"remove {directory}", lambda d=directory: shutil.rmtree(d))
    return {
        "found": [item for items in found.values() for item in items],
        "removed": removed,
        "leftovers": leftovers,
    }

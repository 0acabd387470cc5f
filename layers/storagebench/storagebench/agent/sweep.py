"""Remove what an aborted run left on this machine, found by its names (the local "tags").

Every machine-side resource of a run is named by its run id: mounts under
``<mount root>/<run id>/``, loop devices whose backing file lies under ``<volumes dir>/<run id>/``,
md arrays over those loop devices, cgroups named ``storagebench:<run id>:<config id>``, and EBS
twins: their processes (``--mountpoint`` under the volumes directory) and FUSE mounts there.
A killed agent cannot run its own teardown; this can. It never deletes through a mount: a
directory that still has something mounted below it is reported, not removed.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import time
from typing import Callable, Dict, List, Optional

from storagebench.agent.emulate import CGROUP_PREFIX
from storagebench.agent.proc import CommandError, run
from storagebench.agent.targets import unmount
from storagebench.agent.throttle import V1_ROOT, V2_ROOTS
from storagebench.agent.twin.fuse import unmount as fuse_unmount
from storagebench.agent.twin.loop_record import recorded_loops
from storagebench.agent.twin.volume import NATIVE_NAME


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


def is_twin_argv(argv: List[bytes]) -> bool:
    """Whether a command line (``/proc/<pid>/cmdline`` split at NULs) is an EBS twin's."""
    native = bool(argv) and os.path.basename(argv[0]) == NATIVE_NAME.encode()
    return native or b"storagebench.agent.twin.serve" in argv


def _twins_under(prefix: str) -> List[int]:
    """EBS twin processes serving a mount under ``prefix``: the compiled twin or agent.twin.serve."""
    pids = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as handle:
                argv = handle.read().split(b"\0")
        except OSError:
            continue  # ended meanwhile, or not ours to read
        if not is_twin_argv(argv) or b"--mountpoint" not in argv:
            continue
        index = argv.index(b"--mountpoint") + 1
        mountpoint = argv[index].decode("utf-8", "replace") if index < len(argv) else ""
        if mountpoint.startswith(prefix + "/"):
            pids.append(int(entry))
    return sorted(pids)


def _kill(pids: List[int], wait_s: float = 10.0) -> None:
    for pid in pids:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    deadline = time.monotonic() + wait_s
    while any(alive(pid) for pid in pids):
        if time.monotonic() > deadline:
            raise OSError(f"twin processes {pids} survived SIGKILL for {wait_s:.0f} s")
        time.sleep(0.05)


def alive(pid: int) -> bool:
    """Running, as opposed to gone or a zombie (dead, waiting for a parent that may be us)."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as handle:
            state = handle.read().rsplit(")", 1)[-1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"


def _md_over(devices: List[str]) -> List[str]:
    arrays = []
    for loop in devices:
        holders = f"/sys/block/{os.path.basename(loop)}/holders"
        if os.path.isdir(holders):
            arrays += [f"/dev/{h}" for h in os.listdir(holders) if h.startswith("md")]
    return sorted(set(arrays))


def _scope(run_id: str, config_id: Optional[str]) -> List[str]:
    return [run_id] if config_id is None else [run_id, config_id]


def resources_of(
    run_id: str, mount_root: str, volumes_dir: str, config_id: Optional[str] = None
) -> Dict[str, List[str]]:
    """What this machine still holds for a run (or one config of it), without changing anything."""
    mount_dir = os.path.join(mount_root, *_scope(run_id, config_id))
    volume_dir = os.path.join(volumes_dir, *_scope(run_id, config_id))
    # A twin's loop device may have lost its path (its mount namespace died first): its record says.
    loops = sorted({*_loops_backed_under(volume_dir), *recorded_loops(volume_dir)})
    wanted = f"{CGROUP_PREFIX}{run_id}:" + ("" if config_id is None else config_id)
    cgroups = []
    for root in (V1_ROOT, *V2_ROOTS):
        if os.path.isdir(root):
            cgroups += [
                os.path.join(root, d)
                for d in os.listdir(root)
                # a node of a multi-machine config adds :<role>-<index> (protocol.topology.node_label)
                if (d.startswith(wanted) if config_id is None else d == wanted or d.startswith(wanted + ":"))
            ]
    return {
        "mounts": _mounts_under(mount_dir),
        "arrays": _md_over(loops),
        "loops": loops,
        "cgroups": cgroups,
        "twins": [str(pid) for pid in _twins_under(volume_dir)],
        "twin_mounts": _mounts_under(volume_dir),
        "directories": [d for d in (mount_dir, volume_dir) if os.path.isdir(d)],
    }


def _members(cgroup: str) -> List[int]:
    try:
        with open(os.path.join(cgroup, "cgroup.procs"), encoding="ascii") as handle:
            return [int(line) for line in handle if line.strip()]
    except OSError:
        return []


def _kill_members(cgroup: str, wait_s: float = 10.0) -> None:
    """SIGKILL every process in the cgroup and wait until it is empty."""
    deadline = time.monotonic() + wait_s
    while True:
        pids = _members(cgroup)
        if not pids:
            return
        for pid in pids:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        if time.monotonic() > deadline:
            raise OSError(f"processes {pids} in {cgroup} survived SIGKILL for {wait_s:.0f} s")
        time.sleep(0.1)


def _remove_empty_tree(top: str) -> None:
    """rmdir bottom-up: only empty directories go, so nothing under a mount is ever deleted."""
    for directory, _, _ in sorted(os.walk(top), key=lambda entry: len(entry[0]), reverse=True):
        os.rmdir(directory)


def sweep(
    run_id: str, mount_root: str, volumes_dir: str, config_id: Optional[str] = None
) -> Dict[str, List[str]]:
    """Undo what a run (or one config of it) left: processes, mounts, arrays, loops, cgroups."""
    found = resources_of(run_id, mount_root, volumes_dir, config_id)
    removed: List[str] = []
    leftovers: List[str] = []

    def attempt(description: str, action: Callable[[], object]) -> bool:
        try:
            action()
        except (CommandError, OSError) as exc:
            leftovers.append(f"{description}: {exc}")
            return False
        removed.append(description)
        return True

    for cgroup in found["cgroups"]:  # a killed agent's fio still runs there, holding mounts and loops
        attempt(f"stop the processes of {cgroup}", lambda c=cgroup: _kill_members(c))  # type: ignore[misc]
    for mount in found["mounts"]:
        attempt(f"unmount {mount}", lambda m=mount: unmount(m))  # type: ignore[misc]
    for array in found["arrays"]:
        attempt(f"stop {array}", lambda a=array: run(["mdadm", "--stop", a]))  # type: ignore[misc]
    for loop in found["loops"]:
        attempt(f"detach {loop}", lambda device=loop: run(["losetup", "--detach", device]))  # type: ignore[misc]
    # A twin's loop device is detached above, so its process can go, then its (now dead) mount.
    if found["twins"]:
        pids = [int(pid) for pid in found["twins"]]
        attempt(f"stop EBS twin processes {', '.join(found['twins'])}", lambda: _kill(pids))
    for mount in found["twin_mounts"]:
        attempt(f"unmount {mount}", lambda m=mount: fuse_unmount(m))  # type: ignore[misc]
    for cgroup in found["cgroups"]:
        attempt(f"remove cgroup {cgroup}", lambda c=cgroup: os.rmdir(c))  # type: ignore[misc]
    mount_dir = os.path.join(mount_root, *_scope(run_id, config_id))
    if os.path.isdir(mount_dir):
        still_mounted = _mounts_under(mount_dir)
        if still_mounted:
            leftovers.append(f"{mount_dir} kept: still mounted at {', '.join(still_mounted)}")
        else:
            attempt(f"remove {mount_dir}", lambda: _remove_empty_tree(mount_dir))
    volume_dir = os.path.join(volumes_dir, *_scope(run_id, config_id))
    if os.path.isdir(volume_dir):
        still_attached = sorted({*_loops_backed_under(volume_dir), *recorded_loops(volume_dir)})
        still_mounted = _mounts_under(volume_dir)
        if still_attached:
            leftovers.append(f"{volume_dir} kept: backing {', '.join(still_attached)}")
        elif still_mounted:  # never delete through a mount
            leftovers.append(f"{volume_dir} kept: still mounted at {', '.join(still_mounted)}")
        else:
            attempt(f"remove {volume_dir}", lambda: shutil.rmtree(volume_dir))
    return {
        "found": [item for items in found.values() for item in items],
        "removed": removed,
        "leftovers": leftovers,
    }

"""Which loop device stands on which twin, kept where the run's files are.

Sweep finds a run's loop devices by their backing file's path. A twin's loop device loses that
path when the twin's FUSE mount goes away before the loop device does: a local instance's mount
namespace dies with its processes, and the kernel then names the backing file ``/volume``,
relative to a mount nobody can see. So next to every twin's backing file the agent writes
``<backing>.loop``: the loop device and its backing file's device number and inode, which
``losetup`` still reports. A loop device matching a record is the run's, whatever its path says.
"""

from __future__ import annotations

import contextlib
import json
import os
from typing import Dict, List

from storagebench.agent.proc import CommandError, run

SUFFIX = ".loop"


def record_path(backing_file: str) -> str:
    return backing_file + SUFFIX


def write_record(backing_file: str, loop_path: str, volume_path: str) -> None:
    status = os.stat(volume_path)
    record = {
        "device": loop_path,
        "back_maj_min": f"{os.major(status.st_dev)}:{os.minor(status.st_dev)}",
        "back_ino": status.st_ino,
    }
    with open(record_path(backing_file), "w", encoding="utf-8") as handle:
        json.dump(record, handle)


def remove_record(backing_file: str) -> None:
    with contextlib.suppress(FileNotFoundError):
        os.unlink(record_path(backing_file))


def _attached() -> Dict[str, Dict[str, str]]:
    """Every loop device with its backing file's device number and inode."""
    try:
        listing = run(
            ["losetup", "--list", "--json", "--output", "NAME,BACK-MAJ:MIN,BACK-INO"], check=False
        ).stdout
    except CommandError:
        return {}
    try:
        devices = json.loads(listing or "{}").get("loopdevices", [])
    except ValueError:
        return {}
    # losetup pads some columns ("       0:40 ")
    return {
        str(d.get("name")).strip(): {k: str(v).strip() for k, v in d.items()}
        for d in devices
        if isinstance(d, dict)
    }


def recorded_loops(prefix: str) -> List[str]:
    """Loop devices still attached to a twin whose record lies under ``prefix``."""
    records = []
    for directory, _, files in os.walk(prefix):
        records += [os.path.join(directory, name) for name in files if name.endswith(SUFFIX)]
    if not records:
        return []
    attached = _attached()
    found = []
    for path in records:
        try:
            with open(path, encoding="utf-8") as handle:
                record = json.load(handle)
        except (OSError, ValueError):
            continue  # half written while the agent died: its loop device was never in use
        device = attached.get(str(record.get("device")))
        if (
            device is not None
            and device.get("back-maj:min") == record.get("back_maj_min")
            and device.get("back-ino") == str(record.get("back_ino"))
        ):
            found.append(str(record["device"]))
    return sorted(set(found))

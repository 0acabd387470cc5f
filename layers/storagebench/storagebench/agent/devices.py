"""Find block devices by what they are, never by the name that was asked for.

On Nitro instances every EBS volume and instance-store disk is an NVMe namespace whose name
(nvme1n1, ...) says nothing about which volume it is: EBS volumes carry the volume id in the
NVMe serial (``vol0123...``, the id without its dash), instance-store disks report the model
"Amazon EC2 NVMe Instance Storage". Xen instances (r3, ...) expose /dev/sdf as /dev/xvdf.
Before anything is written, ``safety_problems`` refuses the root disk, anything mounted or
held by md/dm, and (unless allowed) a device that already carries a file system or partition
table.
"""

from __future__ import annotations

import os
import time
from typing import Dict, List, Optional, Sequence

from storagebench.agent.proc import CommandError, run

EBS_MODEL = "Amazon Elastic Block Store"
INSTANCE_STORE_MODEL = "Amazon EC2 NVMe Instance Storage"


class DeviceError(RuntimeError):
    """A device that cannot be found or must not be written."""


class BlockDevice:
    def __init__(
        self, name: str, major_minor: str, size_bytes: int, serial: Optional[str], model: Optional[str]
    ) -> None:
        self.name = name
        self.major_minor = major_minor
        self.size_bytes = size_bytes
        self.serial = serial
        self.model = model

    @property
    def path(self) -> str:
        return f"/dev/{self.name}"

    @property
    def volume_id(self) -> Optional[str]:
        if self.serial and self.serial.startswith("vol") and not self.serial.startswith("vol-"):
            return "vol-" + self.serial[3:]
        return self.serial if self.serial and self.serial.startswith("vol-") else None

    def info(self) -> Dict[str, object]:
        return {
            "path": self.path,
            "name": self.name,
            "volume_id": self.volume_id,
            "serial": self.serial,
            "model": self.model,
            "size_bytes": self.size_bytes,
            "emulated": None,
        }


def _read(path: str) -> Optional[str]:
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            return handle.read().strip()
    except OSError:
        return None


def list_block_devices(sysfs: str = "/sys") -> List[BlockDevice]:
    """Whole disks (not partitions) with their identity as the kernel reports it."""
    devices = []
    block = os.path.join(sysfs, "block")
    for name in sorted(os.listdir(block)) if os.path.isdir(block) else []:
        base = os.path.join(block, name)
        major_minor = _read(os.path.join(base, "dev")) or ""
        sectors = _read(os.path.join(base, "size")) or "0"
        serial = _read(os.path.join(base, "device", "serial")) or _read(os.path.join(base, "serial"))
        model = _read(os.path.join(base, "device", "model"))
        devices.append(BlockDevice(name, major_minor, int(sectors) * 512, serial or None, model or None))
    return devices


def _xen_names(device_name: str) -> List[str]:
    """/dev/sdf may appear as sdf or xvdf."""
    base = os.path.basename(device_name)
    names = [base]
    if base.startswith("sd"):
        names.append("xvd" + base[2:])
    elif base.startswith("xvd"):
        names.append("sd" + base[3:])
    return names


def find_ebs(
    volume_ids: Sequence[str],
    device_names: Sequence[str] = (),
    sysfs: str = "/sys",
    wait_s: float = 60.0,
    poll_s: float = 1.0,
) -> List[BlockDevice]:
    """The devices of these EBS volumes, in the given order; waits for udev to show them."""
    deadline = time.monotonic() + wait_s
    while True:
        devices = list_block_devices(sysfs)
        by_volume = {d.volume_id: d for d in devices if d.volume_id}
        by_name = {d.name: d for d in devices}
        found: List[BlockDevice] = []
        missing: List[str] = []
        for index, volume_id in enumerate(volume_ids):
            device = by_volume.get(volume_id)
            if device is None and index < len(device_names):
                # Xen (non-Nitro) instances have no serial: fall back to the mapped device name.
                device = next((by_name[n] for n in _xen_names(device_names[index]) if n in by_name), None)
            if device is None:
                missing.append(volume_id)
            else:
                found.append(device)
        if not missing:
            return found
        if time.monotonic() >= deadline:
            raise DeviceError(
                f"EBS volume(s) {', '.join(missing)} not visible after {wait_s:.0f} s; "
                "visible disks: "
                + (", ".join(f"{d.name}({d.volume_id or d.model})" for d in devices) or "none")
            )
        time.sleep(poll_s)


def find_instance_store(count: int, sysfs: str = "/sys") -> List[BlockDevice]:
    """``count`` instance-store NVMe disks (0 = all of them)."""
    disks = [d for d in list_block_devices(sysfs) if d.model == INSTANCE_STORE_MODEL]
    if not disks:
        raise DeviceError(
            "this instance has no instance-store NVMe disk (model "
            f"{INSTANCE_STORE_MODEL!r}); pick an instance type with instance storage"
        )
    if count and len(disks) < count:
        raise DeviceError(f"{count} instance-store disks requested, {len(disks)} present")
    return disks[:count] if count else disks


def _mounted_devices(mountinfo: str) -> Dict[str, str]:
    mounted: Dict[str, str] = {}
    try:
        with open(mountinfo, encoding="utf-8") as handle:
            for line in handle:
                fields = line.split()
                if len(fields) > 4:
                    mounted.setdefault(fields[2], fields[4])
    except OSError:
        pass
    return mounted


def _partitions(device: BlockDevice, sysfs: str) -> List[str]:
    """major:minor of the device and each of its partitions."""
    base = os.path.join(sysfs, "block", device.name)
    numbers = [device.major_minor]
    for entry in os.listdir(base) if os.path.isdir(base) else []:
        if entry.startswith(device.name):
            number = _read(os.path.join(base, entry, "dev"))
            if number:
                numbers.append(number)
    return numbers


def _holders(device: BlockDevice, sysfs: str) -> List[str]:
    base = os.path.join(sysfs, "block", device.name)
    held = []
    for directory in (
        [base] + [os.path.join(base, e) for e in os.listdir(base) if e.startswith(device.name)]
        if os.path.isdir(base)
        else []
    ):
        holders = os.path.join(directory, "holders")
        if os.path.isdir(holders):
            held.extend(os.listdir(holders))
    return held


def signature(path: str) -> Optional[str]:
    """What blkid finds on a device (a file system, RAID member or partition table), or None."""
    try:
        done = run(["blkid", "-p", "-o", "export", path], check=False, timeout_s=60)
    except CommandError:
        return None  # blkid missing: mkfs will still refuse an existing file system without -f
    if done.returncode != 0:
        return None
    fields = dict(line.split("=", 1) for line in done.stdout.splitlines() if "=" in line)
    return fields.get("TYPE") or fields.get("PTTYPE") or "data"


def safety_problems(
    device: BlockDevice, allow_destroy: bool, sysfs: str = "/sys", mountinfo: str = "/proc/self/mountinfo"
) -> List[str]:
    """Reasons not to write to a device; empty when it is safe."""
    problems = []
    mounted = _mounted_devices(mountinfo)
    for number in _partitions(device, sysfs):
        if number in mounted:
            where = mounted[number]
            kind = "the root disk" if where == "/" else "mounted"
            problems.append(f"{device.path} is {kind} (at {where})")
    holders = _holders(device, sysfs)
    if holders:
        problems.append(f"{device.path} is in use by {', '.join(holders)}")
    if not problems and not allow_destroy:
        found = signature(device.path)
        if found:
            problems.append(f"{device.path} already holds {found} data; set allow_destroy to overwrite it")
    return problems

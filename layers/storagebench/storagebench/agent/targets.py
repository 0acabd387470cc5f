"""Prepare targets for workloads and put the machine back afterwards.

Every action that changes the machine (a loop device, an md array, a mount, a directory) is
recorded as it happens, and ``Targets.teardown`` undoes them in reverse order whatever
failed, so the agent leaves the machine as it found it. mkfs options avoid background work
that would perturb measurements: ext4 initialises its inode tables and journal up front
(lazy init would write behind the benchmark), and xfs/btrfs skip discard (TRIM of a large
EBS volume takes minutes and measures nothing).
"""

from __future__ import annotations

import functools
import hashlib
import os
import shutil
import time
from typing import Any, Callable, Dict, List, Optional, Tuple

from storagebench.agent.devices import (
    BlockDevice,
    DeviceError,
    find_ebs,
    find_instance_store,
    safety_problems,
)
from storagebench.agent.emulate import EmulatedFleet, EmulationError, destroy_loop
from storagebench.agent.log import Progress
from storagebench.agent.proc import CommandError, run
from storagebench.protocol.caveats import EMULATOR_LABEL_PREFIX
from storagebench.protocol.manifest import CleanupReport, DeviceInfo, TargetResult
from storagebench.protocol.plan import BLOCK_KINDS, NETWORK_KINDS, TargetSpec

MKFS = {
    "xfs": ["mkfs.xfs", "-f", "-K", "-q"],
    "ext4": ["mkfs.ext4", "-F", "-q", "-E", "nodiscard,lazy_itable_init=0,lazy_journal_init=0"],
    "btrfs": ["mkfs.btrfs", "-f", "-q", "-K"],
}


MDSTAT = "/proc/mdstat"


def raid0_command(link: str, members: List[BlockDevice], chunk_kib: Optional[int]) -> List[str]:
    """mdadm's RAID0 create command, as AWS documents it for striping EBS volumes."""
    command = [
        "mdadm",
        "--create",
        link,
        "--run",
        "--force",
        "--level=0",
        "--metadata=1.2",
        f"--raid-devices={len(members)}",
    ]
    if chunk_kib:
        command.append(f"--chunk={int(chunk_kib)}")
    return command + [m.path for m in members]


class TargetError(RuntimeError):
    """A target that could not be prepared; the message names it and the cause."""


class Prepared:
    """A target ready for workloads: ``path`` is a directory (file system) or device list (raw)."""

    def __init__(
        self,
        spec: TargetSpec,
        mode: str,
        path: str,
        devices: List[BlockDevice],
        labels: List[str],
        md_device: Optional[str] = None,
    ) -> None:
        self.spec = spec
        self.mode = mode
        self.path = path
        self.devices = devices
        self.labels = labels
        self.md_device = md_device

    @property
    def id(self) -> str:
        return self.spec["id"]

    def result(self, emulated: Dict[str, Dict[str, object]]) -> TargetResult:
        devices: List[DeviceInfo] = []
        for device in self.devices:
            info = device.info()
            info["emulated"] = emulated.get(device.path)
            devices.append(info)  # type: ignore[arg-type]
        return {
            "id": self.id,
            "kind": self.spec["kind"],
            "mode": self.mode,
            "path": self.path,
            "devices": devices,
            "md_device": self.md_device,
            "filesystem": self.spec.get("filesystem") if self.mode == "filesystem" else None,
            "labels": self.labels,
        }


class Targets:
    """Prepares the plan's targets and undoes everything it did."""

    def __init__(
        self, run_tag: str, mount_root: str, fleet: EmulatedFleet, progress: Progress, sysfs: str = "/sys"
    ) -> None:
        self.run_tag = run_tag
        self.mount_root = mount_root
        self.fleet = fleet
        self.progress = progress
        self.sysfs = sysfs
        self.prepared: Dict[str, Prepared] = {}
        self.emulated: Dict[str, Dict[str, object]] = {}
        self._undo: List[Tuple[str, Callable[[], None]]] = []

    # ------------------------------------------------------------------ preparing

    def prepare(self, spec: TargetSpec) -> Prepared:
        kind = spec["kind"]
        try:
            if kind in BLOCK_KINDS:
                prepared = self._block(spec)
            elif kind in NETWORK_KINDS:
                prepared = self._network(spec)
            else:
                prepared = self._directory(spec)
        except (DeviceError, EmulationError, CommandError, OSError) as exc:
            raise TargetError(f"target {spec['id']} ({kind}): {exc}") from None
        self.prepared[prepared.id] = prepared
        self.progress.say(
            f"target {prepared.id} ready: {prepared.mode} at {prepared.path}"
            + (f" [{', '.join(prepared.labels)}]" if prepared.labels else "")
        )
        return prepared

    def _members(self, spec: TargetSpec) -> List[BlockDevice]:
        if spec.get("emulate"):
            members = []
            for index, emulation in enumerate(spec["emulate"]):
                loop = self.fleet.add(f"{spec['id']}-{index}", emulation)
                self._did(
                    f"detach {loop.path} and delete {loop.backing_file}",
                    functools.partial(destroy_loop, loop),
                )
                name = os.path.basename(loop.path)
                size = int(emulation["capacity_bytes"])
                members.append(
                    BlockDevice(name, loop.major_minor, size, None, "storagebench emulated volume")
                )
                self.emulated[loop.path] = {
                    "volume_type": emulation["volume_type"],
                    "size_gib": emulation["size_gib"],
                    "capacity_bytes": size,
                    "limits": dict(emulation["limits"]),
                    "backing_file": loop.backing_file,
                    "direct_io": loop.direct_io,
                    "emulator": loop.emulator,
                    "twin_implementation": loop.twin.implementation if loop.twin is not None else None,
                    "latency": dict(emulation.get("latency") or {}) if loop.twin is not None else None,
                    "calibrated_overhead_us": (
                        round(loop.twin.overhead_s * 1e6, 1)
                        if loop.twin is not None and loop.twin.overhead_s is not None
                        else None
                    ),
                    "fallback_reason": self.fleet.fallback_reason if loop.twin is None else None,
                }
            return members
        if spec["kind"] == "ebs":
            return find_ebs(spec.get("volume_ids", []), spec.get("device_names", []), sysfs=self.sysfs)
        return find_instance_store(int(spec.get("count", 0) or 0), sysfs=self.sysfs)

    def _block(self, spec: TargetSpec) -> Prepared:
        members = self._members(spec)
        if spec.get("prepare") is False:  # the setup hook owns it: found and reported, never written
            labels = [*self._labels(spec), *self._emulator_labels(members)]
            return Prepared(spec, "attached", ":".join(m.path for m in members), members, labels)
        allow = bool(spec.get("allow_destroy"))
        problems = [p for m in members for p in safety_problems(m, allow, sysfs=self.sysfs)]
        if problems:
            raise DeviceError("refusing to write: " + "; ".join(problems))
        labels = [*self._labels(spec), *self._emulator_labels(members)]
        filesystem = spec.get("filesystem", "xfs")
        layout = spec.get("layout", "raid0")
        md_device = None
        if len(members) > 1 and layout == "jbod":
            return Prepared(spec, "raw", ":".join(m.path for m in members), members, [*labels, "jbod"])
        device_path = members[0].path
        if len(members) > 1:
            md_device = self._raid0(spec, members)
            device_path = md_device
        if filesystem == "raw":
            return Prepared(spec, "raw", device_path, members, labels, md_device)
        if filesystem not in MKFS:
            raise TargetError(f"unknown file system {filesystem!r}")
        run([*MKFS[filesystem], *spec.get("mkfs_options", []), device_path], timeout_s=1800)
        mountpoint = self._mount(device_path, spec, fstype=None)
        return Prepared(spec, "filesystem", mountpoint, members, labels, md_device)

    def _raid0(self, spec: TargetSpec, members: List[BlockDevice]) -> str:
        if not os.path.exists(MDSTAT):
            raise DeviceError(
                "a RAID0 stripe needs the kernel's md driver, and this kernel has none "
                f"({MDSTAT} is missing); load md_mod and raid0, or use layout jbod"
            )
        # md names are machine-wide: a digest of the run keeps concurrent configs apart.
        digest = hashlib.sha256(self.run_tag.encode()).hexdigest()[:8]
        name = f"sb{digest}-{spec['id']}"[:32]
        link = f"/dev/md/{name}"
        command = raid0_command(link, members, spec.get("raid_chunk_kib"))
        try:
            run(command, timeout_s=120)
        except CommandError:
            # mdadm may leave the array's device node and link behind when it fails.
            if os.path.islink(link):
                node = os.path.realpath(link)
                os.unlink(link)
                run(["mdadm", "--stop", node], check=False, timeout_s=60)
            raise
        path = os.path.realpath(link)
        self._did(f"stop {path}", lambda: self._stop_md(path, members))
        return path

    @staticmethod
    def _stop_md(path: str, members: List[BlockDevice]) -> None:
        run(["mdadm", "--stop", path], timeout_s=60)
        for member in members:  # a member left with a superblock would refuse the next run
            run(["mdadm", "--zero-superblock", member.path], timeout_s=60, check=False)

    def _mount(self, source: str, spec: TargetSpec, fstype: Optional[str]) -> str:
        mountpoint = os.path.join(self.mount_root, spec["id"])
        os.makedirs(mountpoint, exist_ok=True)
        self._did(f"remove {mountpoint}", lambda: _rmdir_quiet(mountpoint))
        command = ["mount"]
        if fstype:
            command += ["-t", fstype]
        if spec.get("mount_options"):
            command += ["-o", str(spec["mount_options"])]
        run([*command, source, mountpoint], timeout_s=300)
        self._did(f"unmount {mountpoint}", lambda: unmount(mountpoint))
        os.chmod(mountpoint, 0o1777)
        return mountpoint

    def _network(self, spec: TargetSpec) -> Prepared:
        mountpoint = self._mount(str(spec["source"]), spec, fstype=str(spec["fstype"]))
        stripes = spec.get("lustre_stripe_count")
        if spec["fstype"] == "lustre" and stripes is not None:
            run(["lfs", "setstripe", "-c", str(stripes), mountpoint], timeout_s=60)
        return Prepared(
            spec, "filesystem", mountpoint, [], [*self._labels(spec), f"{spec['fstype']}:{spec['source']}"]
        )

    def _directory(self, spec: TargetSpec) -> Prepared:
        base = str(spec["path"])
        if not os.path.isdir(base):
            raise DeviceError(f"directory {base} does not exist")
        work = os.path.join(base, f"storagebench-{self.run_tag}-{spec['id']}")
        os.makedirs(work, exist_ok=False)
        self._did(f"remove {work}", lambda: shutil.rmtree(work))
        labels = self._labels(spec) or ["directory:unthrottled"]
        return Prepared(spec, "filesystem", work, [], labels)

    @staticmethod
    def _labels(spec: TargetSpec) -> List[str]:
        labels = []
        for emulation in spec.get("emulate", []) or []:
            labels.append(f"emulated:{emulation['volume_type']}:{emulation['size_gib']:g}GiB")
        return sorted(set(labels))

    def _emulator_labels(self, members: List[BlockDevice]) -> List[str]:
        """``emulator:twin`` or ``emulator:throttle``: which stand-in measured the record."""
        emulators = {str(self.emulated[m.path]["emulator"]) for m in members if m.path in self.emulated}
        return sorted(f"{EMULATOR_LABEL_PREFIX}{name}" for name in emulators)

    def _did(self, description: str, undo: Callable[[], None]) -> None:
        self._undo.append((description, undo))

    # ------------------------------------------------------------------ undoing

    def teardown(self) -> CleanupReport:
        """Undo every recorded action, newest first; never stops at a failure."""
        actions: List[Dict[str, Any]] = []
        leftovers: List[str] = []
        while self._undo:
            description, undo = self._undo.pop()
            try:
                undo()
                actions.append({"action": description, "status": "ok"})
            except (CommandError, OSError, EmulationError) as exc:
                actions.append({"action": description, "status": "failed", "error": str(exc)})
                leftovers.append(description)
        return {"actions": actions, "leftovers": leftovers, "status": "ok" if not leftovers else "incomplete"}


def unmount(mountpoint: str, attempts: int = 5) -> None:
    """Unmount, retrying while something still holds the file system, then lazily."""
    for attempt in range(attempts):
        done = run(["umount", mountpoint], check=False, timeout_s=300)
        if done.returncode == 0:
            return
        if "not mounted" in (done.stderr or ""):
            return
        time.sleep(0.5 * (attempt + 1))
    run(["umount", "--lazy", mountpoint], timeout_s=60)


def _rmdir_quiet(path: str) -> None:
    if os.path.isdir(path):
        os.rmdir(path)

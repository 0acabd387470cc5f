"""Block I/O throttling through cgroups: blkio (v1) or io.max (v2).

The kernel's throttle keeps separate read and write limits, while EBS limits are combined
(read + write IOPS, read + write MiB/s). The governor in ``emulate.py`` turns a combined
budget into a per-direction split; this module only knows how to set limits on a device for
one cgroup and read back what the cgroup has done.
"""

from __future__ import annotations

import os
from typing import Dict, Optional, Tuple

V1_ROOT = "/sys/fs/cgroup/blkio"
V2_ROOTS = ("/sys/fs/cgroup", "/sys/fs/cgroup/unified")


class ThrottleError(RuntimeError):
    """cgroup throttling is unavailable or refused a limit."""


class Served:
    """Counters of I/O completed through the throttle for one device (cumulative)."""

    def __init__(
        self, read_ios: int = 0, write_ios: int = 0, read_bytes: int = 0, write_bytes: int = 0
    ) -> None:
        self.read_ios = read_ios
        self.write_ios = write_ios
        self.read_bytes = read_bytes
        self.write_bytes = write_bytes


def _write(path: str, text: str) -> None:
    try:
        with open(path, "w", encoding="ascii") as handle:
            handle.write(text)
    except OSError as exc:
        raise ThrottleError(f"cannot write {text!r} to {path}: {exc.strerror}") from None


class Throttle:
    """One cgroup with per-device limits. ``procs_file`` is where a process writes its pid to join."""

    version = 0

    def __init__(self, path: str) -> None:
        self.path = path

    @property
    def procs_file(self) -> str:
        return os.path.join(self.path, "cgroup.procs")

    def set_limits(self, device: str, riops: int, wiops: int, rbps: int, wbps: int) -> None:
        raise NotImplementedError

    def served(self) -> Dict[str, Served]:
        raise NotImplementedError

    def remove(self) -> None:
        """Remove the cgroup once its processes have exited (rmdir of a cgroup directory)."""
        if not os.path.isdir(self.path):
            return
        try:
            os.rmdir(self.path)
        except OSError as exc:
            raise ThrottleError(f"cannot remove cgroup {self.path}: {exc.strerror}") from None


class ThrottleV1(Throttle):
    version = 1

    def set_limits(self, device: str, riops: int, wiops: int, rbps: int, wbps: int) -> None:
        # 0 removes a limit in blkio, so a zero share must be written as 1.
        for name, value in (
            ("read_iops_device", riops),
            ("write_iops_device", wiops),
            ("read_bps_device", rbps),
            ("write_bps_device", wbps),
        ):
            _write(os.path.join(self.path, f"blkio.throttle.{name}"), f"{device} {max(1, int(value))}")

    def served(self) -> Dict[str, Served]:
        counts: Dict[str, Served] = {}
        for name, ios in (("blkio.throttle.io_serviced", True), ("blkio.throttle.io_service_bytes", False)):
            with open(os.path.join(self.path, name), encoding="ascii") as handle:
                for line in handle:
                    parts = line.split()
                    if len(parts) != 3 or parts[1] not in ("Read", "Write"):
                        continue
                    entry = counts.setdefault(parts[0], Served())
                    value = int(parts[2])
                    attr = ("read_" if parts[1] == "Read" else "write_") + ("ios" if ios else "bytes")
                    setattr(entry, attr, value)
        return counts


class ThrottleV2(Throttle):
    version = 2

    def set_limits(self, device: str, riops: int, wiops: int, rbps: int, wbps: int) -> None:
        _write(
            os.path.join(self.path, "io.max"),
            f"{device} riops={max(1, int(riops))} wiops={max(1, int(wiops))} "
            f"rbps={max(1, int(rbps))} wbps={max(1, int(wbps))}",
        )

    def served(self) -> Dict[str, Served]:
        counts: Dict[str, Served] = {}
        with open(os.path.join(self.path, "io.stat"), encoding="ascii") as handle:
            for line in handle:
                parts = line.split()
                if not parts:
                    continue
                fields = dict(p.split("=", 1) for p in parts[1:] if "=" in p)
                counts[parts[0]] = Served(
                    int(fields.get("rios", 0)),
                    int(fields.get("wios", 0)),
                    int(fields.get("rbytes", 0)),
                    int(fields.get("wbytes", 0)),
                )
        return counts


def _v2_root(candidates: Tuple[str, ...]) -> Optional[str]:
    for root in candidates:
        controllers = os.path.join(root, "cgroup.controllers")
        try:
            with open(controllers, encoding="ascii") as handle:
                if "io" in handle.read().split():
                    return root
        except OSError:
            continue
    return None


def create_throttle(name: str, v1_root: str = V1_ROOT, v2_roots: Tuple[str, ...] = V2_ROOTS) -> Throttle:
    """A fresh cgroup named ``name`` under blkio v1 when mounted, else under a v2 root with io."""
    if os.path.isfile(os.path.join(v1_root, "blkio.throttle.read_iops_device")):
        path = os.path.join(v1_root, name)
        throttle: Throttle = ThrottleV1(path)
    else:
        root = _v2_root(v2_roots)
        if root is None:
            raise ThrottleError(
                "no block I/O throttling: neither cgroup v1 blkio nor a cgroup v2 hierarchy with the io "
                "controller is available (emulated volumes need one; run as root on a Linux host)"
            )
        subtree = os.path.join(root, "cgroup.subtree_control")
        try:
            with open(subtree, encoding="ascii") as handle:
                enabled = handle.read().split()
        except OSError:
            enabled = []
        if "io" not in enabled:
            _write(subtree, "+io")
        path = os.path.join(root, name)
        throttle = ThrottleV2(path)
    try:
        os.makedirs(path, exist_ok=False)
    except FileExistsError:
        pass
    except OSError as exc:
        raise ThrottleError(f"cannot create cgroup {path}: {exc.strerror}") from None
    return throttle

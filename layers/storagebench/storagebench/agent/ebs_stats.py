"""The volume's own view: EBS detailed performance statistics, read from the NVMe log page.

Nitro instances expose, per attached EBS volume, a vendor log page (0xD0) with cumulative
counters (operations, bytes, microseconds per direction), the microseconds during which demand
exceeded the volume's provisioned IOPS or throughput or the instance's EBS limits, and a read
and a write latency histogram. Sources: "Amazon EBS detailed performance statistics" (EBS User
Guide) for the meaning of each field; the page layout as nvme-cli's amzn plugin
(``struct amzn_latency_log_page_base``) and AWS's ``ebsnvme`` script read it:

    u32 magic (0x3C23B510), u32 version, 11 x u64 (total_read_ops, total_write_ops,
    total_read_bytes, total_write_bytes, total_read_time, total_write_time,
    ebs_volume_performance_exceeded_iops, ebs_volume_performance_exceeded_tp,
    ec2_instance_ebs_performance_exceeded_iops, ec2_instance_ebs_performance_exceeded_tp,
    volume_queue_length), 416 reserved bytes, then two histograms (read, write) of
    u64 num_bins + 64 x (u64 lower_us, u64 upper_us, u32 count, u32 reserved); 4,096 bytes.

The page is read with the NVMe admin ioctl (Get Log Page) from the standard library; where the
ioctl is refused, ``nvme get-log --raw-binary`` (nvme-cli) reads the same bytes. Before and after
every phase the agent reads each EBS device; the difference is what the phase did, as EBS saw it.

Emulated volumes (loop devices) have no such page: their counters come from the kernel's
``/sys/block/<dev>/stat`` (operations, sectors, milliseconds), without histogram or throttle time.
"""

from __future__ import annotations

import ctypes
import fcntl
import os
import shutil
import struct
import subprocess
from typing import Any, Dict, List, Optional, Tuple

LOG_PAGE_ID = 0xD0
PAGE_SIZE = 4096
EBS_MAGIC = 0x3C23B510
MAX_BINS = 64
_HEADER = struct.Struct("<II11Q")
_BIN = struct.Struct("<QQII")
_HIST_OFFSET = _HEADER.size + 416  # 96 + 416 = 512
_HIST_SIZE = 8 + MAX_BINS * _BIN.size  # 1,544
COUNTERS = (
    "total_read_ops",
    "total_write_ops",
    "total_read_bytes",
    "total_write_bytes",
    "total_read_time",
    "total_write_time",
    "ebs_volume_performance_exceeded_iops",
    "ebs_volume_performance_exceeded_tp",
    "ec2_instance_ebs_performance_exceeded_iops",
    "ec2_instance_ebs_performance_exceeded_tp",
    "volume_queue_length",
)
THROTTLES = {
    "volume_iops": "ebs_volume_performance_exceeded_iops",
    "volume_throughput": "ebs_volume_performance_exceeded_tp",
    "instance_iops": "ec2_instance_ebs_performance_exceeded_iops",
    "instance_throughput": "ec2_instance_ebs_performance_exceeded_tp",
}
# struct nvme_admin_cmd (linux/nvme_ioctl.h): 72 bytes; NVME_IOCTL_ADMIN_CMD = _IOWR('N', 0x41, it)
NVME_IOCTL_ADMIN_CMD = 0xC0484E41
NVME_ADMIN_GET_LOG_PAGE = 0x02

Histogram = List[Tuple[int, int, int]]  # (lower_us, upper_us, count)
Stats = Dict[str, Any]


class EbsStatsError(ValueError):
    """The bytes are not an EBS statistics page, or the page could not be read."""


def parse(page: bytes) -> Stats:
    """The counters and both histograms of one log page; refuses anything else by name."""
    if len(page) != PAGE_SIZE:
        raise EbsStatsError(f"an EBS statistics page is {PAGE_SIZE} bytes; got {len(page)}")
    magic, version, *values = _HEADER.unpack_from(page, 0)
    if magic != EBS_MAGIC:
        raise EbsStatsError(
            f"magic 0x{magic:08X} is not an EBS volume's statistics page (0x{EBS_MAGIC:08X}); "
            "instance store and other NVMe devices have none or another layout"
        )
    stats: Stats = dict(zip(COUNTERS, values))
    stats["version"] = version
    stats["read_histogram"] = _histogram(page, _HIST_OFFSET, "read")
    stats["write_histogram"] = _histogram(page, _HIST_OFFSET + _HIST_SIZE, "write")
    return stats


def _histogram(page: bytes, offset: int, name: str) -> Histogram:
    (bins,) = struct.unpack_from("<Q", page, offset)
    if bins > MAX_BINS:
        raise EbsStatsError(f"{name} histogram claims {bins} bins; the page holds at most {MAX_BINS}")
    found: Histogram = []
    for index in range(bins):
        lower, upper, count, _ = _BIN.unpack_from(page, offset + 8 + index * _BIN.size)
        if upper < lower:
            raise EbsStatsError(f"{name} histogram bin {index}: upper {upper} us below lower {lower} us")
        found.append((lower, upper, count))
    return found


def delta(before: Stats, after: Stats) -> Stats:
    """What happened between two readings of one device (counters and histograms subtracted).

    A counter or histogram the source does not keep (None: the kernel's counters of an emulated
    volume have no bound time and no histogram) stays None."""
    out: Stats = {}
    for name in COUNTERS:
        if name == "volume_queue_length" or after[name] is None:
            out[name] = after[name]  # a point in time, not a counter; or not kept
            continue
        change = after[name] - before[name]
        if change < 0:
            raise EbsStatsError(
                f"{name} went backwards ({before[name]} -> {after[name]}): volume re-attached?"
            )
        out[name] = change
    for name in ("read_histogram", "write_histogram"):
        if after[name] is None:
            out[name] = None
            continue
        old = {(lo, up): count for lo, up, count in before[name]}
        out[name] = [(lo, up, count - old.get((lo, up), 0)) for lo, up, count in after[name]]
    return out


def summary(change: Stats, device: str, volume_id: Optional[str], source: str) -> Dict[str, Any]:
    """One device's phase as the manifest keeps it: per direction ops, bytes, mean latency and
    histogram, plus seconds bound by each limit."""
    directions: Dict[str, Any] = {}
    for direction in ("read", "write"):
        ops = change[f"total_{direction}_ops"]
        time_us = change[f"total_{direction}_time"]
        hist = change.get(f"{direction}_histogram")
        directions[direction] = {
            "ops": ops,
            "bytes": change[f"total_{direction}_bytes"],
            "mean_latency_us": (time_us / ops) if ops else None,
            "histogram": [[lo, up, n] for lo, up, n in hist] if hist is not None else None,
        }
    throttled = {
        key: (change[field] / 1e6 if change.get(field) is not None else None)
        for key, field in THROTTLES.items()
    }
    return {
        "device": device,
        "volume_id": volume_id,
        "source": source,
        "directions": directions,
        "throttled_s": throttled,
        "queue_length": change.get("volume_queue_length"),
    }


def _seconds(microseconds: Optional[int]) -> Optional[float]:
    return microseconds / 1e6 if microseconds is not None else None


# ------------------------------------------------------------------------------ reading


class _AdminCommand(ctypes.Structure):
    _fields_ = [
        ("opcode", ctypes.c_uint8),
        ("flags", ctypes.c_uint8),
        ("rsvd1", ctypes.c_uint16),
        ("nsid", ctypes.c_uint32),
        ("cdw2", ctypes.c_uint32),
        ("cdw3", ctypes.c_uint32),
        ("metadata", ctypes.c_uint64),
        ("addr", ctypes.c_uint64),
        ("metadata_len", ctypes.c_uint32),
        ("data_len", ctypes.c_uint32),
        ("cdw10", ctypes.c_uint32),
        ("cdw11", ctypes.c_uint32),
        ("cdw12", ctypes.c_uint32),
        ("cdw13", ctypes.c_uint32),
        ("cdw14", ctypes.c_uint32),
        ("cdw15", ctypes.c_uint32),
        ("timeout_ms", ctypes.c_uint32),
        ("result", ctypes.c_uint32),
    ]


def get_log_page_command(buffer_address: int) -> _AdminCommand:
    """Get Log Page 0xD0, 4,096 bytes: NUMDL (dwords - 1) in cdw10's upper half."""
    command = _AdminCommand()
    command.opcode = NVME_ADMIN_GET_LOG_PAGE
    command.nsid = 1
    command.addr = buffer_address
    command.data_len = PAGE_SIZE
    command.cdw10 = LOG_PAGE_ID | ((PAGE_SIZE // 4 - 1) << 16)
    return command


def read_page_ioctl(device: str) -> bytes:
    buffer = ctypes.create_string_buffer(PAGE_SIZE)
    command = get_log_page_command(ctypes.addressof(buffer))
    fd = os.open(device, os.O_RDONLY)
    try:
        fcntl.ioctl(fd, NVME_IOCTL_ADMIN_CMD, command)
    finally:
        os.close(fd)
    return buffer.raw


def read_page_nvme_cli(device: str) -> bytes:
    nvme = shutil.which("nvme")
    if nvme is None:
        raise EbsStatsError("the NVMe ioctl was refused and nvme-cli is not installed")
    done = subprocess.run(
        [nvme, "get-log", device, f"--log-id={LOG_PAGE_ID}", f"--log-len={PAGE_SIZE}", "--raw-binary"],
        capture_output=True,
        timeout=30,
        check=False,
    )
    if done.returncode != 0:
        raise EbsStatsError(f"nvme get-log {device}: {done.stderr.decode('utf-8', 'replace').strip()}")
    return done.stdout


def read_ebs(device: str) -> Stats:
    """The parsed page of an EBS NVMe device (the ioctl, then nvme-cli)."""
    try:
        return parse(read_page_ioctl(device))
    except OSError:
        return parse(read_page_nvme_cli(device))


def read_kernel(name: str, sys_block: str = "/sys/block") -> Stats:
    """Counters of a device the kernel keeps (``/sys/block/<name>/stat``): for emulated volumes."""
    with open(os.path.join(sys_block, name, "stat"), encoding="ascii") as handle:
        fields = [int(v) for v in handle.read().split()]
    if len(fields) < 8:
        raise EbsStatsError(f"/sys/block/{name}/stat has {len(fields)} fields; expected at least 8")
    reads, _, read_sectors, read_ms, writes, _, write_sectors, write_ms = fields[:8]
    stats: Stats = {
        "total_read_ops": reads,
        "total_write_ops": writes,
        "total_read_bytes": read_sectors * 512,
        "total_write_bytes": write_sectors * 512,
        "total_read_time": read_ms * 1000,
        "total_write_time": write_ms * 1000,
        "volume_queue_length": fields[8] if len(fields) > 8 else None,
        "read_histogram": None,
        "write_histogram": None,
    }
    for field in THROTTLES.values():
        stats[field] = None
    return stats


class VolumeProbe:
    """Reads every device of a target before and after a phase: EBS volumes from their log page,
    emulated (loop) volumes from the kernel's counters; anything else is not read.

    A device that cannot be read is reported with the reason, never failing the phase: the
    volume's view is a second opinion beside fio's, not a condition of the measurement.
    """

    def __init__(self, devices: List[Any]) -> None:
        self.devices = devices

    def _read(self, device: Any) -> Tuple[str, Stats]:
        if device.volume_id:
            return "nvme-log-page", read_ebs(device.path)
        if device.name.startswith("loop"):
            return "kernel-counters", read_kernel(device.name)
        raise EbsStatsError("not an EBS volume")

    def read(self) -> Dict[str, Any]:
        readings: Dict[str, Any] = {}
        for device in self.devices:
            try:
                readings[device.name] = self._read(device)
            except (OSError, EbsStatsError, subprocess.SubprocessError) as exc:
                readings[device.name] = exc
        return readings

    def since(self, before: Dict[str, Any]) -> List[Dict[str, Any]]:
        after = self.read()
        views: List[Dict[str, Any]] = []
        for device in self.devices:
            first, last = before.get(device.name), after.get(device.name)
            if isinstance(first, EbsStatsError) and str(first) == "not an EBS volume":
                continue
            failed = first if isinstance(first, Exception) else last if isinstance(last, Exception) else None
            if failed is not None or first is None or last is None:
                views.append({"device": device.path, "volume_id": device.volume_id, "error": str(failed)})
                continue
            source, old = first
            _, new = last
            try:
                change = delta(old, new)
            except EbsStatsError as exc:
                views.append({"device": device.path, "volume_id": device.volume_id, "error": str(exc)})
                continue
            views.append(summary(change, device.path, device.volume_id, source))
        return views

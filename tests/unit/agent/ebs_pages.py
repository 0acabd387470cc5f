"""EBS statistics log pages built field by field from the documented layout (test fixtures).

Offsets as AWS's ``ebsnvme`` and nvme-cli's ``struct amzn_latency_log_page_base`` lay them out,
written here independently of the parser: magic at 0, version at 4, eleven u64 counters from 8,
416 reserved bytes, the read histogram at 512 and the write histogram at 2,056 (each u64 bin
count then 64 bins of u64 lower, u64 upper, u32 count, u32 reserved), 4,096 bytes in all.
"""

from __future__ import annotations

import struct
from typing import Dict, List, Sequence, Tuple

MAGIC = 0x3C23B510
COUNTER_OFFSETS = {
    "total_read_ops": 8,
    "total_write_ops": 16,
    "total_read_bytes": 24,
    "total_write_bytes": 32,
    "total_read_time": 40,
    "total_write_time": 48,
    "ebs_volume_performance_exceeded_iops": 56,
    "ebs_volume_performance_exceeded_tp": 64,
    "ec2_instance_ebs_performance_exceeded_iops": 72,
    "ec2_instance_ebs_performance_exceeded_tp": 80,
    "volume_queue_length": 88,
}
READ_HISTOGRAM = 512
WRITE_HISTOGRAM = 512 + 8 + 64 * 24
# The power-of-two microsecond bins nvme-cli prints for EBS (lower inclusive, upper exclusive).
BINS: List[Tuple[int, int]] = [(0, 1)] + [(2**i, 2 ** (i + 1)) for i in range(0, 27)]


def page(
    counters: Dict[str, int],
    read: Sequence[int] = (),
    write: Sequence[int] = (),
    magic: int = MAGIC,
    bins: int = len(BINS),
) -> bytes:
    buffer = bytearray(4096)
    struct.pack_into("<I", buffer, 0, magic)
    struct.pack_into("<I", buffer, 4, 1)
    for name, value in counters.items():
        struct.pack_into("<Q", buffer, COUNTER_OFFSETS[name], value)
    for offset, counts in ((READ_HISTOGRAM, read), (WRITE_HISTOGRAM, write)):
        struct.pack_into("<Q", buffer, offset, bins)
        for index in range(min(bins, 64)):
            lower, upper = BINS[index] if index < len(BINS) else (0, 0)
            count = counts[index] if index < len(counts) else 0
            struct.pack_into("<QQII", buffer, offset + 8 + index * 24, lower, upper, count, 0)
    return bytes(buffer)

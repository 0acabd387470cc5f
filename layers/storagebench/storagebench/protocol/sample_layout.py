"""Where the cold-read check reads: evenly spaced extents of a device (stdlib, shared with planning).

The agent reads these extents (``agent.cold_read``); the planner estimates their time from the
same layout (``kinds.ebs``), so the estimate and the read agree on every byte.
"""

from __future__ import annotations

import re
from typing import List, Tuple

MIB = 1 << 20
GIB = 1 << 30
MAX_SHARE = 8  # a sample reads at most 1/MAX_SHARE of a device: it stays a sample
# An extent is at least this long (fewer extents on a small volume), so dd's start-up stays small
# against its read (8 MiB: 64 ms at 125 MiB/s, against a few ms to start dd).
MIN_EXTENT_BYTES = 8 * MIB
DEFAULT_SAMPLE_BYTES = 4 * GIB
DEFAULT_EXTENTS = 32
SAMPLE_BLOCK = "1M"  # the check's read size unless the plan's dd block_size says otherwise
PASSES = ("cold", "warm")

_SIZE = re.compile(r"^(\d+)([kKmM]?)$")


def block_bytes(text: str) -> int:
    """dd's block size (``1M``, ``128k``, ``4096``) in bytes."""
    found = _SIZE.match(text.strip())
    if found is None or int(found.group(1)) == 0:
        raise ValueError(f"block size {text!r} is not a positive number of bytes, k or M")
    return int(found.group(1)) * {"": 1, "k": 1 << 10, "m": MIB}[found.group(2).lower()]


def sample_layout(device_bytes: int, sample_bytes: int, extents: int, block: int) -> List[Tuple[int, int]]:
    """(skip, count) in ``block`` units of each extent: evenly spaced, each centred in its share.

    The sample is ``sample_bytes`` capped at an eighth of the device (one block at least), split
    into at most ``extents`` extents of equal whole blocks and at least ``MIN_EXTENT_BYTES`` each
    (one extent when the sample is smaller); a device smaller than one block has none.
    """
    if block <= 0 or extents <= 0 or sample_bytes <= 0:
        raise ValueError(
            "a sample needs block, extents and sample_bytes > 0, "
            f"got block {block}, extents {extents}, sample_bytes {sample_bytes}"
        )
    blocks = device_bytes // block
    if blocks == 0:
        return []
    budget = max(1, min(sample_bytes, device_bytes // MAX_SHARE) // block)
    count = max(1, min(extents, budget // max(1, MIN_EXTENT_BYTES // block)))
    size = budget // count
    stride = blocks / count
    return [
        (max(0, min(int(index * stride + (stride - size) / 2), blocks - size)), size)
        for index in range(count)
    ]

"""The compiled twin's bytes through a real FUSE mount and a loop device, on both data paths.

Read replies of written ranges leave by splice(2) (the backing file's pages moved into a pipe,
then into /dev/fuse: native/twin/src/splice.rs) or, with ``--copy``, through a user-space buffer.
Each test writes known patterns at several offsets and sizes (4 KiB, 128 KiB, 1 MiB, off page
and 64 KiB chunk boundaries, next to ranges never written), reads them back and compares every
byte with what the volume must hold; the twin's final state says which path served.
"""

from __future__ import annotations

import mmap
import os
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from storagebench.agent.twin.fuse import unmount
from storagebench.agent.twin.volume import TwinVolume, twin_unavailable
from storagebench_local.native_twin import NATIVE_TWIN

pytestmark = [pytest.mark.root]

KIB, MIB = 1 << 10, 1 << 20
CAPACITY = 64 * MIB
SPEC = {"limits": {"iops": 100_000, "mibps": 10_000}, "latency": {"modes": [{"p50_ms": 0.05, "p99_ms": 0.1}]}}
# (offset, size): aligned and not, within a 64 KiB chunk and across several, beside holes
PATTERNS = [
    (0, 4 * KIB),
    (12 * KIB, 128 * KIB),
    (4 * MIB, MIB),
    (9 * MIB + 12_345, MIB - 7),  # off pages and chunks, the largest request less a few bytes
    (20 * MIB + 60 * KIB, 8 * KIB),  # across a chunk boundary
    (CAPACITY - 4 * KIB, 4 * KIB),  # the last block
]
# Reads that mix written bytes with holes, and reads of holes alone (the zero page)
SPANS = [(0, MIB), (4 * MIB - 64 * KIB, MIB), (9 * MIB, MIB), (20 * MIB, 128 * KIB), (30 * MIB, MIB)]


def pattern(offset: int, size: int) -> bytes:
    """Bytes that differ from every other offset's: a wrong offset or a stale page shows."""
    seed = offset.to_bytes(8, "little")
    block = bytes((seed[i % 8] + i * 31) % 251 for i in range(4096))
    return (block * (size // 4096 + 1))[:size]


@dataclass
class Served:
    twin: TwinVolume
    expected: bytearray


@pytest.fixture(params=["splice", "copy"])
def served(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Served]:
    reason = twin_unavailable()
    if reason is not None:
        pytest.skip(reason)
    if not NATIVE_TWIN.is_file():
        pytest.fail(f"{NATIVE_TWIN} is not built (make setup builds it; it needs cargo)")
    program = str(NATIVE_TWIN)
    if request.param == "copy":
        wrapper = tmp_path / "bin" / "storagebench-twin"  # TwinVolume runs a program of that name
        wrapper.parent.mkdir()
        wrapper.write_text(f'#!/bin/sh\nexec {NATIVE_TWIN} --copy "$@"\n')
        wrapper.chmod(0o755)
        program = str(wrapper)
    twin = TwinVolume(str(tmp_path / "v.img"), str(tmp_path / "v.twin"), CAPACITY, SPEC, program)
    twin.start()
    try:
        yield Served(twin, bytearray(CAPACITY))
    finally:
        if twin.process is not None and twin.process.poll() is None:
            twin.stop()
        else:
            unmount(twin.mountpoint)
    state = twin.state
    assert state is not None
    detail = state["data_path_detail"]
    assert state["data_path"] == request.param, detail
    assert state["ios"] == 0  # never modelled: every reply at once
    assert detail["read_replies_of_zeros"] > 0  # the spans of holes alone
    if request.param == "copy":
        assert (detail["copy_reason"], detail["read_replies_spliced"]) == ("--copy", 0)
    else:
        assert detail["copy_reason"] is None
        assert detail["read_replies_spliced"] > 0
        if detail["read_replies_copied"]:  # only what a short pipe cannot hold (fs.pipe-max-size)
            assert detail["pipe_short_reason"] is not None, detail


def check_spans(read: Any, expected: bytearray, spans: list[tuple[int, int]]) -> None:
    for offset, size in spans:
        got = read(offset, size)
        want = bytes(expected[offset : offset + size])
        assert len(got) == size, (offset, size)
        if got != want:
            first = next(i for i in range(size) if got[i] != want[i])
            raise AssertionError(f"read of {size} at {offset}: first wrong byte at {offset + first}")


def test_patterns_read_back_through_the_fuse_file(served: Served) -> None:
    """Direct I/O on the twin's file: each call reaches the twin as it is, at any byte offset."""
    fd = os.open(served.twin.volume_path, os.O_RDWR)
    try:
        for offset, size in PATTERNS:
            data = pattern(offset, size)
            assert os.pwrite(fd, data, offset) == size
            served.expected[offset : offset + size] = data
        check_spans(lambda o, n: os.pread(fd, n, o), served.expected, PATTERNS + SPANS)
        # overwrite part of a written range: the new bytes, not the page the first write left
        data = pattern(1, 64 * KIB)
        assert os.pwrite(fd, data, 4 * MIB + 4 * KIB) == len(data)
        served.expected[4 * MIB + 4 * KIB : 4 * MIB + 68 * KIB] = data
        check_spans(lambda o, n: os.pread(fd, n, o), served.expected, [(4 * MIB, MIB)])
    finally:
        os.close(fd)


def direct_read(fd: int, offset: int, size: int) -> bytes:
    buffer = mmap.mmap(-1, size)  # page-aligned, as O_DIRECT wants
    try:
        assert os.preadv(fd, [buffer], offset) == size
        return bytes(buffer)
    finally:
        buffer.close()


def test_patterns_read_back_through_a_loop_device_with_direct_io(served: Served) -> None:
    """The volume as fio sees it: a loop device with direct I/O on the twin's file (its requests
    are whole sectors, 1 MiB at most)."""
    loop = subprocess.run(
        ["losetup", "--find", "--show", "--direct-io=on", served.twin.volume_path],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    try:
        fd = os.open(loop, os.O_RDWR | os.O_DIRECT)
        try:
            sectors = [(o - o % 512, s - s % 512) for o, s in PATTERNS]  # O_DIRECT: whole sectors
            for offset, size in sectors:
                data = pattern(offset, size)
                buffer = mmap.mmap(-1, size)
                buffer.write(data)
                assert os.pwritev(fd, [buffer], offset) == size
                buffer.close()
                served.expected[offset : offset + size] = data
            spans = [(o - o % 512, s - s % 512) for o, s in SPANS]
            check_spans(lambda o, n: direct_read(fd, o, n), served.expected, sectors + spans)
        finally:
            os.close(fd)
    finally:
        subprocess.run(["losetup", "--detach", loop], check=True)

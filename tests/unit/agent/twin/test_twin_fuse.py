"""The twin's FUSE protocol server (agent.twin.fuse.VolumeServer), without root and without /dev/fuse.

A SOCK_SEQPACKET socket pair keeps message boundaries as /dev/fuse does: one read is one request,
one write is one reply. Requests are built here from the struct layouts of
include/uapi/linux/fuse.h (written out independently of the server's own), and the replies'
lengths, error codes and ``unique`` are checked against that header.
"""

from __future__ import annotations

import errno
import socket
import stat
import struct
from typing import Callable, Dict, List, Optional, Tuple

import pytest

from storagebench.agent.twin.fuse import VolumeServer

# include/uapi/linux/fuse.h, field by field:
# fuse_in_header: len opcode unique nodeid uid gid pid total_extlen padding
IN_HEADER = struct.Struct("<IIQQIIIHH")
# fuse_out_header: len error unique
OUT_HEADER = struct.Struct("<IiQ")
# fuse_init_in: major minor max_readahead flags flags2 unused[11]
INIT_IN = struct.Struct("<IIIII44x")
# fuse_init_out (7.36+): major minor max_readahead flags max_background congestion_threshold
# max_write time_gran max_pages map_alignment flags2 max_stack_depth unused[6]: 64 bytes
INIT_OUT_SIZE = 64
INIT_OUT_HEAD = struct.Struct("<IIIIHHIIH")  # up to max_pages
# fuse_attr: ino size blocks atime mtime ctime atimensec mtimensec ctimensec mode nlink uid gid
# rdev blksize flags
ATTR = struct.Struct("<QQQQQQIIIIIIIIII")
# fuse_attr_out: attr_valid attr_valid_nsec dummy, then a fuse_attr
ATTR_OUT = struct.Struct("<QII")
# fuse_entry_out: nodeid generation entry_valid attr_valid entry_valid_nsec attr_valid_nsec, then a fuse_attr
ENTRY_OUT = struct.Struct("<QQQQII")
# fuse_getattr_in: getattr_flags dummy fh
GETATTR_IN = struct.Struct("<IIQ")
# fuse_open_in: flags open_flags; fuse_open_out: fh open_flags backing_id
OPEN_IN = struct.Struct("<II")
OPEN_OUT = struct.Struct("<QIi")
# fuse_read_in and fuse_write_in: fh offset size read_flags/write_flags lock_owner flags padding
READ_IN = struct.Struct("<QQIIQII")
WRITE_IN = struct.Struct("<QQIIQII")
# fuse_write_out: size padding
WRITE_OUT = struct.Struct("<II")
# fuse_forget_in: nlookup
FORGET_IN = struct.Struct("<Q")
# fuse_statfs_out is a fuse_kstatfs: blocks bfree bavail files ffree (u64), bsize namelen frsize
# padding spare[6] (u32): 80 bytes
STATFS_OUT_SIZE = 80
STATFS_HEAD = struct.Struct("<QQQQQIII")

LOOKUP, FORGET, GETATTR, OPEN, READ, WRITE, STATFS, INIT, DESTROY = 1, 2, 3, 14, 15, 16, 17, 26, 38
SETXATTR = 21  # not implemented by the twin
FUSE_ASYNC_READ, FUSE_ASYNC_DIO, FUSE_MAX_PAGES = 1 << 0, 1 << 15, 1 << 22
FOPEN_DIRECT_IO = 1 << 0
ROOT = 1
SIZE = 1 << 20  # the served file


class FakeClock:
    """Advances by ``step`` on every reading, so the serve loop always makes progress."""

    def __init__(self, start: float = 100.0, step: float = 0.001) -> None:
        self.now = start
        self.step = step

    def __call__(self) -> float:
        self.now += self.step
        return self.now


class Harness:
    """A VolumeServer on one end of a socket pair; the test plays the kernel on the other."""

    def __init__(
        self, handler: Optional[Callable[..., Tuple[float, bytes]]] = None, clock: Optional[FakeClock] = None
    ) -> None:
        self.kernel, served = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self.served = served
        self.clock = clock or FakeClock()
        self.calls: List[Tuple[int, int, bool, Optional[bytes], float]] = []
        self.handler = handler or self.immediate
        self.server = VolumeServer(served.fileno(), SIZE, self._handle, clock=self.clock)
        self.replies: List[Tuple[float, bytes]] = []  # (fake time seen, the reply)
        self._unique = 0

    def immediate(
        self, offset: int, length: int, write: bool, data: Optional[memoryview], now: float
    ) -> Tuple[float, bytes]:
        return now, b"" if write else bytes([offset // 4096 % 251]) * length

    def _handle(
        self, offset: int, length: int, write: bool, data: Optional[memoryview], now: float
    ) -> Tuple[float, bytes]:
        self.calls.append((offset, length, write, bytes(data) if data is not None else None, now))
        return self.handler(offset, length, write, data, now)

    def close(self) -> None:
        self.kernel.close()
        self.served.close()

    def send(self, opcode: int, body: bytes = b"", node: int = ROOT, unique: Optional[int] = None) -> int:
        if unique is None:
            self._unique += 2
            unique = self._unique
        header = IN_HEADER.pack(IN_HEADER.size + len(body), opcode, unique, node, 0, 0, 4242, 0, 0)
        self.kernel.send(header + body)
        return unique

    def _collect(self) -> None:
        self.kernel.setblocking(False)
        while True:
            try:
                reply = self.kernel.recv(SIZE + 4096)
            except BlockingIOError:
                return
            self.replies.append((self.clock.now, reply))

    def serve_until(self, replies: int, max_rounds: int = 10_000) -> None:
        """Run the server's loop until ``replies`` replies have arrived in all."""
        rounds = [0]

        def done() -> bool:
            self._collect()
            rounds[0] += 1
            if rounds[0] > max_rounds:
                raise AssertionError(
                    f"only {len(self.replies)} of {replies} replies after {max_rounds} rounds"
                )
            return len(self.replies) >= replies

        self.server.serve(should_stop=done)
        self._collect()

    def exchange(self, opcode: int, body: bytes = b"", node: int = ROOT) -> Tuple[int, int, bytes]:
        """One request and its reply: (error, unique, payload); the unique is checked."""
        before = len(self.replies)
        unique = self.send(opcode, body, node)
        self.serve_until(before + 1)
        length, error, echoed, payload = parse(self.replies[before][1])
        assert echoed == unique
        return error, length, payload


def parse(reply: bytes) -> Tuple[int, int, int, bytes]:
    length, error, unique = OUT_HEADER.unpack_from(reply)
    assert length == len(reply), "fuse_out_header.len is the whole reply"
    return length, error, unique, reply[OUT_HEADER.size :]


@pytest.fixture
def harness() -> Harness:
    made = Harness()
    yield made  # type: ignore[misc]
    made.close()


def init_body(
    major: int = 7, minor: int = 38, flags: int = FUSE_ASYNC_READ | FUSE_ASYNC_DIO | FUSE_MAX_PAGES | (1 << 3)
) -> bytes:
    return INIT_IN.pack(major, minor, 128 * 1024, flags, 0)


def read_body(offset: int, size: int) -> bytes:
    return READ_IN.pack(0, offset, size, 0, 0, 0, 0)


# ---------------------------------------------------------------- the mount's conversation


def test_init_negotiates_asynchronous_direct_io_and_1_mib_requests(harness: Harness) -> None:
    error, length, payload = harness.exchange(INIT, init_body())
    assert (error, length) == (0, OUT_HEADER.size + INIT_OUT_SIZE)
    major, minor, readahead, flags, _, _, max_write, _, max_pages = INIT_OUT_HEAD.unpack_from(payload)
    assert (major, minor, readahead) == (7, 38, 128 * 1024)
    assert flags & FUSE_ASYNC_DIO and flags & FUSE_ASYNC_READ and flags & FUSE_MAX_PAGES
    assert not flags & (1 << 3)  # a flag the twin does not want is not echoed back
    assert max_write == 1 << 20
    assert max_pages == 256


def test_init_answers_an_older_minor_with_that_minor(harness: Harness) -> None:
    _, _, payload = harness.exchange(INIT, init_body(minor=31))
    assert INIT_OUT_HEAD.unpack_from(payload)[:2] == (7, 31)


def test_init_refuses_another_major_version(harness: Harness) -> None:
    error, length, _ = harness.exchange(INIT, init_body(major=8))
    assert (error, length) == (-errno.EPROTO, OUT_HEADER.size)


def test_lookup_finds_the_volume_file_and_nothing_else(harness: Harness) -> None:
    error, length, payload = harness.exchange(LOOKUP, b"volume\0")
    assert (error, length) == (0, OUT_HEADER.size + ENTRY_OUT.size + ATTR.size)
    nodeid = ENTRY_OUT.unpack_from(payload)[0]
    attr = ATTR.unpack_from(payload, ENTRY_OUT.size)
    assert nodeid == attr[0] != ROOT
    assert attr[1] == SIZE
    assert stat.S_ISREG(attr[9])
    error, length, _ = harness.exchange(LOOKUP, b"other\0")
    assert (error, length) == (-errno.ENOENT, OUT_HEADER.size)


def test_getattr_of_the_root_and_of_the_file(harness: Harness) -> None:
    _, _, entry = harness.exchange(LOOKUP, b"volume\0")
    file_node = ENTRY_OUT.unpack_from(entry)[0]
    error, length, payload = harness.exchange(GETATTR, GETATTR_IN.pack(0, 0, 0), node=ROOT)
    assert (error, length) == (0, OUT_HEADER.size + ATTR_OUT.size + ATTR.size)
    assert stat.S_ISDIR(ATTR.unpack_from(payload, ATTR_OUT.size)[9])
    _, _, payload = harness.exchange(GETATTR, GETATTR_IN.pack(0, 0, 0), node=file_node)
    attr = ATTR.unpack_from(payload, ATTR_OUT.size)
    assert (attr[0], attr[1], attr[2]) == (file_node, SIZE, SIZE // 512)  # blocks in 512-byte units


def test_open_asks_for_direct_io(harness: Harness) -> None:
    error, length, payload = harness.exchange(OPEN, OPEN_IN.pack(0o2, 0), node=2)
    assert (error, length) == (0, OUT_HEADER.size + OPEN_OUT.size)
    assert OPEN_OUT.unpack(payload)[1] & FOPEN_DIRECT_IO


def test_statfs_reports_the_volume_in_4k_blocks(harness: Harness) -> None:
    error, length, payload = harness.exchange(STATFS)
    assert (error, length) == (0, OUT_HEADER.size + STATFS_OUT_SIZE)
    blocks, _, _, _, _, bsize, namelen, frsize = STATFS_HEAD.unpack_from(payload)
    assert (blocks * bsize, bsize, frsize) == (SIZE, 4096, 4096)
    assert namelen == 255


def test_an_unknown_opcode_is_not_supported(harness: Harness) -> None:
    error, length, _ = harness.exchange(SETXATTR, b"user.x\0")
    assert (error, length) == (-errno.ENOSYS, OUT_HEADER.size)
    error, _, _ = harness.exchange(9999)
    assert error == -errno.ENOSYS


def test_forget_gets_no_reply(harness: Harness) -> None:
    forget = harness.send(FORGET, FORGET_IN.pack(1), node=2)
    error, _, _ = harness.exchange(STATFS)  # the first reply after FORGET is STATFS's
    assert error == 0
    assert [parse(reply)[2] for _, reply in harness.replies] == [forget + 2]


def test_destroy_is_answered_and_ends_serving(harness: Harness) -> None:
    unique = harness.send(DESTROY)
    harness.server.serve()  # returns by itself
    harness._collect()
    ((_, reply),) = harness.replies
    assert parse(reply) == (OUT_HEADER.size, 0, unique, b"")
    assert harness.server.stopping


def test_serving_ends_when_the_kernel_side_closes() -> None:
    made = Harness()
    made.kernel.close()
    made.server.serve()  # an unmount: read returns nothing, serve returns
    made.served.close()


# ---------------------------------------------------------------- I/O


def test_read_returns_the_handlers_data_with_the_unique(harness: Harness) -> None:
    error, length, payload = harness.exchange(READ, read_body(8192, 4096), node=2)
    assert (error, length) == (0, OUT_HEADER.size + 4096)
    assert payload == bytes([2]) * 4096
    ((offset, size, write, data, _),) = harness.calls
    assert (offset, size, write, data) == (8192, 4096, False, None)
    assert (harness.server.reads, harness.server.writes) == (1, 0)


def test_write_hands_the_data_over_and_answers_the_size(harness: Harness) -> None:
    data = bytes(range(256)) * 16
    error, length, payload = harness.exchange(
        WRITE, WRITE_IN.pack(0, 4096, len(data), 0, 0, 0, 0) + data, node=2
    )
    assert (error, length) == (0, OUT_HEADER.size + WRITE_OUT.size)
    assert WRITE_OUT.unpack(payload) == (len(data), 0)
    assert harness.calls[0][:4] == (4096, len(data), True, data)
    assert (harness.server.reads, harness.server.writes) == (0, 1)


def test_a_large_write_arrives_whole(harness: Harness) -> None:
    """128 KiB (what a socket pair carries in one message without privileges; the server's
    buffer takes the 1 MiB that /dev/fuse delivers with max_pages 256)."""
    data = bytes(range(256)) * 512
    error, _, payload = harness.exchange(WRITE, WRITE_IN.pack(0, 0, len(data), 0, 0, 0, 0) + data, node=2)
    assert error == 0
    assert WRITE_OUT.unpack(payload)[0] == len(data)
    assert harness.calls[0][3] == data


@pytest.mark.parametrize(("offset", "size"), [(SIZE - 4096 + 512, 4096), (SIZE, 4096), (2 * SIZE, 512)])
def test_io_beyond_the_file_is_invalid(harness: Harness, offset: int, size: int) -> None:
    error, length, _ = harness.exchange(READ, read_body(offset, size), node=2)
    assert (error, length) == (-errno.EINVAL, OUT_HEADER.size)
    error, _, _ = harness.exchange(WRITE, WRITE_IN.pack(0, offset, size, 0, 0, 0, 0) + b"\0" * size, node=2)
    assert error == -errno.EINVAL
    assert harness.calls == []  # never reached the model or the backing file


def test_the_last_block_of_the_file_is_readable(harness: Harness) -> None:
    error, length, _ = harness.exchange(READ, read_body(SIZE - 4096, 4096), node=2)
    assert (error, length) == (0, OUT_HEADER.size + 4096)


def test_replies_go_out_by_due_time_not_arrival_and_never_early() -> None:
    """Three reads arrive together; the handler makes the first the slowest. Each reply goes out
    at or after its due time (on the fake clock), in due order, each with its own unique."""
    delays: Dict[int, float] = {0: 0.030, 4096: 0.010, 8192: 0.020}
    due: Dict[int, float] = {}

    def delayed(
        offset: int, length: int, write: bool, data: Optional[memoryview], now: float
    ) -> Tuple[float, bytes]:
        due[offset] = now + delays[offset]
        return due[offset], bytes([offset // 4096]) * length

    made = Harness(handler=delayed)
    try:
        uniques = {offset: made.send(READ, read_body(offset, 4096), node=2) for offset in (0, 4096, 8192)}
        made.serve_until(3)
        order = []
        for seen_at, reply in made.replies:
            _, error, unique, payload = parse(reply)
            offset = next(o for o, u in uniques.items() if u == unique)
            assert error == 0
            assert payload == bytes([offset // 4096]) * 4096
            assert seen_at >= due[offset]
            order.append(offset)
        assert order == [4096, 8192, 0]
    finally:
        made.close()


def test_replies_still_pending_are_sent_when_serving_stops() -> None:
    """Stopping answers what waits, so no I/O is left hanging in the kernel."""
    made = Harness(handler=lambda offset, length, write, data, now: (now + 3600.0, b"\0" * length))
    try:
        unique = made.send(READ, read_body(0, 4096), node=2)
        rounds = [0]

        def stop_after_arrival() -> bool:
            rounds[0] += 1
            return made.server.reads == 1

        made.server.serve(should_stop=stop_after_arrival)
        made._collect()
        ((_, reply),) = made.replies
        assert parse(reply)[1:3] == (0, unique)
        assert made.server.pending == []
    finally:
        made.close()


def test_a_reply_sent_a_stall_late_reports_the_stall_once() -> None:
    """Replies due at 100.01 and 100.02 on a clock that jumps 50 ms (the twin could not run): one
    stall of about 50 ms is reported, the second reply being due within it."""
    stalls: List[float] = []
    made = Harness(handler=lambda offset, length, write, data, now: (100.01 + offset / 4096 * 0.01, b""))
    made.clock.now = 100.0
    made.server.on_stall = stalls.append
    try:
        for offset in (0, 4096):
            made.send(READ, read_body(offset, 4096), node=2)
        made.served.setblocking(False)
        made.server._drain()
        made.clock.now = 100.06  # the stall
        made.server._send_due(made.clock())
        assert made.server.pending == []
        assert stalls == [pytest.approx(0.05, abs=0.002)]
        made.server.pending.append((100.065, 9, 99, b""))  # on time again: no stall
        made.server._send_due(100.066)
        assert len(stalls) == 1
    finally:
        made.close()

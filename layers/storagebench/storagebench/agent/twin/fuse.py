"""A one-file FUSE file system spoken directly over /dev/fuse (no libfuse: the agent is stdlib).

The twin serves its volume as the single file ``volume`` of a FUSE mount; a loop device with
direct I/O sits on top of it, so a block I/O from fio becomes one FUSE READ or WRITE here.
Replies are sent when the model says the I/O completes, not when it arrives: the kernel
matches a reply to its request by ``unique``, so replies may go out in any order and many
I/Os wait here at once (the mount negotiates asynchronous direct I/O).

Only what a loop device needs is implemented: INIT, LOOKUP, GETATTR, OPEN, READ, WRITE, FLUSH,
FSYNC, RELEASE, STATFS, the directory calls for the mount point, FORGET and DESTROY; anything
else is answered ENOSYS, which the kernel treats as "not supported".
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import errno
import heapq
import os
import select
import stat
import struct
import time
from typing import Callable, List, Optional, Tuple

from storagebench.agent.twin.model import STALL_S

# Opcodes (include/uapi/linux/fuse.h)
LOOKUP, FORGET, GETATTR, SETATTR = 1, 2, 3, 4
OPEN, READ, WRITE, STATFS, RELEASE, FSYNC = 14, 15, 16, 17, 18, 20
FLUSH, INIT, OPENDIR, READDIR, RELEASEDIR, FSYNCDIR = 25, 26, 27, 28, 29, 30
ACCESS, INTERRUPT, DESTROY, BATCH_FORGET = 34, 36, 38, 42
NO_REPLY = (FORGET, BATCH_FORGET, INTERRUPT)

# INIT flags
ASYNC_READ = 1 << 0
BIG_WRITES = 1 << 5
ASYNC_DIO = 1 << 15
MAX_PAGES = 1 << 22
# OPEN reply flags
FOPEN_DIRECT_IO = 1 << 0
FOPEN_PARALLEL_DIRECT_WRITES = 1 << 6

IN_HEADER = struct.Struct("<IIQQIIIHH")  # len, opcode, unique, nodeid, uid, gid, pid, extlen, pad
OUT_HEADER = struct.Struct("<IiQ")  # len, error, unique
INIT_IN = struct.Struct("<IIII")  # major, minor, max_readahead, flags
INIT_OUT = struct.Struct("<IIIIHHIIHHII24x")  # ... max_pages, map_alignment, flags2, max_stack_depth
ATTR = struct.Struct("<QQQQQQIIIIIIIIII")
ATTR_OUT = struct.Struct("<QII")  # attr_valid, attr_valid_nsec, dummy; then ATTR
ENTRY_OUT = struct.Struct("<QQQQII")  # nodeid, generation, entry_valid, attr_valid, nsecs; then ATTR
OPEN_OUT = struct.Struct("<QIi")
RW_IN = struct.Struct("<QQII")  # fh, offset, size, flags (read_in and write_in share the start)
RW_IN_SIZE = 40
WRITE_OUT = struct.Struct("<II")
STATFS_OUT = struct.Struct("<QQQQQIIII24x")

ROOT, FILE = 1, 2
FILE_NAME = b"volume"
MAX_IO = 1 << 20  # max_pages 256: a loop device's largest request arrives whole
READ_BUFFER = MAX_IO + 64 * 1024
# select's wake-up comes tens of µs late (65 µs measured in this VM), which at a 0.4 ms service
# time would be a 15 % error. The server learns that lateness and sleeps that much less, then
# polls the last SPIN_S until the reply is due: precise to a few µs without a core spent polling.
SPIN_S = 0.00002
EARLY_GAIN = 0.05  # EWMA weight of one observed lateness
MAX_EARLY_S = 0.002  # a wake-up later than this is a descheduled process, not timer lateness
PROTOCOL = (7, 38)


class FuseError(RuntimeError):
    """The FUSE mount could not be made or served."""


def _libc() -> ctypes.CDLL:
    return ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)


def mount(mountpoint: str, fd: int, source: str = "storagebench-twin") -> None:
    """mount(2) a FUSE file system served on ``fd`` (root only; no fusermount needed)."""
    options = f"fd={fd},rootmode=40000,user_id=0,group_id=0,allow_other,default_permissions"
    libc = _libc()
    result = libc.mount(
        source.encode(), mountpoint.encode(), b"fuse.storagebench-twin", 0x2 | 0x4, options.encode()
    )
    if result != 0:
        code = ctypes.get_errno()
        raise FuseError(f"mount {mountpoint}: {os.strerror(code)}")


def unmount(mountpoint: str) -> None:
    """Detach the mount (MNT_DETACH: a loop device still holding the file lets go later)."""
    libc = _libc()
    if libc.umount2(mountpoint.encode(), 2) != 0:
        code = ctypes.get_errno()
        if code not in (errno.EINVAL, errno.ENOENT):
            raise FuseError(f"umount {mountpoint}: {os.strerror(code)}")


def set_timer_slack(nanoseconds: int = 1000) -> None:
    """Wake-ups within a microsecond instead of the default 50: replies are due to the µs."""
    with contextlib.suppress(OSError, AttributeError):  # not Linux: the default slack
        _libc().prctl(29, nanoseconds, 0, 0, 0)  # PR_SET_TIMERSLACK


# An I/O handler gets (offset, length, is_write, data or None, arrival time) and returns when
# its reply is due plus the bytes to send back (a read's data; b"" for a write).
Handler = Callable[[int, int, bool, Optional[memoryview], float], Tuple[float, bytes]]


class VolumeServer:
    """Serves one file of ``size`` bytes on an open /dev/fuse descriptor."""

    def __init__(
        self,
        fd: int,
        size: int,
        handler: Handler,
        clock: Callable[[], float] = time.monotonic,
        on_stall: Optional[Callable[[float], None]] = None,
    ) -> None:
        """``on_stall(seconds)``: a reply left that much late, the start of a stall (the twin could
        not run); replies due within it are the same stall."""
        self.fd = fd
        self.on_stall = on_stall
        self._stall_end = float("-inf")
        self.size = size
        self.handler = handler
        self.clock = clock
        self.pending: List[Tuple[float, int, int, bytes]] = []  # (due, seq, unique, payload)
        self._seq = 0
        self._buffer = bytearray(READ_BUFFER)
        self._view = memoryview(self._buffer)
        self.stopping = False
        self.early_s = 0.0  # learnt wake-up lateness (_learn_lateness)
        self.reads = 0
        self.writes = 0

    # --- replies -------------------------------------------------------------------------------

    def _reply(self, unique: int, payload: bytes = b"", error: int = 0) -> None:
        header = OUT_HEADER.pack(OUT_HEADER.size + len(payload), -error if error else 0, unique)
        try:
            os.writev(self.fd, [header, payload] if payload else [header])
        except OSError as exc:
            if exc.errno != errno.ENOENT:  # ENOENT: the request was interrupted meanwhile
                raise

    def _attr(self, node: int) -> bytes:
        if node == ROOT:
            mode, size, links = stat.S_IFDIR | 0o755, 0, 2
        else:
            mode, size, links = stat.S_IFREG | 0o600, self.size, 1
        return ATTR.pack(node, size, (size + 511) // 512, 0, 0, 0, 0, 0, 0, mode, links, 0, 0, 0, 4096, 0)

    # --- requests ------------------------------------------------------------------------------

    def _dispatch(self, length: int, now: float) -> None:
        view = self._view
        _, opcode, unique, node, _, _, _, _, _ = IN_HEADER.unpack_from(view, 0)
        if opcode in (READ, WRITE):
            self._io(opcode == WRITE, unique, now)
        elif opcode not in NO_REPLY:
            self._control(opcode, unique, node, length)

    def _io(self, write: bool, unique: int, now: float) -> None:
        view = self._view
        body = IN_HEADER.size
        _, offset, size, _ = RW_IN.unpack_from(view, body)
        if offset < 0 or offset + size > self.size:
            self._reply(unique, error=errno.EINVAL)
            return
        data = view[body + RW_IN_SIZE : body + RW_IN_SIZE + size] if write else None
        due, payload = self.handler(offset, size, write, data, now)
        if write:
            self.writes += 1
            payload = WRITE_OUT.pack(size, 0)
        else:
            self.reads += 1
        self._seq += 1
        heapq.heappush(self.pending, (due, self._seq, unique, payload))

    def _control(self, opcode: int, unique: int, node: int, length: int) -> None:
        """Everything but READ and WRITE: the mount's bookkeeping, answered at once."""
        view = self._view
        body = IN_HEADER.size
        if opcode == INIT:
            major, minor, readahead, flags = INIT_IN.unpack_from(view, body)
            if major != 7:
                self._reply(unique, error=errno.EPROTO)
                return
            wanted = ASYNC_READ | BIG_WRITES | ASYNC_DIO | MAX_PAGES
            out = INIT_OUT.pack(
                7,
                min(minor, PROTOCOL[1]),
                readahead,
                flags & wanted,
                64,
                48,
                MAX_IO,
                1,
                MAX_IO // 4096,
                0,
                0,
                0,
            )
            self._reply(unique, out)
        elif opcode == LOOKUP:
            name = bytes(view[body:length]).rstrip(b"\0")
            if node == ROOT and name == FILE_NAME:
                self._reply(unique, ENTRY_OUT.pack(FILE, 0, 3600, 3600, 0, 0) + self._attr(FILE))
            else:
                self._reply(unique, error=errno.ENOENT)
        elif opcode in (GETATTR, SETATTR):  # nothing is settable: the answer is the attributes
            self._reply(unique, ATTR_OUT.pack(3600, 0, 0) + self._attr(node))
        elif opcode == OPEN:
            self._reply(unique, OPEN_OUT.pack(0, FOPEN_DIRECT_IO | FOPEN_PARALLEL_DIRECT_WRITES, 0))
        elif opcode == OPENDIR:
            self._reply(unique, OPEN_OUT.pack(0, 0, 0))
        elif opcode == READDIR:
            self._reply(unique, b"")  # the mount point lists nothing; the file is reached by name
        elif opcode in (FLUSH, FSYNC, RELEASE, RELEASEDIR, FSYNCDIR, ACCESS):
            self._reply(unique)
        elif opcode == STATFS:
            blocks = self.size // 4096
            self._reply(unique, STATFS_OUT.pack(blocks, 0, 0, 2, 0, 4096, 255, 4096, 0))
        elif opcode == DESTROY:
            self.stopping = True
            self._reply(unique)
        else:
            self._reply(unique, error=errno.ENOSYS)

    # --- the loop ------------------------------------------------------------------------------

    def _learn_lateness(self, late_s: float) -> None:
        """A timed-out select wakes this late on this machine: the server sleeps that much less."""
        if 0 <= late_s < MAX_EARLY_S:
            self.early_s += EARLY_GAIN * (late_s - self.early_s)

    def _send_due(self, now: float) -> None:
        pending = self.pending
        while pending and pending[0][0] <= now:
            due, _, unique, payload = heapq.heappop(pending)
            late = now - due
            # This late, and not due within the stall before it: the twin could not run.
            if late >= STALL_S and due > self._stall_end:
                self._stall_end = due + late
                if self.on_stall is not None:
                    self.on_stall(late)
            self._reply(unique, payload)

    def _drain(self) -> bool:
        """Read every request the kernel has queued; False once the mount is gone."""
        while True:
            try:
                length = os.readv(self.fd, [self._buffer])
            except BlockingIOError:
                return True
            except OSError as exc:
                if exc.errno == errno.ENOENT:  # interrupted before we read it
                    continue
                if exc.errno == errno.ENODEV:  # unmounted
                    return False
                raise
            if length == 0:
                return False
            self._dispatch(length, self.clock())

    def serve(
        self,
        should_stop: Callable[[], bool] = lambda: False,
        extra_fd: Optional[int] = None,
        on_extra: Optional[Callable[[], None]] = None,
    ) -> None:
        """Serve until DESTROY, unmount or ``should_stop``; ``extra_fd`` (the parent's commands)
        is watched alongside and ``on_extra`` called when it is readable."""
        os.set_blocking(self.fd, False)
        watched = [self.fd] if extra_fd is None else [self.fd, extra_fd]
        while not self.stopping:
            now = self.clock()
            self._send_due(now)
            if should_stop():
                break
            timeout = 0.5
            if self.pending:
                timeout = max(0.0, self.pending[0][0] - now - self.early_s - SPIN_S)
            if timeout > 0:
                readable, _, _ = select.select(watched, [], [], timeout)
                if not readable and self.pending:
                    self._learn_lateness(self.clock() - (now + timeout))
            else:
                # Within SPIN_S of a due reply: wait it out on the clock alone (a request arriving
                # meanwhile is read right after, at most SPIN_S late), then send it.
                due = self.pending[0][0]
                while self.clock() < due:
                    pass
                continue
            if extra_fd is not None and extra_fd in readable and on_extra is not None:
                on_extra()
            if self.fd in readable and not self._drain():
                break
        # Answer what is still waiting so no I/O is left hanging in the kernel.
        while self.pending:
            _, _, unique, payload = heapq.heappop(self.pending)
            try:
                self._reply(unique, payload)
            except OSError:
                break

"""A local stand-in for the virtual SAN's I/O path: controllers sharing one volume, reached through
multipath, so that losing a controller pauses the client's I/O and a surviving path resumes it.

This machine's kernel has no nbd, md, dm, nvme-tcp or NFS client, so the path is in user space:

* ``controller``: serves one backing file (the shared volume: two controllers over one file are
  io2 multi-attach) over a small TCP protocol: a request is ``op`` (1 byte, R/W/F), offset (8),
  length (4) and, for a write, the data; a reply is a status (4, 0 or an errno) and, for a read,
  the data.
* ``multipath``: an NBD server (fixed newstyle handshake, NBD_OPT_GO, READ/WRITE/FLUSH/DISC) for
  fio's ``nbd`` engine (libnbd, user space), which sends each request down the active path. A path
  that resets, closes or does not answer within ``timeout_ms`` is failed: the request is re-sent on
  the next path (a reconnect each time round, as dm-multipath's path checker would retry). So a
  killed controller is seen as fio's I/O stalling until the failover, then resuming on the survivor.

What is not real: the protocol (NVMe/TCP in the study), the kernel's multipath and its path checker
(here a per-request timeout and TCP resets), and the I/O never leaves this machine.
"""

from __future__ import annotations

import argparse
import os
import socket
import struct
import sys
import threading
import time
from collections.abc import Sequence

NBD_MAGIC = b"NBDMAGIC"
IHAVEOPT = 0x49484156454F5054
OPT_REPLY_MAGIC = 0x3E889045565A9
REQUEST_MAGIC = 0x25609513
SIMPLE_REPLY_MAGIC = 0x67446698
OPT_ABORT, OPT_GO, OPT_INFO = 2, 7, 6
REP_ACK, REP_INFO, REP_ERR_UNSUP = 1, 3, 0x80000001
FLAG_HAS_FLAGS, FLAG_SEND_FLUSH = 1, 4
CMD_READ, CMD_WRITE, CMD_DISC, CMD_FLUSH = 0, 1, 2, 3
EIO = 5


def _say(message: str) -> None:
    now = time.time()
    stamp = time.strftime("%H:%M:%S", time.localtime(now)) + f".{int(now % 1 * 1000):03d}"
    print(f"{stamp} nbd_multipath: {message}", file=sys.stderr, flush=True)


def _exact(sock: socket.socket, size: int) -> bytes:
    data = bytearray()
    while len(data) < size:
        chunk = sock.recv(size - len(data))
        if not chunk:
            raise ConnectionError("peer closed the connection")
        data += chunk
    return bytes(data)


# ------------------------------------------------------------------ controller


def _serve_controller(conn: socket.socket, fd: int, lock: threading.Lock) -> None:
    with conn:
        try:
            while True:
                op, offset, length = struct.unpack(">cQI", _exact(conn, 13))
                if op == b"W":
                    data = _exact(conn, length)
                    with lock:
                        os.pwrite(fd, data, offset)
                    conn.sendall(struct.pack(">I", 0))
                elif op == b"R":
                    with lock:
                        data = os.pread(fd, length, offset)
                    conn.sendall(struct.pack(">I", 0) + data.ljust(length, b"\0"))
                elif op == b"F":
                    os.fsync(fd)
                    conn.sendall(struct.pack(">I", 0))
                else:
                    return
        except (ConnectionError, OSError):
            return


def controller(path: str, host: str, port: int, ready: threading.Event | None = None) -> None:
    """Serve ``path`` on ``host:port`` until killed."""
    fd = os.open(path, os.O_RDWR)
    lock = threading.Lock()
    with socket.create_server((host, port), reuse_port=False) as server:
        if ready is not None:
            ready.set()
        while True:
            conn, _ = server.accept()
            conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            threading.Thread(target=_serve_controller, args=(conn, fd, lock), daemon=True).start()


# ------------------------------------------------------------------ multipath


class Paths:
    """The controllers in order; the active one answers, a failed one hands over to the next."""

    def __init__(self, addresses: Sequence[tuple[str, int]], timeout_s: float) -> None:
        self.addresses = list(addresses)
        self.timeout_s = timeout_s
        self.active = 0
        self.sock: socket.socket | None = None
        self.failovers = 0

    def _connect(self) -> socket.socket:
        if self.sock is None:
            host, port = self.addresses[self.active]
            sock = socket.create_connection((host, port), timeout=self.timeout_s)
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            sock.settimeout(self.timeout_s)
            self.sock = sock
        return self.sock

    def _fail(self, reason: OSError) -> None:
        if self.sock is not None:
            self.sock.close()
        self.sock = None
        failed = self.active
        self.active = (self.active + 1) % len(self.addresses)
        self.failovers += 1
        # what an operator reads in a multipath daemon's log: which path, why, and where I/O goes now
        host, port = self.addresses[failed]
        _say(f"path {failed} ({host}:{port}) failed: {reason!r}; I/O goes to path {self.active}")

    def request(self, op: bytes, offset: int, length: int, data: bytes = b"") -> tuple[int, bytes]:
        """Send one request, failing over until a path answers (a lost path stalls the I/O)."""
        while True:
            try:
                sock = self._connect()
                sock.sendall(struct.pack(">cQI", op, offset, length) + data)
                (status,) = struct.unpack(">I", _exact(sock, 4))
                return status, _exact(sock, length) if op == b"R" and status == 0 else b""
            except OSError as exc:
                self._fail(exc)


def _handshake(conn: socket.socket, size: int) -> bool:
    """Fixed newstyle negotiation up to NBD_OPT_GO; False when the client aborted."""
    conn.sendall(NBD_MAGIC + struct.pack(">QH", IHAVEOPT, 1 | 2))  # FIXED_NEWSTYLE | NO_ZEROES
    _exact(conn, 4)  # client flags
    while True:
        magic, option, length = struct.unpack(">QII", _exact(conn, 16))
        if magic != IHAVEOPT:
            raise ConnectionError(f"bad option magic {magic:#x}")
        _exact(conn, length)
        if option == OPT_ABORT:
            return False
        if option in (OPT_GO, OPT_INFO):
            info = struct.pack(">HQH", 0, size, FLAG_HAS_FLAGS | FLAG_SEND_FLUSH)  # NBD_INFO_EXPORT
            conn.sendall(
                struct.pack(">QII", OPT_REPLY_MAGIC, option, REP_INFO) + struct.pack(">I", len(info)) + info
            )
            conn.sendall(struct.pack(">QIII", OPT_REPLY_MAGIC, option, REP_ACK, 0))
            if option == OPT_GO:
                return True
        else:
            conn.sendall(struct.pack(">QIII", OPT_REPLY_MAGIC, option, REP_ERR_UNSUP, 0))


def _serve_nbd(conn: socket.socket, paths: Paths, size: int, lock: threading.Lock) -> None:
    with conn:
        try:
            if not _handshake(conn, size):
                return
            while True:
                magic, _flags, kind, cookie, offset, length = struct.unpack(">IHHQQI", _exact(conn, 28))
                if magic != REQUEST_MAGIC:
                    return
                data = _exact(conn, length) if kind == CMD_WRITE else b""
                if kind == CMD_DISC:
                    return
                op = {CMD_READ: b"R", CMD_WRITE: b"W", CMD_FLUSH: b"F"}.get(kind)
                if op is None:
                    conn.sendall(struct.pack(">IIQ", SIMPLE_REPLY_MAGIC, EIO, cookie))
                    continue
                with lock:  # one request on the paths at a time: the order a failover re-sends in
                    status, payload = paths.request(op, offset, length if op != b"F" else 0, data)
                conn.sendall(struct.pack(">IIQ", SIMPLE_REPLY_MAGIC, status, cookie) + payload)
        except (ConnectionError, OSError):
            return


def multipath(
    addresses: Sequence[tuple[str, int]],
    size: int,
    host: str,
    port: int,
    timeout_s: float,
    ready: threading.Event | None = None,
) -> None:
    """Serve NBD on ``host:port`` over the controllers at ``addresses`` until killed."""
    paths = Paths(addresses, timeout_s)
    lock = threading.Lock()
    with socket.create_server((host, port)) as server:
        if ready is not None:
            ready.set()
        while True:
            conn, peer = server.accept()
            conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            _say(f"NBD client {peer[0]}:{peer[1]} connected")
            threading.Thread(target=_serve_nbd, args=(conn, paths, size, lock), daemon=True).start()


def _address(text: str) -> tuple[str, int]:
    host, _, port = text.rpartition(":")
    if not host or not port.isdigit():
        raise argparse.ArgumentTypeError(f"{text!r}: expected host:port")
    return host, int(port)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m storagebench_local.nbd_multipath", description=__doc__)
    sub = parser.add_subparsers(dest="role", required=True)
    ctl = sub.add_parser("controller", help="serve a backing file to the multipath client")
    ctl.add_argument("--file", required=True)
    ctl.add_argument("--listen", type=_address, required=True)
    mp = sub.add_parser("multipath", help="serve NBD over the controllers, failing over between them")
    mp.add_argument("--paths", type=_address, nargs="+", required=True)
    mp.add_argument("--size", type=int, required=True, help="bytes of the shared backing file")
    mp.add_argument("--listen", type=_address, required=True)
    mp.add_argument("--timeout-ms", type=int, default=1000, help="a path silent this long is failed")
    args = parser.parse_args(argv)
    host, port = args.listen
    if args.role == "controller":
        controller(args.file, host, port)
    else:
        multipath(args.paths, args.size, host, port, args.timeout_ms / 1000.0)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""The compiled twin (native/twin) as its parent and the kernel see it, without root or /dev/fuse.

``storagebench-twin --fuse-fd N`` serves a SOCK_SEQPACKET socket instead of a mount: message
boundaries are kept as /dev/fuse keeps them, so the test plays the kernel on the other end, with
requests built from include/uapi/linux/fuse.h independently of the program. The parent's protocol
(``ready``; ``delay``/``overhead``/``model``/``stop`` in; ``state <json>`` out) is the Python
twin's (agent/twin/serve.py), which agent/twin/volume.py speaks to both.

Timing is checked from below only (a reply never leaves before its time, less the coalescing
share of its own latency): a busy machine makes replies late, never early.
"""

from __future__ import annotations

import errno
import fcntl
import json
import select
import signal
import socket
import struct
import subprocess
import termios
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from native_twin import native_twin

from storagebench.agent.twin.model import replay

IN_HEADER = struct.Struct("<IIQQIIIHH")
OUT_HEADER = struct.Struct("<IiQ")
INIT_IN = struct.Struct("<IIIII44x")
INIT_OUT_HEAD = struct.Struct("<IIIIHHIIH")
ATTR = struct.Struct("<QQQQQQIIIIIIIIII")
ENTRY_OUT = struct.Struct("<QQQQII")
ATTR_OUT = struct.Struct("<QII")
OPEN_OUT = struct.Struct("<QIi")
READ_IN = struct.Struct("<QQIIQII")
WRITE_IN = struct.Struct("<QQIIQII")
WRITE_OUT = struct.Struct("<II")
STATFS_HEAD = struct.Struct("<QQQQQIII")

LOOKUP, FORGET, GETATTR, OPEN, READ, WRITE, STATFS, INIT, DESTROY = 1, 2, 3, 14, 15, 16, 17, 26, 38
SETXATTR = 21
FUSE_ASYNC_READ, FUSE_ASYNC_DIO, FUSE_MAX_PAGES = 1 << 0, 1 << 15, 1 << 22
FOPEN_DIRECT_IO = 1 << 0
ROOT, FILE = 1, 2
MIB = 1 << 20
CAPACITY = 64 * MIB
COALESCE_SHARE = 0.02  # native/twin/src/server.rs: a reply may leave this share of its latency early
FAST = {"limits": {"iops": 100_000, "mibps": 10_000}, "latency": {"modes": [{"p50_ms": 0.05, "p99_ms": 0.1}]}}


class Kernel:
    """The test's end of the socket pair, and the twin's stdin/stdout."""

    def __init__(self, process: subprocess.Popen[bytes], sock: socket.socket) -> None:
        self.process = process
        self.sock = sock
        self.unique = 0
        self.lines: list[str] = []
        self._buffer = b""

    def send(self, opcode: int, body: bytes = b"", node: int = ROOT) -> int:
        self.unique += 2
        header = IN_HEADER.pack(IN_HEADER.size + len(body), opcode, self.unique, node, 0, 0, 1, 0, 0)
        self.sock.send(header + body)
        return self.unique

    def reply(self, timeout_s: float = 10.0) -> tuple[int, int, bytes]:
        """(error, unique, payload) of the next reply; its length field is checked."""
        ready, _, _ = select.select([self.sock], [], [], timeout_s)
        assert ready, f"no reply within {timeout_s} s"
        message = self.sock.recv(2 * MIB)
        length, error, unique = OUT_HEADER.unpack_from(message)
        assert length == len(message)
        return error, unique, message[OUT_HEADER.size :]

    def read_by_twin(self, timeout_s: float = 10.0) -> None:
        """Until the twin has read every request sent (the socket's send queue, SIOCOUTQ, is empty)."""
        deadline = time.monotonic() + timeout_s
        while True:
            queued = struct.unpack("i", fcntl.ioctl(self.sock, termios.TIOCOUTQ, b"\0" * 4))[0]
            if queued == 0:
                return
            assert time.monotonic() < deadline, f"{queued} bytes of requests unread after {timeout_s} s"
            time.sleep(0.001)

    def exchange(self, opcode: int, body: bytes = b"", node: int = ROOT) -> tuple[int, bytes]:
        unique = self.send(opcode, body, node)
        error, echoed, payload = self.reply()
        assert echoed == unique
        return error, payload

    def command(self, line: str) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(line.encode() + b"\n")
        self.process.stdin.flush()

    def line(self, timeout_s: float = 10.0) -> str:
        assert self.process.stdout is not None
        fd = self.process.stdout.fileno()
        deadline = time.monotonic() + timeout_s
        while b"\n" not in self._buffer:
            ready, _, _ = select.select([fd], [], [], max(0.0, deadline - time.monotonic()))
            assert ready, f"no line from the twin within {timeout_s} s"
            chunk = self.process.stdout.read1(65536)  # type: ignore[attr-defined]
            if not chunk:
                break
            self._buffer += chunk
        line, _, self._buffer = self._buffer.partition(b"\n")
        return line.decode()

    def stop(self) -> dict[str, Any]:
        self.command("stop")
        line = self.line()
        assert line.startswith("state "), line
        assert self.process.wait(timeout=10) == 0
        state: dict[str, Any] = json.loads(line[len("state ") :])
        return state


def start(tmp_path: Path, spec: dict[str, Any], *extra: str, capacity: int = CAPACITY) -> Kernel:
    backing = tmp_path / "volume.img"
    with backing.open("wb") as handle:
        handle.truncate(capacity)
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    process = subprocess.Popen(
        [
            str(native_twin()),
            "--backing",
            str(backing),
            "--fuse-fd",
            str(theirs.fileno()),
            "--capacity",
            str(capacity),
            "--spec",
            json.dumps(spec),
            "--seed",
            "7",
            "--no-realtime",  # a test process needs no real-time priority
            *extra,
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        pass_fds=[theirs.fileno()],
    )
    theirs.close()
    kernel = Kernel(process, ours)
    assert kernel.line() == "ready"
    return kernel


@pytest.fixture
def kernel(tmp_path: Path) -> Iterator[Kernel]:
    made = start(tmp_path, FAST)
    yield made
    if made.process.poll() is None:
        made.process.kill()
        made.process.wait(timeout=10)
    made.sock.close()


def read_body(offset: int, size: int) -> bytes:
    return READ_IN.pack(0, offset, size, 0, 0, 0, 0)


def write_body(offset: int, data: bytes) -> bytes:
    return WRITE_IN.pack(0, offset, len(data), 0, 0, 0, 0) + data


# ---------------------------------------------------------------- the mount's conversation


def test_init_negotiates_asynchronous_direct_io_and_1_mib_requests(kernel: Kernel) -> None:
    flags = FUSE_ASYNC_READ | FUSE_ASYNC_DIO | FUSE_MAX_PAGES | (1 << 3)
    error, payload = kernel.exchange(INIT, INIT_IN.pack(7, 41, 128 * 1024, flags, 0))
    assert error == 0
    assert len(payload) == 64
    head = INIT_OUT_HEAD.unpack_from(payload)
    major, minor, readahead, granted, background, congestion, max_write, _, max_pages = head
    assert (major, minor, readahead) == (7, 38, 128 * 1024)
    assert granted == FUSE_ASYNC_READ | FUSE_ASYNC_DIO | FUSE_MAX_PAGES  # never more than offered
    assert (max_write, max_pages) == (MIB, 256)
    assert background >= 64 and congestion < background  # a queue-depth 64 sweep waits in the model


def test_init_refuses_another_major_version(kernel: Kernel) -> None:
    error, _ = kernel.exchange(INIT, INIT_IN.pack(6, 0, 0, 0, 0))
    assert error == -errno.EPROTO


def test_lookup_getattr_open_and_statfs_describe_one_file_of_the_capacity(kernel: Kernel) -> None:
    error, payload = kernel.exchange(LOOKUP, b"volume\0")
    assert error == 0
    node = ENTRY_OUT.unpack_from(payload)[0]
    attr = ATTR.unpack_from(payload, ENTRY_OUT.size)
    assert (node, attr[0], attr[1]) == (FILE, FILE, CAPACITY)
    assert attr[9] & 0o170000 == 0o100000  # a regular file
    assert kernel.exchange(LOOKUP, b"other\0")[0] == -errno.ENOENT
    error, payload = kernel.exchange(GETATTR, b"\0" * 16, node=ROOT)
    assert error == 0 and ATTR.unpack_from(payload, ATTR_OUT.size)[9] & 0o170000 == 0o040000
    error, payload = kernel.exchange(OPEN, b"\0" * 8, node=FILE)
    assert error == 0 and OPEN_OUT.unpack(payload)[1] & FOPEN_DIRECT_IO
    error, payload = kernel.exchange(STATFS)
    blocks, _, _, _, _, block_size, _, _ = STATFS_HEAD.unpack_from(payload)
    assert (error, blocks * block_size) == (0, CAPACITY)


def test_an_unknown_opcode_is_not_supported_and_forget_gets_no_reply(kernel: Kernel) -> None:
    kernel.send(FORGET, struct.pack("<Q", 1), node=FILE)
    error, _ = kernel.exchange(SETXATTR, b"x\0")  # the next reply is this one: FORGET had none
    assert error == -errno.ENOSYS


def test_destroy_is_answered_and_the_twin_reports_its_state_and_exits(kernel: Kernel) -> None:
    assert kernel.exchange(DESTROY) == (0, b"")
    line = kernel.line()
    assert line.startswith("state ")
    assert kernel.process.wait(timeout=10) == 0


# ---------------------------------------------------------------- data


def test_written_data_reads_back_and_what_was_never_written_reads_as_zeros(kernel: Kernel) -> None:
    block = bytes(range(256)) * 16
    assert kernel.exchange(WRITE, write_body(8 * MIB + 512, block), node=FILE) == (0, WRITE_OUT.pack(4096, 0))
    error, payload = kernel.exchange(READ, read_body(8 * MIB, 8192), node=FILE)
    assert error == 0
    assert payload == b"\0" * 512 + block + b"\0" * (8192 - 512 - 4096)
    assert kernel.exchange(READ, read_body(32 * MIB, 4096), node=FILE) == (0, b"\0" * 4096)


def test_a_large_write_arrives_whole_and_reads_back(kernel: Kernel) -> None:
    """128 KiB: what a socket pair carries in one message unprivileged (fio sends 1 MiB through
    the real device in tests/integration/agent/test_twin_volume.py)."""
    data = bytes((i * 7) % 251 for i in range(128 * 1024))
    assert kernel.exchange(WRITE, write_body(3 * MIB + 4096, data), node=FILE)[0] == 0
    assert kernel.exchange(READ, read_body(3 * MIB + 4096, len(data)), node=FILE) == (0, data)


def test_on_a_socket_read_replies_are_copied_and_the_state_says_why(kernel: Kernel) -> None:
    """splice(2) into a socket sends each pipe buffer as a message of its own, a reply in pieces:
    the twin splices only into /dev/fuse (tests/integration/agent/test_twin_data_path.py)."""
    data = bytes(range(256)) * 32
    assert kernel.exchange(WRITE, write_body(MIB, data), node=FILE)[0] == 0
    assert kernel.exchange(READ, read_body(MIB, len(data)), node=FILE) == (0, data)
    assert kernel.exchange(READ, read_body(2 * MIB, 4096), node=FILE) == (0, b"\0" * 4096)
    state = kernel.stop()
    assert state["data_path"] == "copy"
    detail = state["data_path_detail"]
    assert detail["copy_reason"] == "the FUSE descriptor is not /dev/fuse (a socket in tests)"
    replies = (detail["read_replies_copied"], detail["read_replies_of_zeros"], detail["read_replies_spliced"])
    assert replies == (1, 1, 0)


@pytest.mark.parametrize(
    ("offset", "size"), [(CAPACITY - 4096, 8192), (CAPACITY, 4096), (0, 2 * MIB), (2**64 - 4096, 8192)]
)
def test_io_beyond_the_file_or_larger_than_a_request_is_invalid(
    kernel: Kernel, offset: int, size: int
) -> None:
    assert kernel.exchange(READ, read_body(offset, size), node=FILE)[0] == -errno.EINVAL


def test_a_write_shorter_than_it_says_is_invalid(kernel: Kernel) -> None:
    body = WRITE_IN.pack(0, 0, 4096, 0, 0, 0, 0) + b"x" * 100
    assert kernel.exchange(WRITE, body, node=FILE)[0] == -errno.EINVAL


def test_the_last_block_of_the_file_is_readable(kernel: Kernel) -> None:
    assert kernel.exchange(READ, read_body(CAPACITY - 4096, 4096), node=FILE) == (0, b"\0" * 4096)


# ---------------------------------------------------------------- the parent's commands and timing


def test_delay_answers_every_io_that_late_until_the_model_starts(kernel: Kernel) -> None:
    kernel.command("delay 0.5")  # clamped to 10 ms, as the Python twin does
    kernel.exchange(STATFS)  # the command is read before the next request
    sent = time.monotonic()
    kernel.exchange(READ, read_body(0, 4096), node=FILE)
    assert time.monotonic() - sent >= 0.01
    assert kernel.stop()["ios"] == 0  # not modelled: calibration is not part of a measurement


def test_a_bad_command_answers_an_error_line_and_changes_nothing(kernel: Kernel) -> None:
    kernel.command("overhead soon")
    assert kernel.line() == "error overhead 'soon': seconds expected"
    kernel.command("fly")
    assert kernel.line() == "error unknown command 'fly': overhead, delay, model, track or stop expected"
    state = kernel.stop()
    assert state["overhead_s"] == 0.0


def test_overhead_is_clamped_to_0_to_10_ms_and_reported(kernel: Kernel) -> None:
    kernel.command("overhead 5")
    state = kernel.stop()
    assert state["overhead_s"] == 0.01


def test_end_of_input_stops_the_twin_with_its_state(kernel: Kernel) -> None:
    assert kernel.process.stdin is not None
    kernel.process.stdin.close()
    assert kernel.line().startswith("state ")
    assert kernel.process.wait(timeout=10) == 0


def test_modelled_replies_never_leave_before_their_time(tmp_path: Path) -> None:
    """Six reads at once on a 100 IOPS volume with a 20 ms service time: the model (seed 7, the
    same in both implementations) says when each is due; every reply leaves no earlier, less the
    coalescing share of its own latency. Lateness is not judged: a busy machine causes it."""
    spec = {"limits": {"iops": 100, "mibps": 1000}, "latency": {"modes": [{"p50_ms": 20, "p99_ms": 20}]}}
    kernel = start(tmp_path, spec)
    try:
        kernel.command("model")
        kernel.exchange(STATFS)
        sent = time.monotonic()
        uniques = [kernel.send(READ, read_body(i * MIB, 4096), node=FILE) for i in range(6)]
        answered: dict[int, float] = {}
        for _ in uniques:
            error, unique, payload = kernel.reply()
            answered[unique] = time.monotonic() - sent
            assert (error, payload) == (0, b"\0" * 4096)
        # The twin's clock is the machine's uptime: its buckets start well behind it.
        model = replay(spec, 7, [[100.0, i * MIB, 4096, False] for i in range(6)])
        pairs = zip(model["starts"], model["services"])  # noqa: B905 - runs under Python 3.9
        due = [start + service - 100.0 for start, service in pairs]
        assert due == pytest.approx([0.02, 0.02, 0.02, 0.03, 0.04, 0.05])  # 2 slots of tolerance
        for unique, latency in zip(uniques, due):  # noqa: B905 - runs under Python 3.9
            assert answered[unique] >= latency * (1 - COALESCE_SHARE) - 1e-4, (answered, due)
        assert max(answered.values()) < 5.0  # not hung
        state = kernel.stop()
    finally:
        if kernel.process.poll() is None:
            kernel.process.kill()
    assert state["implementation"] == "native"
    assert state["ios"] == 6 and state["operations"] == 6
    assert state["reply_timing"]["replies"] == 6
    assert state["realtime"] is False and state["realtime_refused"] == "--no-realtime"
    assert state["cpu_s"] >= 0 and state["modelled_s"] > 0


def test_a_stall_of_the_twin_is_reported_and_forgiven(tmp_path: Path) -> None:
    """SIGSTOP for 0.3 s while replies are due (the machine stalling the twin): the late replies
    make one stall in the state, and the buckets are allowed to catch up on it."""
    spec = {"limits": {"iops": 1000, "mibps": 1000}, "latency": {"modes": [{"p50_ms": 20, "p99_ms": 20}]}}
    kernel = start(tmp_path, spec)
    try:
        kernel.command("model")
        kernel.exchange(STATFS)
        uniques = [kernel.send(READ, read_body(i * MIB, 4096), node=FILE) for i in range(4)]
        kernel.read_by_twin()  # admitted before it stops: due while it is stopped
        kernel.process.send_signal(signal.SIGSTOP)
        time.sleep(0.3)
        kernel.process.send_signal(signal.SIGCONT)
        assert sorted(kernel.reply()[1] for _ in uniques) == uniques
        state = kernel.stop()
    finally:
        if kernel.process.poll() is None:
            kernel.process.kill()
    (stall,) = state["reply_timing"]["stalls"]
    assert stall["late_ms"] >= 200
    assert state["reply_timing"]["stalled_replies"] == 4
    assert state["loop"]["stalls_forgiven_s"] == pytest.approx(stall["late_ms"] / 1000, rel=0.01)


def qd1_reads(kernel: Kernel, count: int, pause_s: float = 0.0) -> None:
    for i in range(count):
        kernel.exchange(READ, read_body(i * 4096, 4096), node=FILE)
        time.sleep(pause_s)


def calibrated_then_paused(kernel: Kernel, track: str) -> None:
    """100 QD1 reads turned around at once (the calibration), then the overhead at 0.1 ms, the
    model, tracking ``track`` (on or off), and 150 QD1 reads with 1 ms before each next request."""
    qd1_reads(kernel, 100)
    kernel.command("overhead 0.0001")
    kernel.command("model")
    kernel.command(f"track {track}")
    kernel.exchange(STATFS)
    qd1_reads(kernel, 150, pause_s=0.001)


def test_tracking_moves_the_path_taken_off_by_how_far_the_turnaround_moved(tmp_path: Path) -> None:
    """Calibration: QD1 reads answered at once, turned around by this test at once. Then, with
    tracking on, the test waits 1 ms before each next request: the turnaround grew by about 1 ms,
    which the twin takes as path up to its bound (0.5 ms above the calibrated 0.1 ms)."""
    kernel = start(tmp_path, FAST)
    try:
        calibrated_then_paused(kernel, "on")
        state = kernel.stop()
    finally:
        if kernel.process.poll() is None:
            kernel.process.kill()
    tracking = state["path_tracking"]
    assert tracking["calibrated_turnaround_us"] is not None and tracking["updates"] >= 1
    assert tracking["overhead_used_max_us"] == pytest.approx(100 + 500, abs=0.5)


def test_without_tracking_the_calibrated_path_is_kept(tmp_path: Path) -> None:
    kernel = start(tmp_path, FAST)
    try:
        calibrated_then_paused(kernel, "off")
        kernel.command("track maybe")
        assert kernel.line() == "error track 'maybe': on or off expected"
        state = kernel.stop()
    finally:
        if kernel.process.poll() is None:
            kernel.process.kill()
    assert state["path_tracking"]["updates"] == 0
    assert state["clamped_ios"] == 0 or state["overhead_s"] == 0.0001


def test_burst_events_are_reported_with_the_credits_and_ceilings(tmp_path: Path) -> None:
    limits = {
        "iops": 100,
        "mibps": 1000,
        "burst_iops": 100_000,
        "credit_capacity": 50,
        "credit_refill_per_s": 100,
    }
    kernel = start(tmp_path, {"limits": limits, "latency": FAST["latency"]})
    kernel.command("model")
    kernel.exchange(STATFS)
    for i in range(80):  # 50 credits: the burst ends on the 50th read
        kernel.exchange(READ, read_body(i * MIB, 4096), node=FILE)
    state = kernel.stop()
    (event, *_) = state["events"]
    assert event["event"] == "burst-exhausted"
    assert (event["credits"], event["ceiling_iops"], event["ceiling_mibps"]) == (0.0, 100.0, 1000.0)
    assert state["credits_left"] is not None


# ---------------------------------------------------------------- refusals


def run_refused(*argv: str) -> tuple[int, str]:
    done = subprocess.run(
        [str(native_twin()), *argv], capture_output=True, text=True, timeout=30, check=False
    )
    return done.returncode, done.stdout.strip()


def serve_args(backing: Path, spec: str) -> list[str]:
    return ["--backing", str(backing), "--fuse-fd", "0", "--capacity", "4096", "--spec", spec]


def test_a_bad_spec_is_answered_with_the_field_before_anything_is_served(tmp_path: Path) -> None:
    backing = tmp_path / "v.img"
    backing.write_bytes(b"")
    spec = json.dumps({"limits": {"iops": 0, "mibps": 1}, "latency": FAST["latency"]})
    code, out = run_refused(*serve_args(backing, spec))
    assert (code, out) == (2, "error spec: limits.iops: 0, a positive number expected")
    code, out = run_refused(*serve_args(backing, "{"))
    assert code == 2 and out.startswith("error spec: not JSON")


def test_a_missing_backing_file_is_answered_with_its_path(tmp_path: Path) -> None:
    missing = tmp_path / "gone.img"
    spec = json.dumps(FAST)
    code, out = run_refused(*serve_args(missing, spec))
    assert code == 3
    assert out.startswith(f"error {missing}: No such file or directory")


@pytest.mark.parametrize(
    ("argv", "named"),
    [
        ([], "--backing, --capacity and --spec are required"),
        (["--capacity", "lots"], '--capacity: "lots", a size in bytes expected'),
        (["--backing", "x", "--capacity", "1", "--spec", "{}"], "one of --mountpoint and --fuse-fd expected"),
        (["--colour", "red"], 'unknown argument "--colour"'),
        (["--seed"], "--seed: a value expected"),
    ],
)
def test_bad_arguments_are_named(tmp_path: Path, argv: list[str], named: str) -> None:
    code, out = run_refused(*argv)
    assert code == 2
    assert out.startswith("error arguments: ") and named in out

"""The local instances' fence (``storagebench_local.fence``): root's sockets reach the range, no one else's.

Each test listens as root on an address of a range of its own, then connects from a child that
dropped to ``nobody``: refused inside the fence, accepted without it (so the check can fail).
"""

from __future__ import annotations

import os
import random
import socket
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from storagebench_local.fence import FenceError, fence_script, fence_tables, fence_unavailable, loopback_fence

pytestmark = [pytest.mark.root]

NOBODY = 65534
REFUSED = 3


@pytest.fixture(autouse=True)
def _nft() -> None:
    reason = fence_unavailable()
    if reason is not None:
        pytest.skip(reason)


def _range() -> tuple[str, str]:
    """A /24 of 127/8 no session uses (sessions fence 127.42.1.0/24), and an address in it."""
    net = f"127.{random.randint(100, 250)}.{random.randint(1, 250)}"
    return f"{net}.0/24", f"{net}.9"


@contextmanager
def _listener(ip: str) -> Iterator[int]:
    server = socket.create_server((ip, 0))
    try:
        yield server.getsockname()[1]
    finally:
        server.close()


def _connects_as(uid: int, ip: str, port: int) -> bool:
    """Whether a process of ``uid`` can connect (a forked child: nobody cannot run the venv's python)."""
    pid = os.fork()
    if pid == 0:  # the child: never returns into pytest
        code = 0
        try:
            if uid != os.geteuid():
                os.setgid(uid)
                os.setuid(uid)
            socket.create_connection((ip, port), timeout=5).close()
        except ConnectionRefusedError:
            code = REFUSED
        except BaseException:
            code = 1
        os._exit(code)
    _, status = os.waitpid(pid, 0)
    code = os.waitstatus_to_exitcode(status)
    assert code in (0, REFUSED), f"the probe as uid {uid} failed with {code}"
    return code == 0


def test_inside_the_fence_only_root_connects_and_the_table_goes_with_it() -> None:
    cidr, ip = _range()
    with _listener(ip) as port:
        assert _connects_as(NOBODY, ip, port)  # open before: what the fence is for
        with loopback_fence(cidr) as table:
            assert table in fence_tables()
            assert not _connects_as(NOBODY, ip, port)
            assert _connects_as(0, ip, port)
        assert table not in fence_tables()
        assert _connects_as(NOBODY, ip, port)


def test_two_fences_side_by_side_hold_their_own_tables() -> None:
    cidr, ip = _range()
    with _listener(ip) as port, loopback_fence(cidr) as first:
        with loopback_fence(cidr) as second:
            assert first != second
        assert first in fence_tables() and second not in fence_tables()
        assert not _connects_as(NOBODY, ip, port)


def test_a_dead_sessions_table_is_removed_by_the_next_fence() -> None:
    cidr, _ = _range()
    stale = "storagebench_fence_4194300_1"  # above pid_max's default: no such process
    subprocess.run(["nft", "-f", "-"], input=fence_script(stale, cidr), text=True, check=True)
    try:
        assert stale in fence_tables()
        with loopback_fence(cidr):
            assert stale not in fence_tables()
    finally:
        if stale in fence_tables():
            subprocess.run(["nft", "delete", "table", "ip", stale], check=True)


@pytest.mark.parametrize(
    ("cidr", "message"),
    [("10.42.1.0/24", "local instances live in 127.0.0.0/8"), ("127.42.1.0/33", "127.42.1.0/33")],
)
def test_a_range_outside_loopback_or_malformed_is_refused_before_nft(cidr: str, message: str) -> None:
    with pytest.raises(ValueError, match=message.replace(".", r"\.")), loopback_fence(cidr):
        pass


def test_without_nft_the_fence_refuses_with_the_reason(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", "/nonexistent")
    with pytest.raises(FenceError, match="nft is missing"), loopback_fence("127.42.1.0/24"):
        pass

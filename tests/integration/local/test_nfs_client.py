"""The local File Gateway's NFS path without the workflow: nfs-ganesha (``nfs_server``) exporting a
directory, the user-space client (``native/nfs-client``, built by make setup) mounting it as
mount(8) runs mount.nfs. Bytes written through the mount appear in the exported directory and
bytes put there are read back through it (checksums); options are honoured or refused by name;
``umount`` ends the mount and its daemon. Each test runs on an address of its own in 127/8."""

from __future__ import annotations

import hashlib
import os
import random
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from storagebench_local.nfs_server import NFS_PORT, NfsServer, unavailable
from storagebench_local.session import GANESHA_PRELOAD, NFS_CLIENT

pytestmark = [pytest.mark.root]
MIB = 1 << 20


@pytest.fixture
def server(tmp_path: Path) -> Iterator[NfsServer]:
    reason = unavailable(GANESHA_PRELOAD) or (
        None if NFS_CLIENT.is_file() else f"{NFS_CLIENT} missing (make setup)"
    )
    if reason is not None:
        pytest.skip(reason)
    address = f"127.{random.randint(100, 250)}.{random.randint(1, 250)}.{random.randint(2, 250)}"
    nfs = NfsServer(address, tmp_path / "export", "/sb-test", tmp_path / "server", GANESHA_PRELOAD)
    nfs.start()
    try:
        yield nfs
    finally:
        nfs.stop()
    assert not nfs.running


def _mount(server: NfsServer, mountpoint: Path, options: str) -> subprocess.CompletedProcess[str]:
    mountpoint.mkdir(exist_ok=True)
    return subprocess.run(
        [str(NFS_CLIENT), f"{server.address}:{server.pseudo}", str(mountpoint), "-o", options],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def _mounted(mountpoint: Path) -> str | None:
    """The mount's line of /proc/self/mounts, None when not mounted."""
    for line in Path("/proc/self/mounts").read_text().splitlines():
        if line.split()[1] == str(mountpoint):
            return line
    return None


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_bytes_cross_the_nfs_protocol_both_ways(server: NfsServer, tmp_path: Path) -> None:
    mnt = tmp_path / "mnt"
    done = _mount(server, mnt, "nolock,hard,rsize=65536,wsize=65536,timeo=600,retrans=2,noatime")
    assert done.returncode == 0, done.stderr
    try:
        line = _mounted(mnt)
        assert line is not None and line.split()[:3] == [f"{server.address}:/sb-test", str(mnt), "fuse.nfs"]
        payload = os.urandom(8 * MIB + 12_345)  # not a multiple of rsize/wsize: the last call is short
        (mnt / "written.bin").write_bytes(payload)
        os.sync()
        exported = server.export_dir / "written.bin"
        assert exported.stat().st_size == len(payload)
        assert _sha(exported) == hashlib.sha256(payload).hexdigest()
        (mnt / "dir").mkdir()
        (server.export_dir / "dir" / "served.bin").write_bytes(payload[::-1])
        assert _sha(mnt / "dir" / "served.bin") == hashlib.sha256(payload[::-1]).hexdigest()
        assert sorted(p.name for p in mnt.iterdir()) == ["dir", "written.bin"]
        (mnt / "written.bin").unlink()
        assert not exported.exists()
    finally:
        umount = subprocess.run(["umount", str(mnt)], capture_output=True, text=True, check=False)
    assert umount.returncode == 0, umount.stderr
    assert _mounted(mnt) is None


def test_the_client_daemon_exits_with_umount(server: NfsServer, tmp_path: Path) -> None:
    mnt = tmp_path / "mnt"
    assert _mount(server, mnt, "nolock").returncode == 0
    daemons = subprocess.run(
        ["pgrep", "-f", f"{server.address}:/sb-test"], check=False, capture_output=True, text=True
    ).stdout.split()
    assert len(daemons) == 1
    subprocess.run(["umount", str(mnt)], check=True)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and Path(f"/proc/{daemons[0]}/cmdline").exists():
        if Path(f"/proc/{daemons[0]}/stat").read_text().split()[2] == "Z":
            break  # exited, not reaped by its (gone) parent yet
        time.sleep(0.1)
    alive = Path(f"/proc/{daemons[0]}/stat")
    assert not alive.exists() or alive.read_text().split()[2] == "Z"


@pytest.mark.parametrize(
    ("options", "named"),
    [
        ("nolock,fsc=cache", "'fsc=cache'"),
        ("nolock,bogus", "'bogus'"),
        ("nfsvers=4.1", "nfsvers=4.1"),
        ("proto=udp", "proto=udp"),
        ("lock", "option lock"),
        ("rsize=abc", "rsize=abc"),
    ],
)
def test_options_it_cannot_honour_are_refused_by_name(
    server: NfsServer, tmp_path: Path, options: str, named: str
) -> None:
    mnt = tmp_path / "mnt"
    done = _mount(server, mnt, options)
    mounted = _mounted(mnt)
    if mounted is not None:  # a client that took the option: leave nothing mounted behind
        subprocess.run(["umount", str(mnt)], check=True)
    assert done.returncode != 0
    assert named in done.stderr, done.stderr
    assert mounted is None


def test_a_wrong_port_fails_the_mount(server: NfsServer, tmp_path: Path) -> None:
    """port= is honoured: the server's NFS port works, another does not."""
    mnt = tmp_path / "mnt"
    done = _mount(server, mnt, f"nolock,port={NFS_PORT + 1}")
    assert done.returncode == 32 and "mounting" in done.stderr, done.stderr
    assert _mounted(mnt) is None
    assert _mount(server, mnt, f"nolock,port={NFS_PORT}").returncode == 0
    subprocess.run(["umount", str(mnt)], check=True)

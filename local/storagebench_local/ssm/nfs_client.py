"""The local instance's NFS client: the user-space one (native/nfs-client) as its image's mount.nfs.

This machine's kernel has no NFS client, so ``mount -t nfs`` (the agent's, as on AWS) would fail in
a local instance. mount(8) runs ``/sbin/mount.nfs`` for type nfs: in the instance's own copy of its
image, and only there, that path is the stand-in, which mounts the export through FUSE and speaks
NFSv3 to the server (libnfs). The agent still installs nfs-common with apt, as on AWS: its
mount.nfs, mount.nfs4 and umount.nfs* are diverted first (``dpkg-divert --local --rename``), so the
package's files land beside them as ``*.distrib`` and the stand-in stays. Never on this machine's
own root: an instance on it (``image`` None) gets no NFS client and local mode refuses its NFS
targets (``adapters.local_plan``).
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

HELPERS = ("/sbin/mount.nfs", "/sbin/mount.nfs4", "/sbin/umount.nfs", "/sbin/umount.nfs4")
MARK = "/etc/storagebench-nfs-client"  # says which program the image's mount.nfs is


class NfsClientError(RuntimeError):
    """The stand-in NFS client cannot be installed in the instance's image."""


def install_nfs_client(image: Path, program: Path) -> None:
    """Divert nfs-common's helpers in ``image`` and put ``program`` at /sbin/mount.nfs (and
    mount.nfs4, which refuses: the client speaks NFSv3). Idempotent."""
    if not image.is_dir() or image == Path("/"):
        raise NfsClientError(f"{image}: the stand-in NFS client goes into an instance's own image root only")
    if not program.is_file():
        raise NfsClientError(f"{program} is missing (make setup builds it: make nfs-client)")
    for helper in HELPERS:
        done = subprocess.run(
            [
                "chroot",
                str(image),
                "dpkg-divert",
                "--local",
                "--rename",
                "--divert",
                f"{helper}.distrib",
                "--add",
                helper,
            ],
            capture_output=True,
            text=True,
            check=False,
        )
        if done.returncode != 0:
            raise NfsClientError(f"dpkg-divert of {helper} in {image} failed: {done.stderr.strip()}")
    sbin = image / "sbin"  # /sbin is /usr/sbin in a merged-/usr root: the same directory
    target = sbin / "mount.nfs"
    shutil.copy2(program, target)
    target.chmod(0o755)
    link = sbin / "mount.nfs4"
    if link.is_symlink() or link.exists():
        link.unlink()
    link.symlink_to("mount.nfs")
    (image / MARK.lstrip("/")).write_text(
        f"/sbin/mount.nfs is storagebench's user-space NFS client ({program.name})\n"
    )

"""A Linux image for local instances: a Debian 12 root built with debootstrap, cached, copied per instance.

Nothing on this machine runs Amazon Linux, Ubuntu or RHEL, but Debian's packages are reachable:
``debian_root`` builds a minimal Debian 12 (bookworm) root once (``--variant=minbase`` plus
python3: what a cloud image has and nothing a benchmark needs) under the cache directory and
marks it complete; every instance then runs on its own copy, so what one run installs (fio,
xfsprogs...) never reaches the next, and each run installs them again with apt, as a fresh
instance would. The document runs inside it through ``chroot`` with ``/dev``, ``/proc`` and
``/sys`` bound (loop devices, mounts, cgroup throttling) in the instance's mount namespace.
"""

from __future__ import annotations

import shutil
import subprocess
import time
from pathlib import Path

SUITE = "bookworm"
MIRROR = "http://deb.debian.org/debian"
COMPLETE = ".storagebench-complete"
BUILD_TIMEOUT_S = 1800


class ImageError(RuntimeError):
    """The image root cannot be built or copied."""


def debian_root(cache: Path, mirror: str = MIRROR) -> tuple[Path, float]:
    """The cached Debian 12 root (built if absent) and the seconds building it took (0 if cached)."""
    root = cache / f"debian-12-{SUITE}"
    if (root / COMPLETE).exists():
        return root, 0.0
    if shutil.which("debootstrap") is None:
        raise ImageError("debootstrap is not installed (make setup installs it: apt-get install debootstrap)")
    partial = cache / f"debian-12-{SUITE}.partial"
    shutil.rmtree(partial, ignore_errors=True)
    cache.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    done = subprocess.run(
        ["debootstrap", "--variant=minbase", "--include=python3", SUITE, str(partial), mirror],
        capture_output=True,
        text=True,
        timeout=BUILD_TIMEOUT_S,
        check=False,
    )
    if done.returncode != 0:
        tail = "\n".join((done.stdout + done.stderr).strip().splitlines()[-8:])
        raise ImageError(f"debootstrap {SUITE} failed (exit {done.returncode}):\n{tail}")
    (partial / COMPLETE).write_text(f"debootstrap --variant=minbase --include=python3 {SUITE} {mirror}\n")
    shutil.rmtree(root, ignore_errors=True)
    partial.rename(root)
    return root, time.monotonic() - started


def instance_copy(image: Path, directory: Path) -> Path:
    """The instance's own copy of the image (what it installs stays with it)."""
    target = directory / "image"
    if target.exists():
        return target
    partial = directory / "image.partial"
    shutil.rmtree(partial, ignore_errors=True)
    done = subprocess.run(
        ["cp", "-a", "--reflink=auto", str(image), str(partial)], capture_output=True, text=True, check=False
    )
    if done.returncode != 0:
        raise ImageError(f"copying {image} failed: {done.stderr.strip()}")
    partial.rename(target)
    return target

"""What a root-tier test needs of this machine, and the reason to skip when it is not there."""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterable

from storagebench_local.session import TOOLS


def missing_for_an_image(root_for: str, tools: Iterable[str], install: str) -> str | None:
    """The first thing an image test lacks, as a skip reason, or None: root (``root_for`` says what
    for), each of ``tools`` on PATH (``install`` says how make setup brings them) and the built
    metadata service."""
    if os.geteuid() != 0:
        return f"needs root: {root_for}"
    for tool in tools:
        if shutil.which(tool) is None:
            return f"{tool} is not installed ({install})"
    if not (TOOLS / "bin" / "ec2-metadata-mock").exists():
        return "ec2-metadata-mock missing (make setup)"
    return None


def fio_has_nbd() -> bool:
    """Whether fio is installed with its nbd engine (libnbd), which the vSAN stand-ins' I/O goes through."""
    if shutil.which("fio") is None:
        return False
    engines = subprocess.run(["fio", "--enghelp"], capture_output=True, text=True, check=False).stdout
    return "nbd" in engines.split()

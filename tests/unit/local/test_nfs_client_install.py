"""The stand-in NFS client goes into an instance's own image root, never this machine's."""

from __future__ import annotations

from pathlib import Path

import pytest

from storagebench_local.ssm.nfs_client import NfsClientError, install_nfs_client


def test_this_machines_root_never_gets_it(tmp_path: Path) -> None:
    program = tmp_path / "storagebench-mount-nfs"
    program.write_bytes(b"\x7fELF")
    with pytest.raises(NfsClientError, match="instance's own image root only"):
        install_nfs_client(Path("/"), program)


def test_a_missing_program_is_named(tmp_path: Path) -> None:
    with pytest.raises(NfsClientError, match=r"storagebench-mount-nfs is missing \(make setup builds it"):
        install_nfs_client(tmp_path, tmp_path / "storagebench-mount-nfs")

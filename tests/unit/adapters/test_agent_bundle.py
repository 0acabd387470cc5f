"""The agent zipapp is reproducible: same source, same bytes, same SHA-256, wherever it is built."""

from __future__ import annotations

import hashlib
import io
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import storagebench
from storagebench.adapters.agent_bundle import PACKAGE, build, build_bytes, bundle_key, current_bundle

ROOT = Path(__file__).resolve().parents[3]


def _copy_package(target: Path) -> Path:
    package = target / "storagebench"
    package.mkdir(parents=True)
    shutil.copy(PACKAGE / "__init__.py", package / "__init__.py")
    for shipped in ("agent", "protocol"):
        shutil.copytree(PACKAGE / shipped, package / shipped, ignore=shutil.ignore_patterns("__pycache__"))
    return package


def test_the_same_source_gives_the_same_bytes(tmp_path: Path) -> None:
    first = build_bytes()
    assert build_bytes() == first

    copy = _copy_package(tmp_path / "elsewhere")
    for index, path in enumerate(sorted(copy.rglob("*"))):  # other times, other mode, and build litter
        os.utime(path, (1_000_000 + index * 7919, 2_000_000_000 - index * 104_729))
    (copy / "agent" / "cli.py").chmod(0o600)
    (copy / "agent" / "__pycache__").mkdir()
    (copy / "agent" / "__pycache__" / "cli.cpython-311.pyc").write_bytes(b"\x00junk")
    (copy / "agent" / "stray.pyc").write_bytes(b"\x00junk")

    assert build_bytes(copy) == first
    assert hashlib.sha256(build_bytes(copy)).hexdigest() == current_bundle().sha256


def test_a_changed_source_gives_another_digest(tmp_path: Path) -> None:
    copy = _copy_package(tmp_path)
    with (copy / "agent" / "cli.py").open("a", encoding="utf-8") as handle:
        handle.write("\n# changed\n")
    assert hashlib.sha256(build_bytes(copy)).hexdigest() != current_bundle().sha256


def test_the_archive_holds_only_the_agent_with_fixed_metadata() -> None:
    data = build_bytes()
    assert data.startswith(b"#!/usr/bin/env python3\n")
    archive = zipfile.ZipFile(io.BytesIO(data))
    names = archive.namelist()
    assert names[0] == "__main__.py"
    assert names[1:] == sorted(names[1:])
    assert "storagebench/__init__.py" in names
    assert "storagebench/agent/cli.py" in names
    assert "storagebench/protocol/plan.py" in names  # the wire contract the agent imports
    assert all(
        n == "__main__.py"
        or n.startswith(("storagebench/agent/", "storagebench/protocol/", "storagebench/__init__.py"))
        for n in names
    )
    assert not any("__pycache__" in n or n.endswith(".pyc") for n in names)
    for info in archive.infolist():
        assert info.date_time == (1980, 1, 1, 0, 0, 0)
        assert info.external_attr >> 16 == 0o100644
        assert info.compress_type == zipfile.ZIP_STORED


def _run_zipapp(target: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """The zipapp run as an instance runs it: isolated (-I), no PYTHONPATH, only its own modules."""
    env = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}
    return subprocess.run(
        [sys.executable, "-I", str(target), *args],
        capture_output=True,
        text=True,
        check=False,
        cwd=target.parent,
        env=env,
        timeout=60,
    )


def test_the_zipapp_runs(tmp_path: Path) -> None:
    target = build(tmp_path / "agent.pyz")
    assert os.access(target, os.X_OK)
    result = _run_zipapp(target, "--help")
    assert result.returncode == 0, result.stderr
    assert "run" in result.stdout


def test_the_zipapp_checks_a_plan_with_only_its_own_modules(tmp_path: Path) -> None:
    """The plan's check (storagebench.protocol) comes from the archive: no PYTHONPATH, no project."""
    target = build(tmp_path / "agent.pyz")
    plan = tmp_path / "plan.json"
    plan.write_text('{"plan_version": 1, "run_id": "r-1", "config_id": "c-1", "targets": [], "steps": "x"}')
    result = _run_zipapp(target, "run", "--plan", str(plan), "--out", str(tmp_path / "out"))
    assert result.returncode == 2, result.stderr
    assert "steps" in result.stderr
    assert "ModuleNotFoundError" not in result.stderr


def test_bundle_key_names_version_and_digest() -> None:
    bundle = current_bundle()
    assert bundle.version == storagebench.__version__
    assert (
        bundle.key
        == bundle_key(bundle.version, bundle.sha256)
        == f"agent/{bundle.version}/{bundle.sha256}.pyz"
    )
    assert len(bundle.sha256) == 64
    assert hashlib.sha256(bundle.data).hexdigest() == bundle.sha256


def test_the_build_script_writes_the_same_bundle(tmp_path: Path) -> None:
    target = tmp_path / "dist" / "storagebench-agent.pyz"
    result = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "build_agent_zipapp.py"), str(target)],
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == str(target)
    assert target.read_bytes() == current_bundle().data
    assert current_bundle().sha256 in result.stderr

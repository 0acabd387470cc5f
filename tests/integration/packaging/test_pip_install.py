"""`pip install .` in a fresh virtualenv gives a working `storagebench` command.

What a user does, from a copy of the sources (the build writes build/ and *.egg-info next to
them, which must not land in the work tree other runs read): plain pip, the latest versions
pyproject.toml allows (not the lock: this is what `pip install` users get). Marked slow (a wheel
build and about ten packages, ~30-60 s with the wheels cached); `make test` runs every tier, this
with them. Needs the package index, as `make setup` does.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[3]
SOURCES = ("pyproject.toml", "README.md", "layers/storagebench/storagebench", "local/storagebench_local")


def _copy_sources(to: Path) -> Path:
    for name in SOURCES:
        source, target = REPO / name, to / name
        if source.is_dir():
            shutil.copytree(source, target, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        else:
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target)
    return to


def _run(*command: str | Path, cwd: Path = REPO) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(c) for c in command], cwd=cwd, capture_output=True, text=True, timeout=900, check=False
    )


@pytest.mark.slow
def test_pip_install_gives_a_working_storagebench_command(tmp_path: Path) -> None:
    sources = _copy_sources(tmp_path / "src")
    venv = tmp_path / "venv"
    # The interpreter's own venv (python -m venv), not uv's: what the README tells a user to run.
    created = _run(sys.executable, "-m", "venv", venv)
    assert created.returncode == 0, created.stderr
    installed = _run(venv / "bin" / "pip", "install", "-q", sources)
    assert installed.returncode == 0, installed.stderr[-3000:]
    command = venv / "bin" / "storagebench"

    usage = _run(command, "--help")
    assert usage.returncode == 0, usage.stderr
    assert "validate" in usage.stdout and "run" in usage.stdout

    # Package data shipped: the catalog, the workload library, the price snapshot
    valid = _run(command, "validate", "--suite", "events/local-demo.json", "--json")
    assert valid.returncode == 0, valid.stderr
    assert json.loads(valid.stdout)["valid"] is True
    mistakes = _run(command, "validate", "--suite", "tests/data/requests/eleven-mistakes.json", "--json")
    assert mistakes.returncode == 2 and len(json.loads(mistakes.stdout)["errors"]) == 11
    priced = _run(command, "cost", "--suite", "events/local-demo.json", "--json")
    assert priced.returncode == 0, priced.stderr
    assert json.loads(priced.stdout)["complete"] is True

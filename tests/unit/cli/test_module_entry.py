"""The command line runs as a module too (``python -m storagebench.cli`` or ``.cli.main``), not only
through the installed ``storagebench`` script: both printed nothing and exited 0 before."""

from __future__ import annotations

import subprocess
import sys

import pytest


@pytest.mark.parametrize("module", ["storagebench.cli", "storagebench.cli.main"])
def test_the_module_runs_the_command_line(module: str) -> None:
    done = subprocess.run(
        [sys.executable, "-m", module, "--help"], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr
    assert "Usage:" in done.stdout and "validate" in done.stdout

"""The compiled twin for tests: its path, or a failure saying how to build it (a skip without cargo)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

NATIVE_TWIN = Path(__file__).resolve().parents[4] / ".tools" / "bin" / "storagebench-twin"


def native_twin() -> Path:
    if NATIVE_TWIN.is_file():
        return NATIVE_TWIN
    if shutil.which("cargo") is None:
        pytest.skip("no cargo on this machine: the compiled twin cannot be built (make setup says so)")
    pytest.fail(f"{NATIVE_TWIN} is missing: make setup (or make twin) builds it")
    raise AssertionError  # pytest.fail raises

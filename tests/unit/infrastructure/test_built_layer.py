"""The Lambda layer ``sam build`` makes holds the domain package and nothing of local mode.

``make test`` runs ``sam build`` before the tests, so in CI the build is always there; a plain
``pytest tests/unit`` without it skips (outside CI) rather than guessing.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[3]
BUILT = REPO / ".aws-sam" / "build" / "DomainLayer" / "python"
SOURCE = REPO / "layers" / "storagebench" / "storagebench"


@pytest.fixture(scope="module")
def built() -> Path:
    if not (BUILT / "storagebench").is_dir():
        if os.environ.get("CI"):
            pytest.fail(f"{BUILT} is missing: make test runs `make sam-build` before the tests")
        pytest.skip("no sam build here (run `make sam-build`)")
    return BUILT


def _modules(root: Path) -> set[str]:
    return {str(p.relative_to(root)) for p in root.rglob("*.py")}


def test_no_local_mode_module_is_in_the_layer(built: Path) -> None:
    assert not (built / "storagebench_local").exists()
    local_only = {"faults", "session", "dynamodb_local", "lambda_endpoint", "moto_server"}
    leaked = sorted(m for m in _modules(built / "storagebench") if Path(m).stem in local_only)
    assert leaked == []


def test_the_layer_ships_nothing_but_the_domain_package(built: Path) -> None:
    # A subset, not equality: a module added since the last `make sam-build` is not a leak.
    assert _modules(built / "storagebench") - _modules(SOURCE) == set()


def test_no_test_or_dev_tool_ships(built: Path) -> None:
    shipped = {p.name for p in built.iterdir()}
    dev_only = {"tests", "moto", "pytest", "_pytest", "mypy", "ruff", "importlinter", "typer", "rich"}
    assert not shipped & dev_only


def test_the_data_the_package_reads_ships_with_it(built: Path) -> None:
    data = {"catalog/catalog.json", "prices/snapshot.json", "workloads/fio_profiles.toml"}
    assert {name for name in data if (built / "storagebench" / name).is_file()} == data

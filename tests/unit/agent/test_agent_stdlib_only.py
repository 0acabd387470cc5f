"""The agent ships as a stdlib-only zipapp for Python 3.9 with the wire contract it shares with the
domain (storagebench.protocol): check every module's imports and syntax."""

from __future__ import annotations

import ast
import importlib.util
import sys
import sysconfig
from pathlib import Path

import pytest

import storagebench.agent

AGENT = Path(storagebench.agent.__file__).resolve().parent
PACKAGE = AGENT.parent
MODULES = sorted(p.relative_to(AGENT).as_posix() for p in AGENT.rglob("*.py"))
PROTOCOL = sorted(p.relative_to(PACKAGE).as_posix() for p in (PACKAGE / "protocol").rglob("*.py"))


def is_stdlib(name: str) -> bool:
    names = getattr(sys, "stdlib_module_names", None)  # Python 3.10+
    if names is not None:
        return name in names
    spec = importlib.util.find_spec(name)
    if spec is None:
        return False
    if spec.origin in (None, "built-in", "frozen"):
        return True
    return spec.origin.startswith(sysconfig.get_paths()["stdlib"]) and "site-packages" not in spec.origin


def imported(tree: ast.AST) -> list[str]:
    names = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            assert node.level == 0, "relative imports break the zipapp layout"
            names.append(node.module or "")
            if node.module == "storagebench":
                assert [alias.name for alias in node.names] == ["__version__"]
    return names


def test_the_module_list_is_complete() -> None:
    expected = {
        "__init__.py",
        "__main__.py",
        "cli.py",
        "cold_read.py",
        "devices.py",
        "emulate.py",
        "engines.py",
        "log.py",
        "packages.py",
        "prewarm.py",
        "proc.py",
        "runner.py",
        "sweep.py",
        "sysinfo.py",
        "targets.py",
        "task.py",
        "throttle.py",
        "aws/__init__.py",
        "aws/client.py",
        "aws/credentials.py",
        "aws/s3.py",
        "aws/sigv4.py",
        "aws/states.py",
    }
    assert expected <= set(MODULES)
    contract = {
        "protocol/__init__.py",
        "protocol/caveats.py",
        "protocol/fio_output.py",
        "protocol/manifest.py",
        "protocol/packages.py",
        "protocol/plan.py",
        "protocol/sample_layout.py",
    }
    assert contract <= set(PROTOCOL)


@pytest.mark.parametrize("name", MODULES)
def test_imports_only_the_standard_library(name: str) -> None:
    tree = ast.parse((AGENT / name).read_text(encoding="utf-8"))
    for module in imported(tree):
        top = module.split(".")[0]
        if module == "storagebench" or module.startswith(("storagebench.agent", "storagebench.protocol")):
            continue
        assert top != "storagebench", f"{name} imports {module}: the zipapp only has agent and protocol"
        assert is_stdlib(top), f"{name} imports {module}, which is not in the standard library"


@pytest.mark.parametrize("name", PROTOCOL)
def test_the_contract_imports_only_itself_and_the_standard_library(name: str) -> None:
    tree = ast.parse((PACKAGE / name).read_text(encoding="utf-8"))
    for module in imported(tree):
        if module.startswith("storagebench.protocol"):
            continue
        top = module.split(".")[0]
        assert top != "storagebench", f"{name} imports {module}: the contract imports none of ours"
        assert is_stdlib(top), f"{name} imports {module}, which is not in the standard library"


@pytest.mark.parametrize("name", MODULES + PROTOCOL)
def test_parses_as_python_39(name: str) -> None:
    source = (AGENT / name if name in MODULES else PACKAGE / name).read_text(encoding="utf-8")
    ast.parse(source, filename=name, feature_version=(3, 9))
    assert "match " not in [line.strip()[:6] for line in source.splitlines()]


def test_the_package_root_is_import_free() -> None:
    root = AGENT.parent / "__init__.py"
    assert imported(ast.parse(root.read_text(encoding="utf-8"))) == []

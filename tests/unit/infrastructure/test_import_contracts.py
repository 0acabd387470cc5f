"""The import arrows point one way: the contracts in pyproject.toml hold, and no module imports itself
back through others. A new package must take its place in the layers contract."""

from __future__ import annotations

import os
import subprocess
import sys
import tomllib
from pathlib import Path

import grimp

ROOT = Path(__file__).resolve().parents[3]
PYPROJECT = ROOT / "pyproject.toml"
PACKAGE = ROOT / "layers" / "storagebench" / "storagebench"
_LINT = (
    "import sys; from importlinter.cli import lint_imports; "
    "sys.exit(lint_imports(config_filename=sys.argv[1], no_cache=True))"
)


def _layered_packages() -> set[str]:
    contracts = tomllib.loads(PYPROJECT.read_text())["tool"]["importlinter"]["contracts"]
    layers = next(contract["layers"] for contract in contracts if contract["type"] == "layers")
    return {name.strip() for layer in layers for name in layer.replace(":", "|").split("|")}


def test_the_import_contracts_hold() -> None:
    # In a child process: import-linter configures logging, which would silence our loggers here.
    linted = subprocess.run(
        [sys.executable, "-c", _LINT, str(PYPROJECT)],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": f"{PACKAGE.parent}{os.pathsep}{ROOT / 'local'}"},
        capture_output=True,
        text=True,
        check=False,
    )
    assert linted.returncode == 0, linted.stdout + linted.stderr


def test_every_package_of_the_domain_has_a_layer() -> None:
    packages = {path.parent.name for path in PACKAGE.glob("*/__init__.py")}
    unlayered = packages - _layered_packages() - {"observability"}  # Powertools setup, used by handlers only
    assert not unlayered, f"add {sorted(unlayered)} to the layers contract in pyproject.toml"


def _cycles(graph: grimp.ImportGraph) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in sorted(graph.modules):
        if root in index:
            continue
        work = [(root, iter(sorted(graph.find_modules_directly_imported_by(root))))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.find_modules_directly_imported_by(child)))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_no_module_imports_itself_back() -> None:
    graph = grimp.build_graph("storagebench", "storagebench_local")
    assert _cycles(graph) == []


def test_the_cycle_finder_finds_a_cycle() -> None:
    graph = grimp.ImportGraph()
    for name in ("pkg", "pkg.a", "pkg.b", "pkg.c"):
        graph.add_module(name)
    graph.add_import(importer="pkg.a", imported="pkg.b")
    graph.add_import(importer="pkg.b", imported="pkg.c")
    graph.add_import(importer="pkg.c", imported="pkg.a")
    assert _cycles(graph) == [["pkg.a", "pkg.b", "pkg.c"]]

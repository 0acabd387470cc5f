"""Python files that are not importable by name, loaded by path: the scripts in ``scripts/``, each
function's ``app.py`` (they are all ``app``)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

REPO = Path(__file__).resolve().parents[2]


def load_module(name: str, path: Path) -> ModuleType:
    """The file at ``path`` executed afresh as module ``name``, registered in ``sys.modules`` (dataclasses
    and pickling look their module up there); a file that fails to run leaves nothing registered."""
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"{path}: not a Python file importlib can load")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[name]
        raise
    return module


def script(name: str) -> ModuleType:
    """``scripts/<name>.py`` as module ``name``."""
    return load_module(name, REPO / "scripts" / f"{name}.py")

"""Build the stdlib-only agent as a single zipapp (what the SSM document runs on instances).

It holds ``storagebench/__init__.py`` and ``storagebench/agent/`` only, so an instance needs
nothing but Python 3.9+; ``python3 storagebench-agent.pyz run --plan ... --out ...``.
"""

from __future__ import annotations

import shutil
import sys
import tempfile
import zipapp
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "layers" / "storagebench" / "storagebench"


def build(target: Path) -> Path:
    with tempfile.TemporaryDirectory() as staging:
        root = Path(staging) / "storagebench"
        shutil.copytree(PACKAGE / "agent", root / "agent", ignore=shutil.ignore_patterns("__pycache__"))
        shutil.copy(PACKAGE / "__init__.py", root / "__init__.py")
        target.parent.mkdir(parents=True, exist_ok=True)
        zipapp.create_archive(
            staging,
            target,
            interpreter="/usr/bin/env python3",
            main="storagebench.agent.cli:run_main",
            compressed=True,
        )
    return target


if __name__ == "__main__":
    print(build(Path(sys.argv[1] if len(sys.argv) > 1 else "dist/storagebench-agent.pyz")))

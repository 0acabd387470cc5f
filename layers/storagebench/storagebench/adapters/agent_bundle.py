"""The stdlib-only agent as one reproducible zipapp (what the SSM document runs on instances).

It holds ``storagebench/__init__.py``, ``storagebench/agent/`` and the wire contract the agent
imports, ``storagebench/protocol/``, only, so an instance needs nothing but Python 3.9+:
``python3 agent.pyz run --plan plan.json --out DIR``.

The archive is a pure function of the source: entries sorted, every timestamp 1980-01-01,
fixed permissions, no compression (zlib versions differ between machines; stored entries do
not), no ``__pycache__``. So the same source gives the same bytes and the same SHA-256 on a
laptop and in Lambda, and ``agent/<version>/<sha256>.pyz`` names exactly one build.
"""

from __future__ import annotations

import hashlib
import io
import zipfile
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import storagebench

PACKAGE = Path(storagebench.__file__).resolve().parent
INTERPRETER = "/usr/bin/env python3"
ENTRY_MODULE, ENTRY_FUNCTION = "storagebench.agent.cli", "run_main"
FIXED_TIME = (1980, 1, 1, 0, 0, 0)
FILE_MODE = 0o100644
SKIPPED_DIRECTORIES = frozenset({"__pycache__"})
SKIPPED_SUFFIXES = (".pyc", ".pyo")
SHIPPED_PACKAGES = ("agent", "protocol")  # the agent and the wire contract it shares with the domain

MAIN = f"# -*- coding: utf-8 -*-\nimport {ENTRY_MODULE}\n{ENTRY_MODULE}.{ENTRY_FUNCTION}()\n"


@dataclass(frozen=True)
class AgentBundle:
    version: str
    sha256: str
    data: bytes

    @property
    def key(self) -> str:
        return bundle_key(self.version, self.sha256)


def bundle_key(version: str, sha256: str) -> str:
    return f"agent/{version}/{sha256}.pyz"


def entries(package: Path = PACKAGE) -> list[tuple[str, Path]]:
    """(archive name, source file) for the agent, sorted by archive name."""
    found = [("storagebench/__init__.py", package / "__init__.py")]
    for shipped in SHIPPED_PACKAGES:
        for path in (package / shipped).rglob("*"):
            relative = path.relative_to(package.parent)
            skipped = SKIPPED_DIRECTORIES & set(relative.parts) or path.suffix in SKIPPED_SUFFIXES
            if path.is_file() and not skipped:
                found.append((relative.as_posix(), path))
    return sorted(found)


def _add(archive: zipfile.ZipFile, name: str, data: bytes) -> None:
    info = zipfile.ZipInfo(name, date_time=FIXED_TIME)
    info.compress_type = zipfile.ZIP_STORED
    info.external_attr = FILE_MODE << 16
    info.create_system = 3  # unix, whatever builds it
    archive.writestr(info, data)


def build_bytes(package: Path = PACKAGE) -> bytes:
    """The zipapp's bytes: a shebang line, then the archive (``__main__.py`` first)."""
    buffer = io.BytesIO()
    buffer.write(b"#!" + INTERPRETER.encode() + b"\n")
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_STORED) as archive:
        _add(archive, "__main__.py", MAIN.encode())
        for name, path in entries(package):
            _add(archive, name, path.read_bytes())
    return buffer.getvalue()


def build(target: Path, package: Path = PACKAGE) -> Path:
    """Write the zipapp to ``target`` (executable) and return it."""
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(build_bytes(package))
    target.chmod(0o755)
    return target


@lru_cache(maxsize=1)
def current_bundle() -> AgentBundle:
    """This package's agent, built once per process (a Lambda container builds it once)."""
    data = build_bytes()
    return AgentBundle(version=storagebench.__version__, sha256=hashlib.sha256(data).hexdigest(), data=data)

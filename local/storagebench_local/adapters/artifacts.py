"""Artifacts on this machine's disk (``.storagebench/artifacts``), kept across local runs."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any


class LocalArtifacts:
    def __init__(self, root: Path) -> None:
        self.root = root.resolve()

    def _path(self, key: str) -> Path:
        path = (self.root / key).resolve()
        if self.root not in path.parents and path != self.root:
            raise ValueError(f"artifact key {key!r} leaves the artifacts directory")
        return path

    def put_json(self, key: str, document: Any) -> str:
        return self.put_text(key, json.dumps(document, indent=2, sort_keys=True), "application/json")

    def put_text(self, key: str, text: str, content_type: str) -> str:
        """Written whole or not at all (a reader never sees half a file)."""
        path = self._path(key)
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        Path(tmp).replace(path)
        return str(path)

    def get_json(self, key: str) -> Any:
        try:
            return json.loads(self._path(key).read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise KeyError(key) from None

    def fetch(self, prefix: str) -> Path:
        return self._path(prefix)

    def uri(self, key: str) -> str:
        return str(self._path(key))

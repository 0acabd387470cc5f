"""Artifacts on this machine's disk (``.storagebench/artifacts``), kept across local runs."""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
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

    @contextmanager
    def fetched(self, prefix: str) -> Iterator[Path]:
        """The prefix's own directory: nothing was downloaded, so nothing is removed."""
        yield self._path(prefix)

    def uri(self, key: str) -> str:
        return str(self._path(key))


class MirroredArtifacts:
    """Artifacts in the local S3 bucket (where instances read plans and write output), mirrored
    to this machine's disk so they outlive the session (``storagebench report`` reads the disk).

    Writes go to both; reads prefer the bucket (the instance's latest upload) and fall back to
    the disk (a run of an earlier session); ``fetch`` downloads a prefix into its mirror.
    ``put_*`` return the disk path (what a person opens); ``uri`` is the bucket's address (what
    a machine reaches).
    """

    def __init__(self, bucket: Any, disk: LocalArtifacts) -> None:
        self.bucket = bucket  # storagebench.adapters.aws.s3.S3Artifacts
        self.disk = disk

    def put_json(self, key: str, document: Any) -> str:
        self.bucket.put_json(key, document)
        return self.disk.put_json(key, document)

    def put_text(self, key: str, text: str, content_type: str) -> str:
        self.bucket.put_text(key, text, content_type)
        return self.disk.put_text(key, text, content_type)

    def get_json(self, key: str) -> Any:
        try:
            return self.bucket.get_json(key)
        except KeyError:
            return self.disk.get_json(key)

    def fetch(self, prefix: str) -> Path:
        import shutil

        downloaded = self.bucket.fetch(prefix)
        mirror = self.disk.fetch(prefix)
        try:
            if any(downloaded.iterdir()):
                mirror.mkdir(parents=True, exist_ok=True)
                shutil.copytree(downloaded, mirror, dirs_exist_ok=True)
        finally:
            shutil.rmtree(downloaded, ignore_errors=True)
        return mirror

    @contextmanager
    def fetched(self, prefix: str) -> Iterator[Path]:
        """The prefix's mirror on disk, which outlives the session (``storagebench report``)."""
        yield self.fetch(prefix)

    def uri(self, key: str) -> str:
        return str(self.bucket.uri(key))

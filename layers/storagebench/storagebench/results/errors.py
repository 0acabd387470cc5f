"""Typed errors of the result parsers and the collector.

Every message names the file (or the source the caller gave) and what was wrong with it, so a
problem reported from a run hundreds of phases long points straight at the raw artifact.
"""

from __future__ import annotations

import errno
import os
from pathlib import PurePath


class ResultsError(Exception):
    """Base class of everything ``storagebench.results`` raises on bad input."""


class ParseError(ResultsError, ValueError):
    """A raw artifact (fio JSON, dd stderr, a time series log, ...) that cannot be parsed."""

    def __init__(self, path: str | PurePath | None, reason: str) -> None:
        self.path = str(path) if path is not None else None
        self.reason = reason
        super().__init__(f"{self.path}: {reason}" if self.path else reason)


class FioJobError(ParseError):
    """fio reported ``error != 0`` for a job: its numbers describe a failed run, not the storage."""

    def __init__(self, path: str | PurePath | None, job: str, group: int | None, error: int) -> None:
        self.job = job
        self.group = group
        self.error = error
        name = errno.errorcode.get(error)
        meaning = f"{name}: {os.strerror(error)}" if name else "unknown error code"
        where = f" (group {group})" if group is not None else ""
        super().__init__(path, f"fio job {job!r}{where} failed with error {error} ({meaning})")


class ManifestError(ResultsError, ValueError):
    """``manifest.json`` is missing or is not a manifest this collector reads."""

    def __init__(self, path: str | PurePath, reason: str) -> None:
        self.path = str(path)
        self.reason = reason
        super().__init__(f"{self.path}: {reason}")

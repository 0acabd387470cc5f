"""What every phase reader of :func:`storagebench.results.collect.collect` shares: the identity a
phase's records carry, the error that turns a phase into a problem line, and where a phase's
directory is.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path, PurePosixPath
from typing import Any, TypedDict

from storagebench.results.records import VariantValue

__all__ = ["Identity", "PhaseDirOutsideError", "PhaseError", "non_negative", "phase_dir"]


class Identity(TypedDict):
    config_id: str
    target_id: str
    workload: str
    profile: str
    variant: dict[str, VariantValue]
    repetition: int
    phase: str
    started_at: str | None
    labels: list[str]


class PhaseError(Exception):
    """A phase that yields no record; the message goes to Collection.problems."""


class PhaseDirOutsideError(PhaseError):
    """A phase directory that would leave the output directory (``..`` or elsewhere)."""


def phase_dir(root: Path, step_id: str, phase: Mapping[str, Any]) -> tuple[Path, PurePosixPath]:
    """The phase's directory, absolute and relative to the output directory.

    The agent records it relative; an absolute path (an older agent, or a directory since
    copied elsewhere, e.g. downloaded from S3) is made relative when it lies under the output
    directory and otherwise replaced by the documented layout ``steps/<step>/<phase>``.
    """
    default = PurePosixPath("steps", step_id, str(phase.get("name")))
    relative = PurePosixPath(str(phase.get("dir") or default))
    if relative.is_absolute():
        try:
            relative = PurePosixPath(Path(relative).resolve().relative_to(root.resolve()).as_posix())
        except ValueError:
            relative = default
    if ".." in relative.parts or ".." in default.parts:
        raise PhaseDirOutsideError(f"phase dir {str(relative)!r} is not inside the output directory")
    return root / relative, relative


def non_negative(timing: Mapping[str, Any] | None, key: str) -> float | None:
    """``key``'s value as a float; None when it is missing, not a number or negative (timings, sizes)."""
    value = timing.get(key) if timing is not None else None
    if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
        return None
    return float(value)

"""The export's one error: a format it does not write, a row it cannot, or a missing extra."""

from __future__ import annotations

__all__ = ["ExportError"]


class ExportError(ValueError):
    """Raised before anything is written where the input is at fault, with what is allowed."""

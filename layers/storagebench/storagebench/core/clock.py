"""Time as the workflow reads and writes it: a clock port, and one spelling of a UTC timestamp.

Every stored time is ISO 8601 in UTC with a ``Z`` and whole seconds (``2030-01-02T03:04:05Z``), so
times sort as text in DynamoDB keys and compare across runs.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Protocol


class Clock(Protocol):
    def now(self) -> datetime: ...


class SystemClock:
    def now(self) -> datetime:
        return datetime.now(UTC)


def iso(moment: datetime) -> str:
    """``2030-01-02T03:04:05Z``: UTC, whole seconds (a naive datetime is taken as local time)."""
    return moment.astimezone(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


def stamp(moment: datetime | None = None) -> str:
    """``20300102T030405Z``: UTC to the second, for names that must sort by time and hold no colon."""
    return (moment or datetime.now(UTC)).astimezone(UTC).strftime("%Y%m%dT%H%M%SZ")


def parse_iso(text: str) -> datetime:
    """An ISO 8601 timestamp, ``Z`` or offset (ValueError for anything else)."""
    return datetime.fromisoformat(text.replace("Z", "+00:00"))

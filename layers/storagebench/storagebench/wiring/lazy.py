"""One lazily built, replaceable object per Lambda container (services, janitor, API service).

Lambda reuses its process, so adapters and their clients are built once on first use; local mode and
tests put their own object in with ``configure`` (None goes back to the builder).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Generic, TypeVar

T = TypeVar("T")


class Lazy(Generic[T]):
    def __init__(self, build: Callable[[], T]) -> None:
        self._build = build
        self._value: T | None = None

    def configure(self, value: T | None) -> None:
        self._value = value

    def get(self) -> T:
        if self._value is None:
            self._value = self._build()
        return self._value

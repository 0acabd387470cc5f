"""What the command line reads from, replaced: the local stack's store and a deployed stack's API."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest


def serve_local_store(
    monkeypatch: pytest.MonkeyPatch, make: Callable[[], Any], *commands: ModuleType
) -> None:
    """The ``commands`` modules open ``make()`` where they would open the local stack's results store."""

    @contextmanager
    def local_store(root: Path) -> Iterator[Any]:
        yield make()

    for module in commands:
        monkeypatch.setattr(module, "local_store", local_store)


def serve_stack_api(monkeypatch: pytest.MonkeyPatch, make: Callable[[], Any]) -> None:
    """The command line calls ``make()`` where it would sign its calls to a deployed stack's API."""

    @contextmanager
    def stack_api(stack: str | None, api_url: str | None, region: str | None) -> Iterator[Any]:
        yield make()

    monkeypatch.setattr("storagebench.cli.stack_client.stack_api", stack_api)

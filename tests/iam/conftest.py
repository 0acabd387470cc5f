"""The evaluator is a requirement of this directory: skipped with the reason where it is missing,
failed with it under ``CI=true`` (``make setup`` installs it; nothing here is skipped silently)."""

from __future__ import annotations

import os

import pytest

from .evaluator import unavailable


def require_evaluator() -> None:
    missing = unavailable()
    if missing is None:
        return
    if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
        pytest.fail(f"the IAM evaluator cannot run: {missing}", pytrace=False)
    pytest.skip(f"the IAM evaluator cannot run: {missing}")


@pytest.fixture(scope="session")
def evaluator() -> None:
    require_evaluator()

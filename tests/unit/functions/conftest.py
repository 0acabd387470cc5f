"""Fixtures of the Lambda handler tests: Powertools off, fake services wired in, a context.

Every ``functions/<name>/app.py`` is loaded by file path under a unique module name (they are
all ``app``), once per session; the in-memory ports come from tests/support/workflow_fakes.py.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from tests.support import workflow_fakes as wf
from tests.support.modules import load_module

from storagebench.wiring import services as wiring

ROOT = Path(__file__).resolve().parents[3]
FUNCTIONS = ROOT / "functions"
POWERTOOLS_ENV = {
    "POWERTOOLS_TRACE_DISABLED": "true",
    "POWERTOOLS_METRICS_DISABLED": "true",
    "POWERTOOLS_SERVICE_NAME": "storagebench-test",
    "POWERTOOLS_LOG_LEVEL": "WARNING",
}


def _load_by_path(name: str, path: Path) -> ModuleType:
    """Once a session: the module already loaded under ``name``, or ``path`` loaded as it."""
    return sys.modules[name] if name in sys.modules else load_module(name, path)


@dataclass
class LambdaContext:
    """The attributes of Lambda's context object that Powertools reads."""

    function_name: str = "storagebench-test-function"
    function_version: str = "$LATEST"
    invoked_function_arn: str = "arn:aws:lambda:us-east-1:123456789012:function:storagebench-test-function"
    memory_limit_in_mb: int = 512
    aws_request_id: str = "5b7e4f5e-0000-4000-8000-000000000001"
    log_group_name: str = "/aws/lambda/storagebench-test-function"
    log_stream_name: str = "2026/11/21/[$LATEST]0123456789abcdef"

    def get_remaining_time_in_millis(self) -> int:
        return 120_000


@pytest.fixture
def powertools_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for key, value in POWERTOOLS_ENV.items():
        monkeypatch.setenv(key, value)


@pytest.fixture
def load_app(powertools_env: None) -> Callable[[str], ModuleType]:
    """``functions/<name>/app.py`` as module ``_sbtest_<name>_app`` (loaded with Powertools off)."""

    def load(name: str) -> ModuleType:
        return _load_by_path(f"_sbtest_{name}_app", FUNCTIONS / name / "app.py")

    return load


@pytest.fixture
def fakes(tmp_path: Path, powertools_env: None) -> Iterator[Any]:
    """Fake services wired in for the handlers; the environment's wiring comes back afterwards."""
    made = wf.make_fakes(tmp_path / "artifacts")
    wiring.configure(made.services)
    try:
        yield made
    finally:
        wiring.configure(None)


@pytest.fixture
def context() -> LambdaContext:
    return LambdaContext()

"""Fixtures of the workflow step tests: in-memory ports, a fixed clock, planned work items."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from tests.support import workflow_fakes as wf

from storagebench.core.state import ConfigState, PlanResult
from storagebench.workflow.steps.plan import plan_run

_DEFAULT: Any = object()


@pytest.fixture
def fakes(tmp_path: Path) -> Any:
    """Fresh fakes and the Services over them (artifacts fetch() under tmp_path)."""
    return wf.make_fakes(tmp_path / "artifacts")


@pytest.fixture
def plan(fakes: Any) -> Callable[..., PlanResult]:
    """Run plan_run on a request (the default three-config one unless given)."""

    def run(document: Any = _DEFAULT, run_id: str = "run-1") -> PlanResult:
        return plan_run(
            wf.request_doc() if document is _DEFAULT else document,
            run_id,
            "2026-11-21T17:00:00.000Z",
            fakes.services,
        )

    return run


@pytest.fixture
def state_of(plan: Callable[..., PlanResult]) -> Callable[..., ConfigState]:
    """The ConfigState a Map iteration starts from, for one config of a planned request."""

    def make(config_id: str, document: Any = _DEFAULT, run_id: str = "run-1") -> ConfigState:
        planned = plan(document, run_id)
        item = next(i for i in planned.items if i.config_id == config_id)
        return ConfigState.model_validate({"item": item.model_dump(mode="json")})

    return make

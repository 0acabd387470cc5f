"""Plan routes a run to one of the two Maps: up to 40 configs the work items travel in the state (the
inline Map), past that they go to S3 for the Distributed Map's ItemReader and the state keeps ids."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from tests.support import workflow_fakes as wf

from storagebench.core.errors import InvalidRequestError
from storagebench.core.guardrails import Guardrails
from storagebench.core.state import INLINE_MAP_MAX_CONFIGS, PlanResult, WorkItem
from storagebench.request.model import MAX_CONFIGS
from storagebench.workflow.artifact_keys import work_items_key
from storagebench.workflow.steps.plan import plan_run

LIMITS = Guardrails(max_configs_per_run=MAX_CONFIGS, max_concurrency=40, max_concurrent_instances=40)


def _document(count: int) -> dict[str, Any]:
    configs = [
        {
            "id": f"dir-{i:03d}",
            "instance_type": "c5.large",
            "targets": [{"kind": "local", "path": f"/mnt/{i}"}],
        }
        for i in range(count)
    ]
    return wf.request_doc(configs=configs, max_concurrency=40)  # 500 configs fit in timing.max_run_hours


def _plan(tmp_path: Path, count: int, run_id: str = "run-1") -> tuple[PlanResult, Any]:
    fakes = wf.make_fakes(tmp_path / "artifacts", LIMITS)
    planned = plan_run(_document(count), run_id, "2026-11-21T17:00:00.000Z", fakes.services)
    return planned, fakes


def test_up_to_forty_configs_travel_in_the_state(tmp_path: Path) -> None:
    planned, fakes = _plan(tmp_path, INLINE_MAP_MAX_CONFIGS)
    assert planned.map_mode == "inline" and planned.work_items_key is None
    assert [i.config_id for i in planned.items] == planned.config_ids
    assert len(planned.config_ids) == INLINE_MAP_MAX_CONFIGS
    assert work_items_key("run-1") not in fakes.artifacts.documents


def test_past_forty_the_work_items_go_to_s3_and_the_state_keeps_ids(tmp_path: Path) -> None:
    planned, fakes = _plan(tmp_path, INLINE_MAP_MAX_CONFIGS + 1)
    assert planned.map_mode == "distributed" and planned.items == []
    assert planned.work_items_key == work_items_key("run-1") == "runs/run-1/work-items.json"
    items = [WorkItem.model_validate(i) for i in fakes.artifacts.documents[planned.work_items_key]]
    assert [i.config_id for i in items] == planned.config_ids == [f"dir-{i:03d}" for i in range(41)]
    assert {i.run_id for i in items} == {"run-1"}
    assert items[0].artifacts_prefix == "runs/run-1/dir-000/"


def test_the_state_stays_small_at_the_most_configs_a_request_holds(tmp_path: Path) -> None:
    """500 configs: the Plan's output is the state the Maps start from, under 256 KiB by far."""
    planned, fakes = _plan(tmp_path, MAX_CONFIGS)
    assert planned.map_mode == "distributed"
    assert len(planned.model_dump_json()) < 32 * 1024
    assert len(fakes.artifacts.documents[work_items_key("run-1")]) == MAX_CONFIGS


def test_a_retried_plan_writes_the_same_work_items(tmp_path: Path) -> None:
    fakes = wf.make_fakes(tmp_path / "artifacts", LIMITS)
    first = plan_run(_document(45), "run-2", "2026-11-21T17:00:00.000Z", fakes.services)
    written = fakes.artifacts.documents[work_items_key("run-2")]
    again = plan_run(_document(45), "run-2", "2026-11-21T17:00:00.000Z", fakes.services)
    assert again == first and fakes.artifacts.documents[work_items_key("run-2")] == written


def test_more_configs_than_a_request_holds_are_refused_naming_the_field(tmp_path: Path) -> None:
    fakes = wf.make_fakes(tmp_path / "artifacts", LIMITS)
    with pytest.raises(InvalidRequestError, match="configs"):
        plan_run(_document(MAX_CONFIGS + 1), "run-3", "2026-11-21T17:00:00.000Z", fakes.services)

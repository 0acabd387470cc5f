"""Targets left to setup hooks (prepare false): attached and priced, never used by a workload."""

from __future__ import annotations

from typing import Any

import pytest

from storagebench.planning import build_plan, plan_steps
from storagebench.planning.local import LocalOptions, local_targets
from storagebench.request import RequestError, parse_request

CHUNKS = {
    "id": "chunks",
    "kind": "ebs",
    "type": "gp2",
    "size_gib": 200,
    "filesystem": "raw",
    "prepare": False,
}
SHARED = {"id": "shared", "kind": "local", "path": "/tmp"}


def request(targets: list[dict[str, Any]], workload: dict[str, Any] | None = None) -> Any:
    return parse_request(
        {
            "name": "t",
            "configs": [{"id": "c", "instance_type": "c5.2xlarge", "setup": "true", "targets": targets}],
            "workloads": [workload or {"profile": "dd-seq-write-1m-dsync", "scale": 0.01}],
        }
    )


def test_no_workload_runs_on_an_unprepared_target_by_default() -> None:
    req = request([CHUNKS, SHARED])
    steps = plan_steps(req, req.configs[0])
    assert steps and {s["target"] for s in steps} == {"shared"}


def test_naming_an_unprepared_target_in_a_workload_is_refused() -> None:
    with pytest.raises(RequestError) as caught:
        request([CHUNKS, SHARED], {"profile": "std-randread-4k", "targets": ["chunks"]})
    (error,) = caught.value.errors
    assert error.path == "workloads[0].profile" and "prepare false" in error.message


def test_an_unprepared_target_must_be_raw() -> None:
    with pytest.raises(RequestError) as caught:
        request([{**CHUNKS, "filesystem": "xfs"}, SHARED])
    (error,) = caught.value.errors
    assert error.path == "configs[0].targets[0].filesystem" and "set filesystem raw" in error.message


def test_the_plan_carries_it_to_the_agent_for_the_setup_hook() -> None:
    req = request([CHUNKS, SHARED])
    targets = local_targets(req.configs[0], LocalOptions(capacity_bytes=512 << 20, can_stripe=False))
    plan = build_plan(req, "c", "run-1", targets)
    (chunks,) = [t for t in plan["targets"] if t["id"] == "chunks"]
    assert chunks["prepare"] is False and chunks["emulate"]

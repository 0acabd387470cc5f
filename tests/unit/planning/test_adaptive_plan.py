"""Adaptive series in the plan (max steps, one policy per series) and the duration range min..max."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from storagebench.planning.duration import estimate_duration
from storagebench.planning.steps import plan_steps, series_id, step_id
from storagebench.protocol.plan import check_plan
from storagebench.request.parse import parse_request

DEMO = json.loads((Path(__file__).parents[3] / "events" / "local-demo.json").read_text())


def _request(**changes: object):  # type: ignore[no-untyped-def]
    document = copy.deepcopy(DEMO)
    document.update(changes)
    return parse_request(document)


def test_an_adaptive_series_plans_max_steps_sharing_one_policy() -> None:
    request = _request(repetitions={"min": 2, "max": 5, "ci_pct": 2})
    config = request.configs[0]
    steps = plan_steps(request, config)
    randread = [
        s for s in steps if s["workload"] == "std-randread-4k" and s["target"] == config.targets[0].id
    ]
    assert [s["repetition"] for s in randread] == [1, 2, 3, 4, 5]
    policies = {json.dumps(s["adaptive"], sort_keys=True) for s in randread}
    assert len(policies) == 1
    policy = randread[0]["adaptive"]
    assert (
        policy["metric"] == "iops" and policy["phase"] == "run" and (policy["min"], policy["max"]) == (2, 5)
    )
    latency = next(s for s in steps if s["workload"] == "std-latency-4k-qd1")
    seqread = next(s for s in steps if s["workload"] == "std-seqread-1m")
    assert latency["adaptive"]["metric"] == "lat_p95_us" and seqread["adaptive"]["metric"] == "bw_mibps"
    assert all("adaptive" not in s for s in steps if s["workload"] == "qd-sweep")  # its own count: 1
    check_plan(
        {
            "plan_version": 1,
            "run_id": "r",
            "config_id": config.id,
            "targets": [{"id": t.id, "kind": "directory", "path": "/tmp"} for t in config.targets],
            "steps": steps,
        }
    )


def test_series_id_is_the_step_id_without_its_repetition() -> None:
    assert series_id("w", "t", "bs=4k") + ".r7" == step_id("w", "t", "bs=4k", 7)
    long = "x" * 200
    assert len(series_id(long, "t", "")) + len(".r100") <= 128


def test_duration_gives_the_range_from_min_to_max() -> None:
    fixed = estimate_duration(_request(repetitions=2), 3)
    adaptive = estimate_duration(_request(repetitions={"min": 2, "max": 6, "ci_pct": 2}), 3)
    assert fixed.min_wall_hours == fixed.wall_hours
    assert adaptive.min_wall_hours == pytest.approx(
        fixed.wall_hours
    )  # every series stopping at min = a count of 2
    assert adaptive.wall_hours > adaptive.min_wall_hours

"""The plan's size, bounded before anything expands it (issue 27, item 4).

The count is arithmetic on the document; these tests hold it to the plan ``plan_steps`` builds,
on every shipped event and on the shapes that make it move (sweeps, targets a workload names,
targets left to setup hooks, adaptive series), and show the bound refusing before any planning.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest

from storagebench.planning import steps as planning_steps
from storagebench.planning.steps import plan_steps
from storagebench.request.errors import RequestError
from storagebench.request.parse import load_request, parse_request
from storagebench.request.plan_size import MAX_PLANNED_STEPS, planned_steps

EVENTS = sorted((Path(__file__).resolve().parents[3] / "events").glob("*.json"))


def _built(document: dict[str, Any]) -> tuple[list[int], list[int]]:
    request = parse_request(document)
    return planned_steps(request), [len(plan_steps(request, c)) for c in request.configs]


@pytest.mark.parametrize("path", [p for p in EVENTS if "workloads" in p.read_text()], ids=lambda p: p.name)
def test_the_count_is_the_plan_of_every_shipped_event(path: Path) -> None:
    try:
        request = load_request(path)
    except RequestError:
        pytest.skip(f"{path.name} is not a request (an event of another kind)")
    assert planned_steps(request) == [len(plan_steps(request, c)) for c in request.configs]


def _document(workloads: list[dict[str, Any]], repetitions: Any = 2) -> dict[str, Any]:
    return {
        "name": "size",
        "configs": [
            {
                "id": "two-volumes",
                "instance_type": "c5.4xlarge",
                "targets": [
                    {"kind": "ebs", "id": "a", "type": "gp3", "size_gib": 100},
                    {"kind": "ebs", "id": "b", "type": "gp3", "size_gib": 100},
                ],
            },
            {
                "id": "one-volume",
                "instance_type": "c5.4xlarge",
                "targets": [{"kind": "ebs", "id": "a", "type": "gp3", "size_gib": 100}],
            },
        ],
        "workloads": workloads,
        "repetitions": repetitions,
    }


@pytest.mark.parametrize(
    ("workloads", "repetitions", "expected"),
    [
        ([{"profile": "std-randread-4k"}], 2, [4, 2]),  # every target of each config
        ([{"profile": "sweep-qd-randread-4k"}], 1, [16, 8]),  # the profile's own 8-point sweep
        (
            [{"profile": "sweep-qd-randread-4k", "params": {"iodepth": [1, 2], "numjobs": [1, 2, 4]}}],
            1,
            [12, 6],
        ),
        ([{"profile": "std-randread-4k", "targets": ["a"]}], 3, [3, 3]),  # only the target it names
        (
            [{"profile": "std-randread-4k"}, {"profile": "std-seqread-1m"}],
            {"min": 2, "max": 5, "ci_pct": 5},
            [20, 10],
        ),
        (
            [{"profile": "std-randread-4k", "repetitions": 1}, {"profile": "std-seqread-1m"}],
            4,
            [10, 5],
        ),
    ],
)
def test_the_count_follows_sweeps_targets_and_repetitions(
    workloads: list[dict[str, Any]], repetitions: Any, expected: list[int]
) -> None:
    counted, built = _built(_document(workloads, repetitions))
    assert counted == built == expected


def _sweep(points: int, workloads: int, configs: int) -> dict[str, Any]:
    document = _document(
        [
            {
                "id": f"w{i}",
                "profile": "sweep-qd-randread-4k",
                "params": {"iodepth": list(range(1, points + 1))},
            }
            for i in range(workloads)
        ],
        repetitions=1,
    )
    one = document["configs"][1]
    document["configs"] = [{**copy.deepcopy(one), "id": f"c{i}"} for i in range(configs)]
    return document


def test_a_request_at_the_bound_is_accepted() -> None:
    counted, built = _built(_sweep(points=25, workloads=40, configs=5))
    assert sum(counted) == sum(built) == MAX_PLANNED_STEPS


def test_one_step_past_the_bound_is_refused_before_anything_is_planned(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def never(*_: Any) -> Any:
        raise AssertionError("plan_steps ran on a request past the bound")

    monkeypatch.setattr(planning_steps, "plan_steps", never)
    document = _sweep(points=25, workloads=40, configs=5)
    document["configs"][0]["targets"].append({"kind": "ebs", "id": "b", "type": "gp3", "size_gib": 100})
    for workload in document["workloads"]:
        workload["targets"] = ["a"]
    document["workloads"].append({"id": "extra", "profile": "std-randread-4k", "targets": ["b"]})  # c0 only
    with pytest.raises(RequestError) as refused:
        parse_request(document)
    (problem,) = [e for e in refused.value.errors if e.path == "workloads"]
    assert problem.value == MAX_PLANNED_STEPS + 1
    assert f"at most {MAX_PLANNED_STEPS:,} are planned (MAX_PLANNED_STEPS)" in problem.message
    assert "the most 1,001 in c0" in problem.message and "w0 alone is 25 per target" in problem.message


def test_the_issue_s_document_is_refused_in_milliseconds() -> None:
    """50 workloads x a 32x32 sweep: 153,600 steps per config (about 20 s of preview on main)."""
    document = _document(
        [
            {
                "id": f"w{i}",
                "profile": "sweep-qd-randread-4k",
                "params": {"iodepth": list(range(1, 33)), "numjobs": list(range(1, 33))},
            }
            for i in range(50)
        ],
        repetitions=3,
    )
    with pytest.raises(RequestError) as refused:
        parse_request(document)
    (problem,) = [e for e in refused.value.errors if e.path == "workloads"]
    assert problem.value == 50 * 32 * 32 * 3 * 3  # 3 targets across the two configs

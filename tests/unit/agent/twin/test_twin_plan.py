"""The plan's twin fields (protocol.plan.check_plan): ``emulator`` and ``latency`` of an emulated volume."""

from __future__ import annotations

from typing import Any, Dict, List

import pytest

from storagebench.protocol.plan import EMULATORS, PLAN_VERSION, PlanError, check_plan

GP3_LATENCY = {"modes": [{"weight": 1, "p50_ms": 0.6, "p99_ms": 1.4}], "source": "a test"}


def plan_with(**emulation: Any) -> Dict[str, Any]:
    return {
        "plan_version": PLAN_VERSION,
        "run_id": "r-twin",
        "config_id": "c1",
        "targets": [
            {
                "id": "vol",
                "kind": "ebs",
                "filesystem": "raw",
                "emulate": [
                    {
                        "volume_type": "gp3",
                        "size_gib": 100.0,
                        "capacity_bytes": 1 << 30,
                        "limits": {"iops": 3000, "mibps": 125, "io_size_kib": 256},
                        **emulation,
                    }
                ],
            }
        ],
        "steps": [],
    }


def problems_of(plan: Dict[str, Any]) -> List[str]:
    with pytest.raises(PlanError) as caught:
        check_plan(plan)
    return caught.value.problems


def test_the_emulators_are_auto_twin_and_throttle() -> None:
    assert EMULATORS == ("auto", "twin", "throttle")


@pytest.mark.parametrize("emulator", EMULATORS)
def test_each_emulator_with_a_latency_is_accepted(emulator: str) -> None:
    plan = plan_with(emulator=emulator, latency=GP3_LATENCY)
    assert check_plan(plan) is plan


def test_both_fields_are_optional() -> None:
    plan = plan_with()
    assert check_plan(plan) is plan


def test_a_bimodal_latency_is_accepted() -> None:
    bimodal = {
        "modes": [{"weight": 0.9, "p50_ms": 0.5, "p99_ms": 1.0}, {"weight": 0.1, "p50_ms": 8, "p99_ms": 20}]
    }
    plan = plan_with(latency=bimodal)
    assert check_plan(plan) is plan


@pytest.mark.parametrize("emulator", ["nbd", "", None, "TWIN"])
def test_an_unknown_emulator_is_refused_with_its_path(emulator: Any) -> None:
    assert problems_of(plan_with(emulator=emulator)) == [
        f"targets[0].emulate[0].emulator: {emulator!r}, one of auto, twin, throttle expected"
    ]


@pytest.mark.parametrize("wake", ["hold", "free"])
def test_the_cpus_may_be_kept_awake_or_left_to_halt(wake: str) -> None:
    plan = plan_with(cpu_wake=wake)
    assert check_plan(plan) is plan


@pytest.mark.parametrize("wake", ["awake", "", None, 0])
def test_an_unknown_cpu_wake_is_refused_with_its_path(wake: Any) -> None:
    assert problems_of(plan_with(cpu_wake=wake)) == [
        f"targets[0].emulate[0].cpu_wake: {wake!r}, one of hold, free expected"
    ]


@pytest.mark.parametrize(
    ("latency", "problem"),
    [
        ({"modes": []}, "targets[0].emulate[0].latency.modes: [], a non-empty list of modes expected"),
        (
            {"modes": [{"p50_ms": 2, "p99_ms": 1}]},
            "targets[0].emulate[0].latency.modes[0]: p50_ms 2, p99_ms 1: 0 < p50_ms <= p99_ms expected",
        ),
        (
            {"modes": [{"weight": -1, "p50_ms": 0.5, "p99_ms": 1}]},
            "targets[0].emulate[0].latency.modes[0].weight: -1, a positive number expected",
        ),
        (
            {"modes": [{"p50_ms": "fast", "p99_ms": 1}]},
            "targets[0].emulate[0].latency.modes[0].p50_ms: 'fast', a number expected",
        ),
        ("fast", "targets[0].emulate[0].latency: 'fast', an object with modes expected"),
        (None, "targets[0].emulate[0].latency: None, an object with modes expected"),
    ],
)
def test_a_malformed_latency_is_refused_with_its_path_and_value(latency: Any, problem: str) -> None:
    assert problems_of(plan_with(latency=latency)) == [problem]


def test_every_bad_twin_field_is_reported_at_once() -> None:
    problems = problems_of(plan_with(emulator="fuse", latency={"modes": [{"p50_ms": 1}]}))
    assert [p.split(":")[0] for p in problems] == [
        "targets[0].emulate[0].emulator",
        "targets[0].emulate[0].latency.modes[0]",
    ]

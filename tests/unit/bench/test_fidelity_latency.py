"""The fidelity bench's arithmetic: shapes read from real plans, the model's prediction, the grades."""

from __future__ import annotations

from typing import Any

import pytest

from fidelity_latency import (
    FidelityError,
    JobShape,
    compare_latency,
    compare_limit,
    job_shape,
    limit_expected,
    model_prediction,
)
from storagebench.planning import LocalOptions, build_plan, local_targets
from storagebench.request import parse_request

GP3 = {"iops": 3000.0, "mibps": 125.0, "io_size_kib": 256}
GP3_LATENCY = {"modes": [{"weight": 1.0, "p50_ms": 0.5, "p99_ms": 1.2}], "source": "test"}
SUITE = [
    "std-randread-4k",
    "std-randwrite-4k",
    "std-mixed-16k-70read",
    "std-seqread-1m",
    "std-seqwrite-1m",
    "std-latency-4k-qd1",
]


def standard_steps(volume: dict[str, Any]) -> dict[str, dict[str, Any]]:
    request = parse_request(
        {
            "name": "fidelity-test",
            "configs": [
                {
                    "id": "cfg",
                    "instance_type": "c5.4xlarge",
                    "targets": [{"kind": "ebs", "filesystem": "raw", **volume}],
                }
            ],
            "workloads": [{"profile": p, "scale": 0.04} for p in SUITE],
        }
    )
    config = request.configs[0]
    plan = build_plan(request, config.id, "run", local_targets(config, LocalOptions(can_stripe=False)))
    return {str(step["workload"]): dict(step) for step in plan["steps"]}


def fio_step(**options: Any) -> dict[str, Any]:
    return {"id": "s1", "phases": [{"engine": "fio", "fio": {"jobs": [{"name": "j", "options": options}]}}]}


def test_shapes_of_the_standard_suite_as_the_planner_resolves_them() -> None:
    # gp3 at 3,000 IOPS: "auto" asks 1 I/O in flight per 500 IOPS (6), rounded up to 2 per job x 4 jobs.
    shapes = {
        name: job_shape(step) for name, step in standard_steps({"type": "gp3", "size_gib": 100}).items()
    }
    assert shapes["std-randread-4k"] == JobShape(
        "randread", 4096, 2, 4, sequential=False, write=False, mixed=False
    )
    assert shapes["std-randread-4k"].in_flight == 8
    assert shapes["std-randwrite-4k"].write and not shapes["std-randwrite-4k"].sequential
    mixed = shapes["std-mixed-16k-70read"]
    assert (mixed.mixed, mixed.write, mixed.block_size, mixed.in_flight) == (True, False, 16384, 8)
    assert shapes["std-seqread-1m"] == JobShape(
        "read", 1 << 20, 8, 1, sequential=True, write=False, mixed=False
    )
    assert shapes["std-seqwrite-1m"].write and shapes["std-seqwrite-1m"].sequential
    assert shapes["std-latency-4k-qd1"].in_flight == 1
    assert shapes["std-latency-4k-qd1"].describe()["predicted_as"] == "read"
    assert mixed.describe()["predicted_as"] == "mixed"


def test_io1_at_4000_iops_keeps_more_in_flight() -> None:
    steps = standard_steps({"type": "io1", "size_gib": 100, "iops": 4000})
    assert job_shape(steps["std-randread-4k"]).in_flight == 8  # ceil(4000 / 500) = 8: 2 per job


@pytest.mark.parametrize(
    ("step", "message"),
    [
        (fio_step(rw="randtrim", bs="4k"), "rw: 'randtrim', one of read, write, randread"),
        (fio_step(rw="randread", bs="4q"), "bs: '4q' is not a size"),
        (fio_step(rw="randread", bs="4k", iodepth=0), "iodepth: 0, a positive integer expected"),
        (fio_step(rw="randread", bs="4k", numjobs="many"), "numjobs: 'many', a positive integer expected"),
        ({"id": "s2", "phases": []}, "step s2: 0 fio jobs, exactly one expected"),
    ],
)
def test_a_step_the_bench_cannot_read_is_refused_by_name(step: dict[str, Any], message: str) -> None:
    with pytest.raises(FidelityError, match=message.replace("(", r"\(")):
        job_shape(step)


def test_the_prediction_is_littles_law_at_the_limit_and_the_service_time_at_qd1() -> None:
    at_limit = model_prediction(
        GP3, GP3_LATENCY, job_shape(fio_step(rw="randread", bs="4k", iodepth=2, numjobs=4)), 20_000
    )
    assert at_limit["iops"] == pytest.approx(3000, rel=0.005)
    assert at_limit["mean_ms"] == pytest.approx(8 / 3000 * 1000, rel=0.01)  # 8 in flight / 3,000 IOPS
    qd1 = model_prediction(GP3, GP3_LATENCY, job_shape(fio_step(rw="randread", bs="4k")), 20_000)
    assert qd1["p50_ms"] == pytest.approx(0.5, rel=0.05)  # the catalog's service time
    assert qd1["p99_ms"] == pytest.approx(1.2, rel=0.08)
    sequential = model_prediction(
        GP3, GP3_LATENCY, job_shape(fio_step(rw="write", bs="1m", iodepth=8)), 2_000
    )
    assert sequential["mibps"] == pytest.approx(125, rel=0.01)
    assert sequential["p50_ms"] == pytest.approx(8 / 125 * 1000, rel=0.02)


def test_latency_is_graded_against_the_goals_per_percentile() -> None:
    model = {"p50_ms": 2.0, "p95_ms": 3.0, "p99_ms": 4.0}
    graded = compare_latency({"p50": 2.18, "p95": 2.69, "p99": 4.79}, model)
    assert graded["p50"] == {
        "measured_ms": 2.18,
        "model_ms": 2.0,
        "error_pct": 9.0,
        "goal_pct": 10.0,
        "within_goal": True,
    }
    assert graded["p95"]["error_pct"] == -10.33
    assert graded["p95"]["within_goal"] is False
    assert graded["p99"]["within_goal"] is True  # +19.75 % against 20 %
    assert graded["meets_goals"] is False
    assert compare_latency({"p50": 2.0, "p95": 3.0, "p99": 4.0}, model)["meets_goals"] is True


def test_a_missing_percentile_is_an_error_not_a_pass() -> None:
    with pytest.raises(FidelityError, match="measured p99: missing"):
        compare_latency({"p50": 2.0, "p95": 3.0, "p99": None}, {"p50_ms": 2.0, "p95_ms": 3.0, "p99_ms": 4.0})
    with pytest.raises(FidelityError, match="model p95_ms: 0"):
        compare_latency({"p50": 2.0, "p95": 3.0, "p99": 4.0}, {"p50_ms": 2.0, "p95_ms": 0, "p99_ms": 4.0})


def test_limits_count_ios_in_units_of_256_kib() -> None:
    assert limit_expected(GP3, "iops", 4) == 3000
    assert limit_expected(GP3, "iops", 1024) == 125  # 3000 / 4 operations = 750, but 125 MiB/s first
    assert limit_expected({"iops": 400.0, "mibps": 1000.0}, "mibps", 1024) == 100  # 400 / 4 ops per MiB
    row = compare_limit(GP3, "iops", 4, 2925.0)
    assert row == {
        "dimension": "iops",
        "limit": 3000,
        "measured": 2925.0,
        "ratio": 0.975,
        "within_3pct": True,
    }
    assert compare_limit(GP3, "iops", 4, 2900.0)["within_3pct"] is False
    with pytest.raises(FidelityError, match="dimension: 'latency'"):
        limit_expected(GP3, "latency", 4)

"""Report-card grades by p95 latency and latency-vs-load scaling."""

from __future__ import annotations

import math

import pytest
from pydantic import ValidationError
from tests.support.records import result_record

from storagebench.analysis.grades import DEFAULT_SCALE, GradeScale, grade, grade_record, load_scaling
from storagebench.results.records import LatencyStats, ResultRecord


@pytest.mark.parametrize(
    ("p95_us", "letter", "threshold_us"),
    [
        (0.0, "A", 2_000.0),
        (350.0, "A", 2_000.0),
        (1_999.9, "A", 2_000.0),
        (2_000.0, "B", 6_000.0),  # A is strictly below 2 ms
        (5_999.0, "B", 6_000.0),
        (6_000.0, "C", 14_000.0),
        (14_000.0, "C", 14_000.0),  # the study: *above* 14 ms is a D
        (14_000.1, "D", 14_000.0),
        (20_000.0, "D", 14_000.0),  # gp2's slow cluster
    ],
)
def test_default_scale_boundaries(p95_us: float, letter: str, threshold_us: float) -> None:
    g = grade(p95_us)
    assert g.letter == letter
    assert g.threshold_us == threshold_us
    assert g.p95_us == p95_us
    assert g.rule.endswith(f"-> {letter}")


def test_rule_is_human_readable() -> None:
    assert grade(1_500.0).rule == "p95 1.50 ms < 2.00 ms -> A"
    assert grade(14_000.0).rule == "p95 14.00 ms <= 14.00 ms -> C"
    assert grade(30_000.0).rule == "p95 30.00 ms > 14.00 ms -> D"


def test_custom_scale() -> None:
    nvme = GradeScale(a_below_us=200, b_below_us=500, c_max_us=1_000, source="local NVMe scale")
    assert grade(150.0, nvme).letter == "A"
    assert grade(700.0, nvme).letter == "C"
    assert grade(1_500.0, nvme).letter == "D"
    assert grade(1_500.0).letter == "A"  # same latency, default scale


def test_scale_must_increase() -> None:
    with pytest.raises(ValidationError):
        GradeScale(a_below_us=6_000, b_below_us=2_000)
    with pytest.raises(ValidationError):
        GradeScale(c_max_us=0)
    assert "14 ms" in DEFAULT_SCALE.source


@pytest.mark.parametrize("bad", [-1.0, math.nan, math.inf])
def test_grade_rejects_bad_latency(bad: float) -> None:
    with pytest.raises(ValueError):
        grade(bad)


def _record(latency: LatencyStats | None) -> ResultRecord:
    names = {"config_id": "c", "target_id": "t", "workload": "oltp", "profile": "randread-8k"}
    return result_record(**names, bytes=0, runtime_s=1.0, latency=latency)


def test_grade_record() -> None:
    lat = LatencyStats(basis="lat", samples=10, mean_us=900, stdev_us=1, min_us=1, max_us=2, p95_us=7_000)
    g = grade_record(_record(lat))
    assert g is not None
    assert g.letter == "C"
    assert grade_record(_record(None)) is None
    no_p95 = LatencyStats(basis="clat", samples=10, mean_us=900, stdev_us=1, min_us=1, max_us=2)
    assert grade_record(_record(no_p95)) is None


# --- load scaling --------------------------------------------------------------------------


def test_flat_latency_has_headroom() -> None:
    s = load_scaling([(16, 1_000.0), (32, 1_050.0)])
    assert s.ratio_per_doubling == pytest.approx(1.05)
    assert s.reading == "flat"
    assert len(s.steps) == 1
    assert s.steps[0].ratio_per_doubling == pytest.approx(1.05)


def test_saturated_latency_doubles_with_load() -> None:
    points = [(4, 500.0), (8, 1_000.0), (16, 2_000.0), (32, 4_000.0), (64, 8_000.0)]
    s = load_scaling(list(reversed(points)))  # order does not matter
    assert [p[0] for p in s.points] == [4, 8, 16, 32, 64]
    assert s.ratio_per_doubling == pytest.approx(2.0)
    assert s.reading == "saturated"
    assert all(step.ratio_per_doubling == pytest.approx(2.0) for step in s.steps)


def test_non_doubling_steps_are_normalised() -> None:
    # Load x4 with p95 x4: that is x2 per doubling, not x4.
    s = load_scaling([(4, 1_000.0), (16, 4_000.0)])
    assert s.steps[0].ratio_per_doubling == pytest.approx(2.0)
    assert s.ratio_per_doubling == pytest.approx(2.0)


def test_knee_in_scaling_shows_in_steps() -> None:
    s = load_scaling([(4, 1_000.0), (8, 1_000.0), (16, 1_000.0), (32, 2_000.0), (64, 4_000.0)])
    assert [round(step.ratio_per_doubling, 6) for step in s.steps] == [1.0, 1.0, 2.0, 2.0]
    assert 1.2 <= s.ratio_per_doubling < 1.8
    assert s.reading == "rising"


def test_repeated_loads_merge_by_geometric_mean() -> None:
    s = load_scaling([(16, 1_000.0), (16, 4_000.0), (32, 4_000.0)])
    assert s.points == [(16.0, pytest.approx(2_000.0)), (32.0, 4_000.0)]
    assert s.ratio_per_doubling == pytest.approx(2.0)


@pytest.mark.parametrize(
    "points",
    [[], [(16, 1_000.0)], [(16, 1_000.0), (16, 2_000.0)], [(0, 1.0), (2, 2.0)], [(1, -1.0), (2, 2.0)]],
)
def test_load_scaling_rejects_degenerate_input(points: list[tuple[float, float]]) -> None:
    with pytest.raises(ValueError):
        load_scaling(points)

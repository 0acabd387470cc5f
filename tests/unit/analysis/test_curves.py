"""Latency-vs-load curves: points in load order, the knee where p95 turns up, the scaling."""

from __future__ import annotations

import pytest
from tests.support.records import latency, result_record

from storagebench.analysis.curves import CurvePoint, latency_curve, latency_knee, sweep_curves, variant_params
from storagebench.analysis.grades import load_scaling
from storagebench.analysis.stats import aggregate
from storagebench.results.records import ResultRecord


def _points(pairs: list[tuple[float, float]]) -> list[CurvePoint]:
    return [CurvePoint(load=load, p95_us=p95, iops=load / p95 * 1e6) for load, p95 in pairs]


def test_a_throttled_volume_turns_up_where_it_saturates() -> None:
    """3,000 IOPS cap: QD 1 and 2 have headroom, from QD 4 on p95 doubles with the queue."""
    curve = latency_curve(
        "iodepth", _points([(16, 5300.0), (1, 600.0), (2, 680.0), (4, 1300.0), (8, 2650.0), (64, 21000.0)])
    )
    assert [p.load for p in curve.points] == [1, 2, 4, 8, 16, 64]
    assert curve.knee is not None
    assert (curve.knee.load, curve.knee.next_load) == (2, 4)
    assert curve.knee.ratio_per_doubling == pytest.approx((21000 / 680) ** (1 / 5))
    assert not curve.knee.at_lowest
    assert curve.scaling is not None and curve.scaling.reading == "saturated"
    assert "knee (queue depth) at 2" in curve.reading


def test_flat_latency_has_no_knee() -> None:
    curve = latency_curve("numjobs", _points([(1, 500.0), (2, 510.0), (4, 530.0), (8, 560.0)]))
    assert curve.knee is None
    assert curve.reading.endswith("no knee up to jobs 8")
    assert curve.scaling is not None and curve.scaling.reading == "flat"


def test_one_noisy_step_that_settles_again_is_not_a_knee() -> None:
    scaling = load_scaling([(1, 500.0), (2, 900.0), (4, 920.0), (8, 950.0)])
    assert latency_knee(scaling) is None


def test_a_curve_that_flattens_at_its_end_still_has_its_knee() -> None:
    """An emulated volume at 3,000 IOPS: p95 grows 4x per doubling, then caps near 100 ms."""
    knee = latency_knee(load_scaling([(1, 200.0), (4, 3900.0), (16, 68700.0), (64, 95900.0)]))
    assert knee is not None and knee.load == 1 and knee.at_lowest
    assert knee.ratio_per_doubling == pytest.approx((95900 / 200) ** (1 / 6))


def test_a_sweep_saturated_from_its_first_step_has_its_knee_at_or_below_the_lowest_load() -> None:
    knee = latency_knee(load_scaling([(1, 1000.0), (4, 4100.0), (16, 16000.0)]))
    assert knee is not None and knee.at_lowest and knee.load == 1
    assert knee.text.startswith("knee at or below 1:")


def test_points_without_p95_are_drawn_but_not_scaled() -> None:
    curve = latency_curve("iodepth", [CurvePoint(load=1, iops=100.0), CurvePoint(load=2, iops=180.0)])
    assert curve.scaling is None and curve.knee is None
    assert curve.reading == "fewer than two queue depth levels with a p95: no scaling"


@pytest.mark.parametrize(
    ("axis", "points", "message"),
    [
        (
            "bs",
            _points([(1, 1.0), (2, 2.0)]),
            "axis is 'bs': a curve is drawn against one of iodepth, numjobs",
        ),
        ("iodepth", _points([(1, 1.0), (1, 2.0)]), r"loads \[1.0, 1.0\] repeat"),
    ],
)
def test_bad_curves_are_named(axis: str, points: list[CurvePoint], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        latency_curve(axis, points)


def test_a_knee_threshold_must_be_a_rise() -> None:
    with pytest.raises(ValueError, match=r"rising_from is 0\.9: it must be a finite ratio above 1"):
        latency_knee(load_scaling([(1, 1.0), (2, 2.0)]), rising_from=0.9)


def _record(
    config: str, variant: dict[str, int | str], p95_us: float, direction: str = "read"
) -> ResultRecord:
    sweep = {"workload": "qd-sweep", "profile": "sweep-qd-randread-4k", "variant": variant}
    lat = latency(p95_us, samples=30000)
    return result_record(
        config_id=config, **sweep, direction=direction, iops=3000.0, runtime_s=10, latency=lat
    )


def test_sweep_curves_join_the_variants_of_each_config_in_load_order() -> None:
    records = [
        _record("gp3", {"iodepth": 16}, 90_000.0),
        _record("gp3", {"iodepth": 1}, 130.0),
        _record("gp3", {"iodepth": 4}, 170.0),
        _record("gp3", {"iodepth": 64}, 97_000.0),
        _record("io1", {"iodepth": 1}, 140.0),  # a single level is no curve
        _record("gp3", {"iodepth": 4}, 170.0, direction="mixed"),  # mixed sides are curves of their own
        _record("gp3", {}, 300.0),  # not a sweep point
    ]
    (sweep,) = sweep_curves(aggregate(records))
    assert (sweep.config_id, sweep.workload, sweep.direction) == ("gp3", "qd-sweep", "read")
    assert [p.load for p in sweep.curve.points] == [1, 4, 16, 64]
    assert sweep.curve.knee is not None and sweep.curve.knee.load == 4
    assert variant_params("iodepth=4,rw=randread") == {"iodepth": "4", "rw": "randread"}

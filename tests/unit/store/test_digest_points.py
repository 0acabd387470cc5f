"""The suite's digest read back as history points: what the regression check compares with."""

from __future__ import annotations

from typing import Any

from storagebench.analysis.regressions import digest_points, per_run_means


def digest(run_id: str, written_at: str, *entries: list[Any], option: str = "m6i/gp3") -> dict[str, Any]:
    return {
        "run_id": run_id,
        "config_id": "gp3",
        "started_at": f"2030-01-0{run_id[-1]}T00:00:00Z",
        "storage_option": option,
        "written_at": written_at,
        "series": list(entries),
    }


def entry(repetition: int, iops: float, group: int | None = None, workload: str = "rr") -> list[Any]:
    return [workload, "bs=4k", "run", "read", group, repetition, {"iops": iops, "lat_mean_us": 100.0}]


def test_points_per_series_partition_only_of_the_runs_asked_for() -> None:
    points = digest_points(
        [
            digest("r1", "t1", entry(1, 10.0), entry(2, 20.0), entry(1, 99.0, workload="sw")),
            digest("r2", "t1", entry(1, 30.0)),
            digest("r3", "t1", entry(1, 1000.0)),  # not a baseline run
        ],
        {"r1", "r2"},
    )
    assert set(points) == {
        ("m6i/gp3", "rr", "bs=4k", "run", "read"),
        ("m6i/gp3", "sw", "bs=4k", "run", "read"),
    }
    means = per_run_means(points[("m6i/gp3", "rr", "bs=4k", "run", "read")])
    assert [m["iops"] for m in means] == [15.0, 30.0]  # per run, oldest first


def test_a_repetition_written_twice_counts_once_the_latest_winning() -> None:
    points = digest_points(
        [digest("r1", "t2", entry(1, 50.0)), digest("r1", "t1", entry(1, 10.0), entry(2, 20.0))], {"r1"}
    )
    (series,) = points.values()
    assert sorted((p.repetition, p.metrics["iops"]) for p in series) == [(1, 50.0), (2, 20.0)]


def test_groups_stay_apart_and_damaged_entries_are_left_out() -> None:
    points = digest_points(
        [
            digest("r1", "t1", entry(1, 10.0, group=0), entry(1, 20.0, group=1), ["too", "short"]),
            digest("r2", "t1", [*entry(1, 5.0)[:6], "not metrics"], entry(1, float("nan"))),
            {"run_id": "r2", "storage_option": None, "series": [entry(1, 1.0)]},
        ],
        {"r1", "r2"},
    )
    (series,) = points.values()
    assert per_run_means(series, group=1) == [{"iops": 20.0, "lat_mean_us": 100.0}]
    assert per_run_means(series, group=0) == [{"iops": 10.0, "lat_mean_us": 100.0}]
    assert [m for m in per_run_means(series) if "iops" not in m] == [{"lat_mean_us": 100.0}]  # NaN dropped

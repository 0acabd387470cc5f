"""fio time series logs summed and averaged across jobs by 1 s bucket."""

from __future__ import annotations

from pathlib import Path

import pytest

from storagebench.results.errors import ParseError
from storagebench.results.fio_logs import (
    LogSample,
    bucket_of,
    find_logs,
    mean_latency_series,
    parse_log,
    read_log,
    read_timeseries,
    sum_series,
)

LOGS = Path(__file__).resolve().parents[2] / "data" / "fio" / "timeseries"


def samples(*rows: tuple[int, float, int]) -> list[LogSample]:
    return [LogSample(time_ms=t, value=v, direction=d, block_size=0, offset=0) for t, v, d in rows]


def test_parse_log_five_and_six_fields() -> None:
    parsed = parse_log("1000, 8202, 0, 0, 0\n\n2001, 8523, 1, 4096, 8192, 3\n")
    assert parsed == [
        LogSample(1000, 8202.0, 0, 0, 0, None),
        LogSample(2001, 8523.0, 1, 4096, 8192, 3),
    ]


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("1000, 8202, 0\n", "line 1: expected 5 or 6"),
        ("1000, 1, 0, 0, 0\nx, 1, 0, 0, 0\n", "line 2: non-numeric"),
    ],
)
def test_parse_log_rejects_malformed_lines(text: str, reason: str) -> None:
    with pytest.raises(ParseError, match=f"^ts/a_iops.1.log: {reason}"):
        parse_log(text, "ts/a_iops.1.log")


def test_read_log_missing_file_names_it(tmp_path: Path) -> None:
    with pytest.raises(ParseError, match=r"nope_iops\.1\.log: cannot read"):
        read_log(tmp_path / "nope_iops.1.log")


def test_find_logs_by_kind_and_job() -> None:
    iops = find_logs(LOGS, "iops")
    assert [(f.prefix, f.job) for f in iops] == [("ts", 1), ("ts", 2)]
    assert [f.path.name for f in find_logs(LOGS, "lat")] == ["ts_lat.1.log", "ts_lat.2.log"]
    assert [f.path.name for f in find_logs(LOGS, "clat")] == ["ts_clat.1.log", "ts_clat.2.log"]
    assert find_logs(LOGS, "iops", prefix="other") == []
    with pytest.raises(ValueError, match="kind"):
        find_logs(LOGS, "latency")


def test_find_logs_without_job_number(tmp_path: Path) -> None:
    (tmp_path / "all_iops.log").write_text("1000, 1, 0, 0, 0\n")
    (tmp_path / "notes.txt").write_text("")
    (found,) = find_logs(tmp_path, "iops")
    assert (found.prefix, found.job) == ("all", 0)


@pytest.mark.parametrize(
    ("time_ms", "bucket"), [(999, 1), (1000, 1), (1499, 1), (1500, 2), (2001, 2), (168, 1)]
)
def test_bucket_of(time_ms: int, bucket: int) -> None:
    assert bucket_of(time_ms) == bucket


def test_iops_summed_across_jobs_from_real_logs() -> None:
    logs = [read_log(f.path) for f in find_logs(LOGS, "iops")]
    series = sum_series(logs)
    # ts_iops.1.log: 1000 8202 / 2001 8578 (read); ts_iops.2.log: 999 8137 / 2000 8543 (read)
    assert series["read"] == [(1.0, 8202 + 8137), (2.0, 8578 + 8543)]
    assert series["write"] == [(1.0, 8252 + 8273), (2.0, 8523 + 8593)]
    assert set(series) == {"read", "write"}


def test_latency_weighted_by_iops_and_plain_mean_without_weights() -> None:
    latency = [
        samples((1000, 100.0, 0), (2000, 300.0, 0)),
        samples((1000, 200.0, 0), (2000, 500.0, 0)),
    ]
    weights = [samples((1000, 3000.0, 0), (2000, 10.0, 0)), samples((1000, 1000.0, 0))]
    series = mean_latency_series(latency, weights)
    # second 1: (100*3000 + 200*1000) / 4000; second 2: job 2 has no iops sample -> plain mean
    assert series["read"] == [(1.0, 125.0), (2.0, 400.0)]
    assert mean_latency_series(latency)["read"] == [(1.0, 150.0), (2.0, 400.0)]
    with pytest.raises(ValueError, match="1 iops logs for 2 latency logs"):
        mean_latency_series(latency, weights[:1])


def test_samples_of_one_job_in_one_bucket_are_averaged_not_summed() -> None:
    series = sum_series([samples((3000, 10.0, 1), (3000, 30.0, 1)), samples((2999, 5.0, 1))])
    assert series == {"write": [(3.0, 25.0)]}


def test_real_latency_logs_and_unit_conversion() -> None:
    series = read_timeseries(LOGS)
    # bw logs are KiB/s: job 1 32808 + job 2 32548 at second 1 (read)
    second, mibps = series.bw_mibps["read"][0]
    assert second == 1.0 and mibps == pytest.approx((32808 + 32548) / 1024)
    assert series.iops["read"][0] == (1.0, 8202.0 + 8137.0)
    # ts_lat: second 1 read 230595 (job 1) and 238529 (job 2) ns, weighted by 8202 / 8137 iops
    expected = (230595 * 8202 + 238529 * 8137) / (8202 + 8137) / 1000
    lat_second, lat = series.lat_us["read"][0]
    assert lat_second == 1.0 and lat == pytest.approx(expected)
    # Second 3 has no iops samples (fio 3.33 stops those logs a window early) and job 2 logged two
    # read samples at 3000 ms: averaged per job, then a plain mean across jobs.
    job1 = 171449
    job2 = (174869 + 75612) / 2
    last_second, last_lat = series.lat_us["read"][2]
    assert last_second == 3.0 and last_lat == pytest.approx((job1 + job2) / 2 / 1000)
    assert [t for t, _ in series.lat_us["write"]] == [1.0, 2.0, 3.0]


def test_unknown_directions_are_ignored() -> None:
    assert sum_series([samples((1000, 1.0, 3))]) == {}

"""fio JSON/json+ parsing and aggregation, checked against fio's own normal-output summary."""

from __future__ import annotations

import copy
import json
import math
import random
import statistics
from pathlib import Path
from typing import Any

import pytest

from storagebench.results.errors import FioJobError, ParseError
from storagebench.results.fio import (
    MIB,
    aggregate_fio,
    fio_records,
    load_fio_json,
    parse_fio_jobs,
    split_fio_output,
    summary_disagreements,
)
from storagebench.results.fio_latency import (
    bucket_index,
    log_histogram,
    merge_bins,
    percentile_from_bins,
    pooled_stats,
)
from storagebench.results.fio_normal import parse_job_summaries, parse_run_status

DATA = Path(__file__).resolve().parents[2] / "data" / "fio"

# Real runs and their fixed block size (None: several block sizes in one run).
FIXTURES: dict[str, int | None] = {
    "single_randread": 4096,
    "study1_randrw": 4096,
    "numjobs4": 4096,
    "numjobs4_group_reporting": 4096,
    "stonewall": 4096,
    "new_group": None,
    "lat_percentiles": 4096,
    "seq_write_1m": 1 << 20,
    "timeseries": 4096,
}
IDENTITY: dict[str, Any] = {
    "config_id": "cfg",
    "target_id": "vol",
    "workload": "w",
    "profile": "p",
    "repetition": 1,
    "phase": "run",
}


def fixture(name: str) -> tuple[dict[str, Any], str]:
    json_text, normal = split_fio_output((DATA / f"{name}.out").read_text())
    return load_fio_json(json_text), normal


# --------------------------------------------------------------------------- splitting


@pytest.mark.parametrize("name", [*FIXTURES, "job_error"])
def test_split_separates_preamble_json_and_normal_text(name: str) -> None:
    combined = (DATA / f"{name}.out").read_text()
    json_text, normal = split_fio_output(combined)
    document = json.loads(json_text)
    assert document["fio version"] == "fio-3.33"
    assert json_text.startswith("{")
    assert "Starting" not in json_text
    # The normal text keeps fio's preamble (job descriptions, "Starting N processes") and report:
    # together the two parts hold every line of the combined output.
    assert "Starting" in normal
    assert "Run status group 0 (all jobs):" in normal
    assert sorted((json_text + normal).split()) == sorted(combined.split())


def test_split_rejects_truncated_output() -> None:
    combined = (DATA / "single_randread.out").read_text()
    cut = combined[: combined.index('"disk_util"')]
    with pytest.raises(ParseError, match="no fio JSON document"):
        split_fio_output(cut, "steps/s/run/fio.out")


def test_split_accepts_bare_json_and_load_accepts_combined() -> None:
    combined = (DATA / "single_randread.out").read_text()
    json_text, _ = split_fio_output(combined)
    again, rest = split_fio_output(json_text)
    assert json.loads(again) == json.loads(json_text)
    assert rest == ""
    assert load_fio_json(combined)["jobs"][0]["jobname"] == "randread"


def test_load_rejects_non_fio_json_naming_the_source() -> None:
    with pytest.raises(ParseError, match=r"^x/fio.json: not a fio JSON document"):
        load_fio_json('{"a": 1}', "x/fio.json")
    with pytest.raises(ParseError, match=r"^x/fio.json: not fio JSON"):
        load_fio_json("garbage", "x/fio.json")


# --------------------------------------------------------------------------- the product's promise


@pytest.mark.parametrize("name", FIXTURES)
def test_group_bandwidth_io_and_runtimes_match_fio_run_status(name: str) -> None:
    document, normal = fixture(name)
    results = aggregate_fio(document, normal_text=normal)
    statuses = {(s.group, s.direction): s for s in parse_run_status(normal)}
    assert {(r.group, r.direction) for r in results} == set(statuses)
    for result in results:
        status = statuses[(result.group, result.direction)]
        assert status.bw.agrees(result.bw_bytes_per_s), (result, status.bw)
        assert status.bw_min.agrees(result.job_bw_min_bytes_per_s), (result, status.bw_min)
        assert status.bw_max.agrees(result.job_bw_max_bytes_per_s), (result, status.bw_max)
        assert status.io.agrees(result.io_bytes)
        assert (status.run_min_ms, status.run_max_ms) == (result.runtime_min_ms, result.runtime_max_ms)
    assert summary_disagreements(results, normal) == []


@pytest.mark.parametrize("name", FIXTURES)
def test_group_iops_match_fio(name: str) -> None:
    document, normal = fixture(name)
    summaries = parse_job_summaries(normal)
    for result in aggregate_fio(document, normal_text=normal):
        printed = [
            s.directions[result.direction].iops
            for s in summaries
            if s.group == result.group and result.direction in s.directions
        ]
        assert len(printed) == result.entries
        if result.entries == 1:
            # One job, or group_reporting: fio printed the group's IOPS itself.
            assert printed[0].agrees(result.iops), (result.iops, printed[0])
        else:
            # fio prints per-job IOPS only; the group's I/Os over the longest runtime lie between
            # the sum of job rates scaled by mint/maxt and that sum.
            total = sum(q.value for q in printed)
            slack = sum(q.resolution for q in printed)
            low = total * result.runtime_min_ms / result.runtime_max_ms
            assert low - slack <= result.iops <= total + slack
        block = FIXTURES[name]
        if block is not None:
            assert result.io_bytes == result.ios * block
            assert math.isclose(result.iops * block, result.bw_bytes_per_s, rel_tol=1e-12)


@pytest.mark.parametrize("name", FIXTURES)
def test_bins_reproduce_fio_percentiles_for_every_job(name: str) -> None:
    document, _ = fixture(name)
    checked = 0
    for part in parse_fio_jobs(document):
        assert part.latency is not None and part.latency.bins is not None
        assert sum(part.latency.bins.values()) == part.latency.samples == part.ios
        for percent, value in part.latency.percentiles.items():
            assert percentile_from_bins(part.latency.bins, percent) == value, (part.job, percent)
            checked += 1
    assert checked >= 17


@pytest.mark.parametrize("name", FIXTURES)
def test_records_are_valid_and_consistent(name: str) -> None:
    document, normal = fixture(name)
    records = fio_records(document, **IDENTITY, normal_text=normal, raw=["a/fio.json"], labels=["x"])
    results = aggregate_fio(document, normal_text=normal)
    assert len(records) == len(results) >= 1
    for record, result in zip(records, results, strict=True):
        assert record.engine == "fio"
        assert record.direction in ("read", "write")
        assert record.bw_mibps == pytest.approx(result.bw_bytes_per_s / MIB)
        assert record.runtime_s == result.runtime_max_ms / 1000
        assert record.raw == ["a/fio.json"] and record.labels == ["x"]
        latency = record.latency
        assert latency is not None and record.histogram is not None
        assert latency.samples == record.ios
        assert sum(b.count for b in record.histogram) == latency.samples
        assert (
            latency.min_us * 0.97 <= (latency.p50_us or 0) <= (latency.p99_us or 0) <= latency.max_us * 1.03
        )
        bounds = [b.le_us for b in record.histogram]
        assert bounds == sorted(bounds) and all(b.count > 0 for b in record.histogram)
        for bound in bounds:
            k = round(4 * math.log2(bound))
            assert bound == pytest.approx(2 ** (k / 4))


# --------------------------------------------------------------------------- shapes


def test_single_job_uses_fios_own_numbers() -> None:
    document, normal = fixture("single_randread")
    (record,) = fio_records(document, **IDENTITY, normal_text=normal)
    read = document["jobs"][0]["read"]
    assert record.jobs == 1 and record.group == 0 and record.direction == "read"
    assert record.bytes == read["io_bytes"] and record.ios == read["total_ios"]
    assert record.iops == pytest.approx(read["iops"])
    assert record.bw_mibps == pytest.approx(read["bw_bytes"] / MIB, rel=1e-5)
    latency = record.latency
    assert latency is not None and latency.basis == "clat"
    clat = read["clat_ns"]
    assert latency.mean_us == pytest.approx(clat["mean"] / 1000)
    assert latency.stdev_us == pytest.approx(clat["stddev"] / 1000)
    assert latency.p99_us == clat["percentile"]["99.000000"] / 1000
    assert latency.p999_us == clat["percentile"]["99.900000"] / 1000
    assert record.cpu_usr_pct == pytest.approx(document["jobs"][0]["usr_cpu"])
    assert record.job_bw_min_mibps == record.job_bw_max_mibps == pytest.approx(record.bw_mibps)


def test_merged_percentiles_equal_fio_single_job_percentiles() -> None:
    """A one-job group computed through the merge path gives fio's own percentiles."""
    document, _ = fixture("single_randread")
    part = parse_fio_jobs(document)[0]
    assert part.latency is not None and part.latency.bins is not None
    merged = merge_bins([part.latency.bins])
    own = document["jobs"][0]["read"]["clat_ns"]["percentile"]
    for key, value in own.items():
        assert percentile_from_bins(merged, float(key)) == value

    # The same job split into two halves of its histogram merges back to the same answer.
    bins = part.latency.bins
    first = {k: v // 2 for k, v in bins.items()}
    second = {k: v - v // 2 for k, v in bins.items()}
    remerged = merge_bins([first, second])
    assert remerged == bins
    assert percentile_from_bins(remerged, 99.0) == own["99.000000"]


def test_group_reporting_counts_members_and_uses_fio_percentiles() -> None:
    document, normal = fixture("numjobs4_group_reporting")
    for text in (normal, None):
        (result,) = aggregate_fio(document, normal_text=text)
        assert result.jobs == 4 and result.entries == 1
        assert result.job_bw_min_bytes_per_s == result.job_bw_max_bytes_per_s == result.bw_bytes_per_s
    (record,) = fio_records(document, **IDENTITY, normal_text=normal)
    clat = document["jobs"][0]["read"]["clat_ns"]
    assert record.latency is not None
    assert record.latency.p95_us == clat["percentile"]["95.000000"] / 1000
    assert record.latency.stdev_us == pytest.approx(clat["stddev"] / 1000)


def test_numjobs_without_group_reporting_pools_four_jobs() -> None:
    document, normal = fixture("numjobs4")
    (result,) = aggregate_fio(document, normal_text=normal)
    jobs = [j["read"] for j in document["jobs"]]
    assert result.jobs == 4 and result.entries == 4
    assert result.io_bytes == sum(j["io_bytes"] for j in jobs)
    assert result.runtime_max_ms == max(j["runtime"] for j in jobs)
    assert result.job_bw_min_bytes_per_s == pytest.approx(min(j["bw_bytes"] for j in jobs), abs=1)
    assert result.job_bw_max_bytes_per_s == pytest.approx(max(j["bw_bytes"] for j in jobs), abs=1)
    latency = result.latency
    assert latency is not None
    n = [j["clat_ns"]["N"] for j in jobs]
    mean = sum(j["clat_ns"]["mean"] * k for j, k in zip(jobs, n, strict=True)) / sum(n)
    assert latency.mean_us == pytest.approx(mean / 1000)
    assert latency.samples == sum(n)
    assert latency.min_us == min(j["clat_ns"]["min"] for j in jobs) / 1000
    assert latency.max_us == max(j["clat_ns"]["max"] for j in jobs) / 1000
    # Merged percentiles lie between the jobs' own.
    p99 = [j["clat_ns"]["percentile"]["99.000000"] / 1000 for j in jobs]
    assert latency.p99_us is not None and min(p99) <= latency.p99_us <= max(p99)
    merged = merge_bins(j["clat_ns"]["bins"] for j in jobs)
    p99_ns = percentile_from_bins({int(k): v for k, v in merged.items()}, 99.0)
    assert p99_ns is not None and latency.p99_us == p99_ns / 1000


def test_study1_randrw_gives_a_read_and_a_write_record() -> None:
    document, normal = fixture("study1_randrw")
    read, write = fio_records(document, **IDENTITY, normal_text=normal)
    assert (read.direction, write.direction) == ("read", "write")
    assert read.jobs == write.jobs == 4
    share = read.ios / (read.ios + write.ios)  # type: ignore[operator]
    assert 0.2 < share < 0.3  # rwmixread=25
    # Size-based jobs end at different times: fio's mint/maxt and minb/maxb differ.
    assert read.job_runtime_min_s is not None and read.job_runtime_max_s is not None
    assert read.job_runtime_min_s < read.job_runtime_max_s
    assert read.job_bw_min_mibps is not None and read.job_bw_max_mibps is not None
    assert read.job_bw_min_mibps < read.job_bw_max_mibps


def test_stonewall_and_new_group_make_one_record_per_group_and_direction() -> None:
    document, normal = fixture("stonewall")
    records = fio_records(document, **IDENTITY, normal_text=normal)
    assert [(r.group, r.direction, r.jobs) for r in records] == [(0, "read", 1), (1, "write", 2)]
    document, normal = fixture("new_group")
    records = fio_records(document, **IDENTITY, normal_text=normal)
    assert [(r.group, r.direction, r.jobs) for r in records] == [
        (0, "read", 2),
        (0, "write", 2),
        (1, "read", 2),
        (1, "write", 2),
    ]
    # 128k I/O in group 1, 8k in group 0.
    assert records[2].bytes == records[2].ios * 131072  # type: ignore[operator]
    assert records[0].bytes == records[0].ios * 8192  # type: ignore[operator]


def test_lat_percentiles_switch_basis_to_total_latency() -> None:
    document, normal = fixture("lat_percentiles")
    (record,) = fio_records(document, **IDENTITY, normal_text=normal)
    latency = record.latency
    assert latency is not None and latency.basis == "lat"
    jobs = [j["read"]["lat_ns"] for j in document["jobs"]]
    assert latency.samples == sum(j["N"] for j in jobs)
    assert latency.min_us == min(j["min"] for j in jobs) / 1000
    merged = merge_bins({int(k): v for k, v in j["bins"].items()} for j in jobs)
    assert latency.p50_us == percentile_from_bins(merged, 50.0) / 1000  # type: ignore[operator]
    # total latency >= completion latency
    clat_mean = sum(j["read"]["clat_ns"]["mean"] for j in document["jobs"]) / 2
    assert latency.mean_us * 1000 >= clat_mean


def test_seq_write_1m() -> None:
    document, normal = fixture("seq_write_1m")
    (record,) = fio_records(document, **IDENTITY, normal_text=normal)
    assert record.direction == "write" and record.bytes == record.ios * MIB  # type: ignore[operator]
    assert record.iops == pytest.approx(record.bw_mibps)


def test_job_error_raises_naming_job_and_error() -> None:
    document, _ = fixture("job_error")
    with pytest.raises(FioJobError) as caught:
        aggregate_fio(document, source="steps/s/run/fio.json")
    error = caught.value
    assert (error.job, error.group, error.error) == ("full", 0, 28)
    assert str(error).startswith("steps/s/run/fio.json: fio job 'full' (group 0) failed with error 28")
    assert "ENOSPC" in str(error)


def test_multi_job_without_bins_leaves_percentiles_empty() -> None:
    document, _ = fixture("numjobs4")
    stripped = copy.deepcopy(document)
    for job in stripped["jobs"]:
        del job["read"]["clat_ns"]["bins"]
    (result,) = aggregate_fio(stripped)
    assert result.latency is not None and result.histogram is None
    assert result.latency.p99_us is None and result.latency.p50_us is None
    assert result.latency.mean_us > 0
    # A single job without bins keeps fio's own percentiles.
    document, _ = fixture("single_randread")
    del document["jobs"][0]["read"]["clat_ns"]["bins"]
    (result,) = aggregate_fio(document)
    assert result.latency is not None and result.latency.p99_us is not None and result.histogram is None


def test_fio2_usec_json_is_read_as_a_fallback() -> None:
    document = json.loads((DATA / "fio2_usec.json").read_text())
    (result,) = aggregate_fio(document)
    assert result.io_bytes == (40960 + 36864) * 1024  # fio 2.x io_bytes are KiB
    assert result.ios == 10240 + 9216
    assert result.runtime_max_ms == 1001 and result.runtime_min_ms == 1000
    assert result.bw_bytes_per_s == pytest.approx(result.io_bytes * 1000 / 1001)
    latency = result.latency
    assert latency is not None and latency.basis == "clat"
    assert latency.samples == 10240 + 9216
    assert latency.mean_us == pytest.approx((24.1 * 10240 + 25.9 * 9216) / (10240 + 9216))
    assert latency.p99_us is None  # two jobs, no bins: never averaged
    single = copy.deepcopy(document)
    single["jobs"] = single["jobs"][:1]
    (result,) = aggregate_fio(single)
    assert result.latency is not None
    assert result.latency.p99_us == 62 and result.latency.max_us == 2150
    assert result.cpu_sys_pct == 21.0


def test_cpu_is_the_mean_per_job() -> None:
    document, _ = fixture("numjobs4")
    (result,) = aggregate_fio(document)
    expected = statistics.mean(j["usr_cpu"] for j in document["jobs"])
    assert result.cpu_usr_pct == pytest.approx(expected)


def test_malformed_numbers_raise_parse_error() -> None:
    document, _ = fixture("single_randread")
    document["jobs"][0]["read"]["runtime"] = "soon"
    with pytest.raises(ParseError, match=r"jobs\[0\] \(randread\)\.read\.runtime"):
        aggregate_fio(document, source="f.json")


# --------------------------------------------------------------------------- helpers


def test_pooled_stats_equal_stats_of_the_union() -> None:
    rng = random.Random(7)
    groups = [
        [rng.gauss(mu, sd) for _ in range(n)] for mu, sd, n in ((100, 10, 50), (180, 40, 7), (90, 1, 200))
    ]
    parts = [(len(g), statistics.mean(g), statistics.stdev(g)) for g in groups]
    union = [x for g in groups for x in g]
    total, mean, stdev = pooled_stats(parts)
    assert total == len(union)
    assert mean == pytest.approx(statistics.mean(union))
    assert stdev == pytest.approx(statistics.stdev(union))
    assert pooled_stats([]) == (0, 0.0, 0.0)


def test_percentile_from_bins_follows_fio() -> None:
    bins = {100: 50, 200: 40, 300: 10}
    assert percentile_from_bins(bins, 50.0) == 100  # cumulative 50 >= 50
    assert percentile_from_bins(bins, 50.1) == 200
    assert percentile_from_bins(bins, 90.0) == 200
    assert percentile_from_bins(bins, 99.99) == 300
    assert percentile_from_bins({}, 50.0) is None


def test_log_buckets_are_quarter_octaves() -> None:
    assert bucket_index(1.0) == 1  # [1, 2^0.25)
    assert bucket_index(0.999) == 0
    assert bucket_index(2.0) == 5
    assert bucket_index(2 ** (3 / 4) * 0.9999) == 3
    histogram = log_histogram({1000: 3, 1100: 2, 2000: 5, 100_000: 1, 5000: 0})
    assert [(round(b.le_us, 4), b.count) for b in histogram] == [
        (round(2**0.25, 4), 5),
        (round(2**1.25, 4), 5),
        (round(2 ** (27 / 4), 4), 1),
    ]
    for bucket in histogram:
        assert bucket.le_us > 0


def test_job_runtime_stands_in_for_a_missing_direction_runtime() -> None:
    document, _ = fixture("single_randread")
    read = document["jobs"][0]["read"]
    del read["runtime"]
    (result,) = aggregate_fio(document)
    assert result.runtime_max_ms == document["jobs"][0]["job_runtime"]
    document, _ = fixture("numjobs4_group_reporting")
    del document["jobs"][0]["read"]["runtime"]
    with pytest.raises(ParseError, match="group 0 read: 8192 I/Os but no runtime"):
        aggregate_fio(document)

"""The aggregate of a multi-client run against fio's own "All clients" and hand-computed sums."""

from __future__ import annotations

import math
from typing import Any

import pytest
from client_captures import CLIENTS_333, CLIENTS_341, RANDRW_333, RANDRW_341, capture, document

from storagebench.results.clients.aggregate import (
    aggregate_clients,
    all_clients_disagreements,
    client_records,
)
from storagebench.results.clients.errors import (
    AggregateWithheldError,
    ClientHistogramError,
    ClientJobError,
    MissingClientError,
)
from storagebench.results.clients.output import split_clients
from storagebench.results.fio_latency import merge_bins, percentile_from_bins

IDENTITY: dict[str, Any] = {
    "config_id": "efs-4",
    "target_id": "efs0",
    "workload": "randrw",
    "profile": "oltp",
    "repetition": 1,
    "phase": "run",
}


@pytest.mark.parametrize(("name", "clients"), [(RANDRW_333, CLIENTS_333), (RANDRW_341, CLIENTS_341)])
def test_the_aggregate_is_fios_all_clients(name: str, clients: list[str]) -> None:
    results = aggregate_clients(split_clients(capture(name), clients))
    assert results.errors == [] and all_clients_disagreements(results) == []
    fio = document(name)["client_stats"][-1]
    for aggregate in results.aggregates:
        ours, theirs = aggregate.result, fio[aggregate.result.direction]
        assert (ours.ios, ours.io_bytes, ours.runtime_max_ms) == (
            theirs["total_ios"],
            theirs["io_bytes"],
            theirs["runtime"],
        )
        assert math.floor(ours.bw_bytes_per_s) == theirs["bw_bytes"]  # fio truncates to an integer
        assert ours.iops == pytest.approx(theirs["iops"], abs=1e-6)  # fio prints 6 decimals
        assert ours.latency is not None and ours.latency.basis == "lat"
        lat = theirs["lat_ns"]
        assert ours.latency.samples == lat["N"]
        assert (ours.latency.min_us * 1000, ours.latency.max_us * 1000) == (lat["min"], lat["max"])
        assert ours.latency.mean_us * 1000 == pytest.approx(lat["mean"], abs=1e-6)
        assert ours.latency.stdev_us * 1000 == pytest.approx(lat["stddev"], rel=1e-6)


def test_percentiles_equal_fios_own_all_clients_percentiles_from_3_39_on() -> None:
    results = aggregate_clients(split_clients(capture(RANDRW_341), CLIENTS_341))
    fio = document(RANDRW_341)["client_stats"][-1]
    for aggregate in results.aggregates:
        latency = aggregate.result.latency
        assert latency is not None
        printed = fio[aggregate.result.direction]["lat_ns"]["percentile"]
        for field, key in (
            ("p50_us", "50"),
            ("p90_us", "90"),
            ("p95_us", "95"),
            ("p99_us", "99"),
            ("p999_us", "99.9"),
        ):
            assert getattr(latency, field) * 1000 == printed[f"{float(key):.6f}"], field


def test_fio_3_33_prints_no_all_clients_percentiles_so_they_come_from_the_merged_bins() -> None:
    fio = document(RANDRW_333)["client_stats"]
    assert "percentile" not in fio[-1]["read"]["lat_ns"] and "bins" not in fio[-1]["read"]["lat_ns"]
    # By hand: every client's job bins summed, walked as fio walks them.
    merged = merge_bins({int(k): v for k, v in e["read"]["lat_ns"]["bins"].items()} for e in fio[:-1])
    results = aggregate_clients(split_clients(capture(RANDRW_333), CLIENTS_333))
    read = next(a.result for a in results.aggregates if a.result.direction == "read")
    assert read.latency is not None
    for field, percent in (("p50_us", 50.0), ("p99_us", 99.0), ("p999_us", 99.9)):
        assert getattr(read.latency, field) * 1000 == percentile_from_bins(merged, percent), field


def test_the_aggregate_is_the_per_client_entries_summed_by_hand() -> None:
    fio = document(RANDRW_333)["client_stats"][:-1]
    results = aggregate_clients(split_clients(capture(RANDRW_333), CLIENTS_333))
    for aggregate in results.aggregates:
        direction = aggregate.result.direction
        ios = sum(e[direction]["total_ios"] for e in fio)
        io_bytes = sum(e[direction]["io_bytes"] for e in fio)
        runtime = max(e[direction]["runtime"] for e in fio)
        assert (aggregate.result.ios, aggregate.result.io_bytes) == (ios, io_bytes)
        assert aggregate.result.iops == ios * 1000 / runtime
        assert aggregate.result.jobs == 4  # numjobs=2 on each of 2 clients
        samples = sum(e[direction]["lat_ns"]["N"] for e in fio)
        mean = sum(e[direction]["lat_ns"]["N"] * e[direction]["lat_ns"]["mean"] for e in fio) / samples
        assert aggregate.result.latency is not None
        assert aggregate.result.latency.mean_us * 1000 == pytest.approx(mean, rel=1e-12)
        # Spread: each client's I/Os over its own longest job.
        per_client = [
            sum(e[direction]["total_ios"] for e in fio if e["port"] == port)
            * 1000
            / max(e[direction]["runtime"] for e in fio if e["port"] == port)
            for port in (18765, 18766)
        ]
        assert (aggregate.spread.iops_min, aggregate.spread.iops_max) == (min(per_client), max(per_client))


def test_records_label_each_client_and_the_aggregate_carries_the_spread() -> None:
    results = aggregate_clients(split_clients(capture(RANDRW_333), CLIENTS_333))
    records = client_records(results, **IDENTITY, raw=["steps/s1/run/fio.json"])
    assert [(r.client, r.client_index, r.clients, r.direction) for r in records] == [
        ("127.0.0.1:18765", 1, None, "read"),
        ("127.0.0.1:18765", 1, None, "write"),
        ("127.0.0.1:18766", 2, None, "read"),
        ("127.0.0.1:18766", 2, None, "write"),
        (None, None, 2, "read"),
        (None, None, 2, "write"),
    ]
    read_total = records[4]
    assert read_total.iops == pytest.approx(
        records[0].iops + records[2].iops, rel=1e-3
    )  # equal runtimes here
    assert read_total.client_spread is not None and read_total.client_spread.clients == 2
    assert records[0].client_spread is None
    # A client's record is its own measurement: never averaged with the sum as a repetition.
    assert len({r.key() for r in records}) == 6
    assert records[0].key()[3] == "client=127.0.0.1:18765" and read_total.key()[3] == ""


def test_a_client_whose_job_failed_is_reported_and_the_others_kept() -> None:
    # The 18766 server's job wrote to /proc/version: error=1 on its entry, 0 on "All clients".
    text = capture("randread-client-job-error-fio-3.33.json")
    results = aggregate_clients(split_clients(text, ["127.0.0.1,18765", "127.0.0.1,18766"], "fio.json"))
    assert [r.client.endpoint.port for r in results.per_client] == [18765]
    assert results.aggregates == []
    failure, withheld = results.errors
    assert isinstance(failure, ClientJobError) and failure.index == 2
    assert str(failure) == (
        "fio.json: client 2 (127.0.0.1:18766): job 'r' (group 0) failed with error 1 "
        "(EPERM: Operation not permitted)"
    )
    assert isinstance(withheld, AggregateWithheldError)
    assert "client 2 (127.0.0.1:18766) yielded no records" in str(withheld)
    records = client_records(results, **IDENTITY)
    assert [(r.client, r.ios) for r in records] == [("127.0.0.1:18765", 15273 + 15294)]


def test_a_missing_client_withholds_the_aggregate() -> None:
    text = capture("randread-client-unreachable-fio-3.33.json")
    results = aggregate_clients(split_clients(text, ["127.0.0.1,18765", "127.0.0.1,18799"]))
    assert isinstance(results.errors[0], MissingClientError) and isinstance(
        results.errors[1], AggregateWithheldError
    )
    assert len(results.per_client) == 1 and results.aggregates == []


def test_without_json_plus_bins_the_aggregate_has_no_percentiles_and_an_error_says_why() -> None:
    raw = document(RANDRW_333)
    for entry in raw["client_stats"]:
        if entry["port"] == 18766 and entry["jobname"] == "mix":
            for direction in ("read", "write"):
                del entry[direction]["lat_ns"]["bins"]
                del entry[direction]["clat_ns"]["bins"]
    results = aggregate_clients(split_clients(raw, CLIENTS_333, "fio.json"))
    (error,) = results.errors
    assert isinstance(error, ClientHistogramError) and error.index == 2
    assert str(error) == (
        "fio.json: client 2 (127.0.0.1:18766): no json+ latency bins for read (mix), write (mix): "
        "the aggregate's percentiles are left empty (run fio with --output-format=json+)"
    )
    assert results.aggregates and all(
        a.result.latency is not None and a.result.latency.p99_us is None for a in results.aggregates
    )
    # That client ran 2 jobs: its own records lack percentiles too (never averaged); the other keeps them.
    records = client_records(results, **IDENTITY)
    assert {(r.client_index, r.latency is not None and r.latency.p99_us is not None) for r in records} == {
        (1, True),
        (2, False),
        (None, False),
    }


def test_a_disagreement_with_fios_sum_is_named() -> None:
    raw = document(RANDRW_341)
    raw["client_stats"][-1]["read"]["total_ios"] += 1
    raw["client_stats"][-1]["write"]["lat_ns"]["percentile"]["99.000000"] += 1
    problems = all_clients_disagreements(aggregate_clients(split_clients(raw, CLIENTS_341)))
    assert len(problems) == 2
    assert problems[0].startswith("fio's All clients read: I/Os 65773.0, the aggregate 65772")
    assert problems[1].startswith("fio's All clients write: lat p99 11201 ns, the aggregate 11200 ns")

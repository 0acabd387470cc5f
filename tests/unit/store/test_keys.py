"""The single-table key functions: shapes, sort order, uniqueness and DynamoDB's key size limit."""

from __future__ import annotations

from typing import Any

import pytest
from tests.support.records import result_record

from storagebench.adapters.aws.dynamodb import DynamoResultsStore
from storagebench.analysis.regressions import stored_variant
from storagebench.results.records import ResultRecord
from storagebench.store import keys


def record(**extra: Any) -> ResultRecord:
    names = {"target_id": "data", "workload": "randread-4k", "profile": "fio-randread"}
    sizes = {"variant": {"iodepth": 32, "bs": "4k"}, "repetition": 2, "bytes": 1024, "runtime_s": 1.0}
    return result_record(**{**names, **sizes, **extra})


def test_run_config_and_suite_keys() -> None:
    assert keys.run_pk("r-1") == "RUN#r-1"
    assert keys.config_sk("alpha") == "CONFIG#alpha"
    assert keys.suite_pk("nightly") == "SUITE#nightly"
    assert keys.started_sk("2030-01-02T03:04:05Z", "r-1") == "2030-01-02T03:04:05Z#r-1"
    assert (keys.RUN, keys.ACTIVE) == ("RUN", "ACTIVE")


def test_started_keys_sort_by_time_then_run() -> None:
    """GSI1/GSI3 read newest first by sorting these strings: ISO UTC times must sort as times."""
    moments = ["2030-01-02T03:04:05Z", "2029-12-31T23:59:59Z", "2030-01-02T03:04:06Z", "2030-01-10T00:00:00Z"]
    ordered = sorted(keys.started_sk(m, "r") for m in moments)
    assert [k.split("#")[0] for k in ordered] == sorted(moments)
    assert keys.started_sk("2030-01-02T03:04:05Z", "a") < keys.started_sk("2030-01-02T03:04:05Z", "b")


def test_record_key_is_readable_and_names_what_repetitions_do_not_share() -> None:
    assert keys.record_key(record()) == "data#randread-4k#bs=4k,iodepth=32#run#read#-#r2"
    assert keys.record_key(record(variant={}, group=3)) == "data#randread-4k#-#run#read#3#r2"
    assert keys.result_sk("gp3", record()) == "RESULT#gp3#data#randread-4k#bs=4k,iodepth=32#run#read#-#r2"


@pytest.mark.parametrize(
    "change",
    [
        {"target_id": "other"},
        {"workload": "seqread"},
        {"variant": {"iodepth": 1, "bs": "4k"}},
        {"phase": "create"},
        {"direction": "write"},
        {"group": 1},
        {"repetition": 3},
    ],
)
def test_record_keys_differ_when_the_measurement_differs(change: dict[str, Any]) -> None:
    assert keys.record_key(record(**change)) != keys.record_key(record())


def test_record_key_ignores_what_is_measured_not_which_measurement() -> None:
    assert keys.record_key(record(iops=1.0, engine="dd", jobs=8)) == keys.record_key(record())


def test_a_long_record_key_is_cut_and_hashed_to_stay_unique_and_under_the_sort_key_limit() -> None:
    long_a = record(workload="w" * 2000)
    long_b = record(workload="w" * 1999 + "x")
    key_a, key_b = keys.record_key(long_a), keys.record_key(long_b)
    assert len(key_a) == 880 + 1 + 16 and key_a != key_b
    assert len(keys.result_sk("c" * 60, long_a).encode()) < 1024  # DynamoDB: sort keys up to 1,024 bytes


def test_series_keys_leave_out_config_target_group_and_repetition() -> None:
    """A series is one storage option's measurement across runs: configs and repetitions share it."""
    pk = keys.series_pk("c5.large/ebs:gp3:100GiB:xfs", record())
    assert pk == "SERIES#c5.large/ebs:gp3:100GiB:xfs#randread-4k#bs=4k,iodepth=32#run#read"
    assert (
        keys.series_pk("c5.large/ebs:gp3:100GiB:xfs", record(config_id="x", target_id="y", repetition=9))
        == pk
    )
    assert keys.series_pk("o", record(variant={})) == "SERIES#o#randread-4k#-#run#read"
    assert keys.series_sk("2030-01-02T03:04:05Z", "r-1", 3) == "2030-01-02T03:04:05Z#r-1#r3"


def test_series_sort_keys_fall_between_two_dates_exactly_for_runs_started_in_between() -> None:
    """Pattern 3's BETWEEN since AND until is the half-open range [since, until) of start times."""
    inside = keys.series_sk("2030-01-15T10:00:00Z", "r", 1)
    at_since = keys.series_sk("2030-01-01T00:00:00Z", "r", 1)
    at_until = keys.series_sk("2030-02-01T00:00:00Z", "r", 1)
    since, until = "2030-01-01T00:00:00Z", "2030-02-01T00:00:00Z"
    assert since <= inside <= until and since <= at_since <= until
    assert not at_until <= until  # a run started exactly at `until` is left out
    assert "2030-01-01" <= at_since <= "2030-01-31" and not inside <= "2030-01-15"  # dates alone


@pytest.mark.parametrize(
    "variant",
    [{}, {"iodepth": 32, "bs": "4k"}, {"numjobs": 16}, {"ratio": 1.0}, {"mix": 0.25, "z": "a", "a": 1}],
)
def test_the_adapter_builds_the_series_key_without_a_record(variant: dict[str, Any]) -> None:
    option = "m7g.large/efs:elastic"
    rec = record(variant=variant)
    expected = keys.series_pk(option, rec)
    assert DynamoResultsStore.series_partition(option, "randread-4k", variant, "run", "read") == expected
    spelled = expected.split("#")[3]
    assert DynamoResultsStore.series_partition(option, "randread-4k", spelled, "run", "read") == expected


def test_the_variant_spelling_survives_a_round_trip_through_the_record_key() -> None:
    """DynamoDB stores 1.0 as 1: the record key keeps the spelling the series key was built with."""
    rec = record(variant={"ratio": 1.0})
    read_back = ResultRecord.model_validate(
        {**rec.model_dump(mode="json"), "variant": {"ratio": 1}}
    )  # from_dynamo
    assert stored_variant(read_back, keys.record_key(rec)) == "ratio=1.0"
    assert stored_variant(read_back) == "ratio=1"  # without the record key: the lossy spelling
    assert stored_variant(read_back, "something-else") == "ratio=1"


def test_the_record_key_is_read_back_where_it_is_written() -> None:
    """The writer (record_key) and the reader (spelled_variant) of a key's layout live side by side."""
    rec = record(variant={"bs": "4k", "iodepth": 32}, group=2, repetition=3)
    parts = (rec.target_id, rec.workload, rec.phase, rec.direction, rec.group, rec.repetition)
    assert keys.spelled_variant(keys.record_key(rec), *parts) == "bs=4k,iodepth=32"
    other = record(variant={"bs": "4k"}, repetition=4)
    assert keys.spelled_variant(keys.record_key(other), *parts) is None  # another repetition's key
    long = record(variant={"name": "x" * 1000})  # cut and hashed: not a spelling to trust
    assert keys.spelled_variant(keys.record_key(long), *parts[:4], None, long.repetition) is None


def test_the_current_layouts_keys_keep_what_is_read_often_apart() -> None:
    """A run's partition holds configs and packed results only; points, histograms and the suite's
    digest live in partitions of their own, so reading a run never reads them."""
    assert keys.results_sk("gp3", "abc", 2) == "RESULTS#gp3#abc#002"
    assert keys.points_pk("r-1") == "POINTS#r-1"
    assert keys.histograms_pk("r-1") == "HISTOGRAMS#r-1"
    assert keys.detail_sk("gp3", "data#w#-#run#read#-#r1") == "gp3#data#w#-#run#read#-#r1"
    assert keys.digest_pk("nightly") == "DIGEST#nightly"
    assert (
        keys.digest_sk("2030-01-02T03:04:05Z", "r-1", "gp3", "abc#000")
        == "2030-01-02T03:04:05Z#r-1#gp3#abc#000"
    )
    # a digest item sorts within [<started>#<run>, <started>#<run>~]: the range the check reads
    assert keys.started_sk("2030-01-02T03:04:05Z", "r-1") < keys.digest_sk(
        "2030-01-02T03:04:05Z", "r-1", "a", "b"
    )
    assert keys.results_sk("gp3", "abc", 0).startswith(keys.RESULTS_PREFIX)
    assert not keys.results_sk("gp3", "abc", 0).startswith(keys.RESULT_PREFIX + "gp3")
    assert keys.LAYOUT == 2


def test_a_batch_id_depends_on_the_set_of_record_keys_only() -> None:
    assert keys.batch_id(["b", "a"]) == keys.batch_id(["a", "b"])
    assert keys.batch_id(["a"]) != keys.batch_id(["a", "b"])
    assert len(keys.batch_id(["a"])) == 12


def test_the_clients_of_a_step_and_their_aggregate_keep_a_key_and_a_series_each() -> None:
    aggregate = record(clients=2)
    first = record(client="10.0.1.5:8765", client_index=1)
    second = record(client="10.0.1.6:8765", client_index=2)
    stored = {keys.record_key(r) for r in (aggregate, first, second)}
    assert len(stored) == 3  # none overwrites another ("the last record wins" per key)
    assert keys.record_key(aggregate) == keys.record_key(record())  # single-client keys unchanged
    assert keys.record_key(first).endswith("bs=4k,iodepth=32,client=10.0.1.5:8765#run#read#-#r2")
    series = {keys.series_pk("c5.large/local:/mnt", r) for r in (aggregate, first, second)}
    assert len(series) == 3

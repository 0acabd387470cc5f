"""DynamoResultsStore on moto, on the table template.yaml defines."""

from __future__ import annotations

import random
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

import boto3
import pytest
from tests.support.records import stored_record
from tests.support.runs import run_summary, work_item

from storagebench.adapters.aws.dynamo.codec import (
    MAX_HISTOGRAM_BUCKETS,
    MAX_ITEM_BYTES,
    MAX_PACKED_BYTES,
    coarsen_histogram,
    item_size,
)
from storagebench.adapters.aws.dynamo.previous import PreviousLayoutStore
from storagebench.adapters.aws.dynamodb import DynamoResultsStore
from storagebench.core.errors import InvalidRequestError, ProvisioningError, ThrottledError
from storagebench.core.state import (
    ConfigResult,
    ConfigState,
    ErrorInfo,
    Resources,
    RunSummary,
)
from storagebench.results.records import HistogramBucket, ResultRecord
from storagebench.store import keys
from storagebench.store.models import decode_run

REGION = "us-east-1"
STARTED = "2030-01-02T03:04:05Z"


class FixedClock:
    def __init__(self) -> None:
        self.moment = datetime(2030, 1, 2, 4, 0, 0, tzinfo=UTC)

    def now(self) -> datetime:
        return self.moment


@pytest.fixture
def store(table: str) -> DynamoResultsStore:
    return DynamoResultsStore(boto3.client("dynamodb", region_name=REGION), table, clock=FixedClock())


def record(workload: str = "randread-4k", repetition: int = 1, **extra: Any) -> ResultRecord:
    percentiles = {"p50_us": 1037.0, "p99_us": 1400.5, "p999_us": 9110.0}
    fields = {"iops": 3012.25, "bw_mibps": 11.7666015625, "runtime_s": 300.004, "cpu_usr_pct": 1.5}
    about = {"started_at": STARTED, "raw": ["step-1/fio.json"], "labels": ["ebs"]}
    return stored_record(
        1061.8, percentiles, **{"workload": workload, "repetition": repetition, **fields, **about, **extra}
    )


def state(status_errors: list[ErrorInfo] | None = None) -> ConfigState:
    item = work_item("r1", "gp3", "weekly", REGION, STARTED, "2030-01-03T03:04:05Z")
    return ConfigState(
        item=item, resources=Resources(instance_id="i-1", launched_at=STARTED), errors=status_errors or []
    )


def summary(status: str = "SUCCEEDED") -> RunSummary:
    return run_summary(
        "r1",
        "weekly",
        STARTED,
        "2030-01-02T05:00:00Z",
        status=status,
        configs=[ConfigResult(run_id="r1", config_id="gp3", status="succeeded", records=2)],
        records=2,
    )


def _raw(store: DynamoResultsStore, pk: str, sk: str) -> dict[str, Any]:
    item = store.db.get_item(TableName=store.table, Key={"PK": {"S": pk}, "SK": {"S": sk}}).get("Item")
    assert item is not None
    return dict(item)


def _active(store: DynamoResultsStore) -> list[dict[str, Any]]:
    return list(
        store.db.query(
            TableName=store.table,
            IndexName="GSI3",
            KeyConditionExpression="GSI3PK = :a",
            ExpressionAttributeValues={":a": {"S": keys.ACTIVE}},
        )["Items"]
    )


# ------------------------------------------------------------------------ the table


def test_the_table_is_the_one_template_yaml_defines(
    store: DynamoResultsStore, template_table: dict[str, Any]
) -> None:
    described = store.db.describe_table(TableName=store.table)["Table"]
    assert described["KeySchema"] == template_table["KeySchema"]
    assert {i["IndexName"] for i in described["GlobalSecondaryIndexes"]} == {"GSI1", "GSI2", "GSI3"}
    assert template_table["BillingMode"] == "PAY_PER_REQUEST"


# ------------------------------------------------------------------------ runs


def test_start_run_is_idempotent_and_lists_the_run_as_active(store: DynamoResultsStore) -> None:
    request = {"name": "weekly", "configs": [{"id": "gp3", "ratio": 0.25}]}
    store.start_run("r1", "weekly", request, STARTED, "2030-01-03T03:04:05Z", ["gp3"])
    store.start_run("r1", "weekly", request, STARTED, "2030-01-03T03:04:05Z", ["gp3"])  # a retried Plan

    item = _raw(store, "RUN#r1", "RUN")
    assert item["GSI1PK"] == {"S": "SUITE#weekly"}
    assert item["GSI1SK"] == {"S": f"{STARTED}#r1"}
    assert [i["SK"]["S"] for i in _active(store)] == ["RUN"]
    run = store.get_run("r1")["run"]
    assert run["status"] == "RUNNING"
    assert run["request"] == request  # 0.25 came back a float, not a Decimal
    assert isinstance(run["request"]["configs"][0]["ratio"], float)
    assert run["configs"] == ["gp3"]


def test_a_finished_run_id_cannot_be_started_again(store: DynamoResultsStore) -> None:
    store.start_run("r1", "weekly", {}, STARTED, STARTED, ["gp3"])
    store.finish_run(summary())
    with pytest.raises(InvalidRequestError, match="SUCCEEDED"):
        store.start_run("r1", "weekly", {}, STARTED, STARTED, ["gp3"])


def test_finish_run_removes_it_from_the_in_progress_index(store: DynamoResultsStore) -> None:
    store.start_run("r1", "weekly", {}, STARTED, STARTED, ["gp3"])
    store.start_run("r2", "weekly", {}, STARTED, STARTED, ["gp3"])
    assert len(_active(store)) == 2

    store.finish_run(summary("PARTIAL"))

    item = _raw(store, "RUN#r1", "RUN")
    assert "GSI3PK" not in item and "GSI3SK" not in item
    assert item["GSI1PK"] == {"S": "SUITE#weekly"}  # still in the suite's history
    assert [i["PK"]["S"] for i in _active(store)] == ["RUN#r2"]
    run = store.get_run("r1")["run"]
    assert run["status"] == "PARTIAL"
    assert run["ended_at"] == "2030-01-02T05:00:00Z"
    assert run["records"] == 2
    assert run["config_results"][0]["config_id"] == "gp3"
    store.finish_run(summary("PARTIAL"))  # idempotent


def test_finishing_an_unknown_run_fails(store: DynamoResultsStore) -> None:
    with pytest.raises(ProvisioningError, match="never recorded"):
        store.finish_run(summary())


# ------------------------------------------------------------------------ configs


def test_put_config_keeps_the_first_time_of_each_status(store: DynamoResultsStore) -> None:
    clock = store.clock
    assert isinstance(clock, FixedClock)
    store.put_config(state(), "PROVISIONING")
    first = clock.moment
    clock.moment = first.replace(minute=5)
    store.put_config(state(), "PROVISIONING")  # a retry
    clock.moment = first.replace(minute=9)
    error = ErrorInfo(step="agent", error="States.HeartbeatTimeout", cause="silent")
    store.put_config(state([error]), "FAILING")

    item = _raw(store, "RUN#r1", "CONFIG#gp3")
    assert item["status"] == {"S": "FAILING"}
    assert item["at_PROVISIONING"] == {"S": "2030-01-02T04:00:00Z"}
    assert item["at_FAILING"] == {"S": "2030-01-02T04:09:00Z"}
    assert item["updated_at"] == {"S": "2030-01-02T04:09:00Z"}
    assert item["errors"]["L"][0]["M"]["error"] == {"S": "States.HeartbeatTimeout"}
    assert item["state"]["M"]["resources"]["M"]["instance_id"] == {"S": "i-1"}
    store.start_run("r1", "weekly", {}, STARTED, STARTED, ["gp3"])
    config = store.get_run("r1")["configs"][0]
    assert ConfigState.model_validate(config["state"]).errors == [error]


# ------------------------------------------------------------------------ results


def _partition(store: DynamoResultsStore, pk: str) -> list[dict[str, Any]]:
    return list(
        store.db.query(
            TableName=store.table,
            KeyConditionExpression="PK = :pk",
            ExpressionAttributeValues={":pk": {"S": pk}},
        )["Items"]
    )


def test_put_results_round_trips_records_with_decimals(store: DynamoResultsStore) -> None:
    store.start_run("r1", "weekly", {}, STARTED, STARTED, ["gp3"])
    records = [record(repetition=1), record(repetition=2, iops=2999.5, histogram=None, latency=None)]
    labels = {"storage_option": "m6i.large/ebs:gp3:100GiB:xfs", "suite": "weekly"}

    assert store.put_results("r1", "gp3", records, STARTED, labels) == 2
    assert store.put_results("r1", "gp3", records, STARTED, labels) == 2  # idempotent: same keys

    packed = [i for i in _partition(store, "RUN#r1") if i["SK"]["S"].startswith("RESULTS#")]
    assert len(packed) == 1 and "B" in packed[0]["records"] and packed[0]["count"] == {"N": "2"}
    point = _raw(store, "POINTS#r1", keys.detail_sk("gp3", keys.record_key(records[0])))
    assert point["GSI2PK"] == {
        "S": "SERIES#m6i.large/ebs:gp3:100GiB:xfs#randread-4k#bs=4k,iodepth=32#run#read"
    }
    assert point["GSI2SK"] == {"S": f"{STARTED}#r1#r1"}
    assert "record" not in point and "B" in point["doc"]
    results = store.get_run("r1")["results"]
    assert len(results) == 2
    assert all("histogram" not in r["record"] for r in results)  # read only when asked for
    whole = store.get_run("r1", histograms=True)["results"]
    back = sorted((ResultRecord.model_validate(r["record"]) for r in whole), key=lambda r: r.repetition)
    assert back == records  # every float, int, nested model and the histogram survive the round trip
    assert all(not isinstance(v, Decimal) for r in results for v in r["record"].values())
    assert results[0]["labels"] == labels
    assert results[0]["record_key"] == keys.record_key(records[0])

    series = store.db.query(
        TableName=store.table,
        IndexName="GSI2",
        KeyConditionExpression="GSI2PK = :s",
        ExpressionAttributeValues={":s": point["GSI2PK"]},
    )["Items"]
    assert len(series) == 2
    assert len(_partition(store, "HISTOGRAMS#r1")) == 1  # the record without a histogram has none


def test_results_without_a_storage_option_stay_out_of_the_series_index(store: DynamoResultsStore) -> None:
    store.put_results("r1", "gp3", [record()], STARTED, {"suite": "weekly"})
    assert _partition(store, "POINTS#r1") == []
    assert _partition(store, "DIGEST#weekly") == []  # no series to compare either
    assert len(_partition(store, "HISTOGRAMS#r1")) == 1


def test_put_results_writes_the_suites_digest(store: DynamoResultsStore) -> None:
    labels = {"storage_option": "x", "suite": "weekly"}
    store.put_results("r1", "gp3", [record(repetition=1), record(repetition=2, iops=10.0)], STARTED, labels)
    store.put_results("r1", "gp3", [record(repetition=1), record(repetition=2, iops=10.0)], STARTED, labels)

    digests = store.series_digests("weekly", STARTED, keys.started_sk(STARTED, "r1~"))
    assert len(digests) == 1  # a retried write rewrites the same item
    assert digests[0]["run_id"] == "r1" and digests[0]["storage_option"] == "x"
    entries = sorted(digests[0]["series"], key=lambda e: e[5])
    assert [e[:6] for e in entries] == [
        ["randread-4k", "bs=4k,iodepth=32", "run", "read", None, 1],
        ["randread-4k", "bs=4k,iodepth=32", "run", "read", None, 2],
    ]
    assert entries[1][6]["iops"] == 10.0 and entries[0][6]["lat_mean_us"] == 1061.8
    assert store.series_digests("weekly", "2031", "2032") == []
    with pytest.raises(ValueError, match="before until"):
        store.series_digests("weekly", "2031", "2030")


def test_a_rewrite_with_other_records_wins_per_record_key(store: DynamoResultsStore) -> None:
    store.start_run("r1", "weekly", {}, STARTED, STARTED, ["gp3"])
    store.put_results("r1", "gp3", [record(repetition=1), record(repetition=2)], STARTED, {})
    store.clock.moment = store.clock.moment.replace(hour=5)  # type: ignore[attr-defined]
    store.put_results("r1", "gp3", [record(repetition=2, iops=1.0), record(repetition=3)], STARTED, {})

    results = store.get_run("r1")["results"]
    assert [(r["record"]["repetition"], r["record"]["iops"]) for r in results] == [
        (1, 3012.25),
        (2, 1.0),
        (3, 3012.25),
    ]


def test_put_results_batches_by_25_and_dedupes_keys(store: DynamoResultsStore, call_log: Any) -> None:
    log = call_log(store.db)
    records = [record(workload=f"w{i:02d}") for i in range(60)] + [record(workload="w00")]
    assert store.put_results("r1", "gp3", records, STARTED, {"storage_option": "x"}) == 60
    sizes = [len(p["RequestItems"][store.table]) for name, p in log.calls if name == "BatchWriteItem"]
    assert sizes == [25, 25, 25, 25, 21]  # 1 packed item, 60 points, 60 histograms


def test_large_records_are_bounded_well_under_the_item_limit(store: DynamoResultsStore) -> None:
    huge = record(
        histogram=[HistogramBucket(le_us=float(i + 1), count=1) for i in range(20_000)],
        raw=[f"step-{i}/fio-{'x' * 40}.json" for i in range(5_000)],
    )
    store.start_run("r1", "weekly", {}, STARTED, STARTED, ["gp3"])
    store.put_results("r1", "gp3", [huge], STARTED, {"storage_option": "x"})

    stored = store.get_run("r1", histograms=True)["results"][0]
    histogram = stored["record"]["histogram"]
    assert len(histogram) <= MAX_HISTOGRAM_BUCKETS
    assert sum(b["count"] for b in histogram) == 20_000  # coarser, nothing lost
    assert histogram[-1]["le_us"] == 20_000.0
    assert len(stored["record"]["raw"]) == 200
    assert any("histogram coarsened" in note for note in stored["bounded"])
    for pk in ("RUN#r1", "POINTS#r1", "HISTOGRAMS#r1"):
        sizes = [item_size(store._plain(item)) for item in _partition(store, pk)]
        assert sizes and max(sizes) < MAX_ITEM_BYTES < 400_000


def test_a_run_of_many_records_packs_in_parts_under_the_budget(store: DynamoResultsStore) -> None:
    noise = random.Random(7)
    many = [
        record(workload=f"w{i:04d}", raw=[f"{noise.getrandbits(256):064x}" for _ in range(150)])
        for i in range(300)
    ]
    store.start_run("r1", "weekly", {}, STARTED, STARTED, ["gp3"])
    store.put_results("r1", "gp3", many, STARTED, {})
    parts = [i for i in _partition(store, "RUN#r1") if i["SK"]["S"].startswith("RESULTS#")]
    assert len(parts) > 1 and all(len(p["records"]["B"]) <= MAX_PACKED_BYTES for p in parts)
    assert len(store.get_run("r1")["results"]) == 300


def test_a_damaged_packed_item_is_named_not_fatal(store: DynamoResultsStore) -> None:
    store.start_run("r1", "weekly", {}, STARTED, STARTED, ["gp3"])
    store.put_results("r1", "gp3", [record()], STARTED, {})
    store.db.put_item(
        TableName=store.table,
        Item={
            "PK": {"S": "RUN#r1"},
            "SK": {"S": "RESULTS#gp3#bad#000"},
            "config_id": {"S": "gp3"},
            "records": {"B": b"not zlib"},
        },
    )
    document = decode_run(store.get_run("r1"))
    assert len(document.results) == 1
    assert "RESULTS#gp3#bad#000" in document.notes[0]


def test_runs_of_the_previous_layout_still_read(table: str) -> None:
    client = boto3.client("dynamodb", region_name=REGION)
    previous = PreviousLayoutStore(client, table, clock=FixedClock())
    store = DynamoResultsStore(client, table, clock=FixedClock())
    labels = {"storage_option": "x", "suite": "weekly"}
    previous.start_run("old", "weekly", {}, STARTED, STARTED, ["gp3"])
    previous.put_results("old", "gp3", [record(repetition=1), record(repetition=2)], STARTED, labels)
    assert "layout" not in _raw(store, "RUN#old", "RUN")
    assert _raw(store, "RUN#old", keys.result_sk("gp3", record()))["record"]["M"]["histogram"]

    run = store.get_run("old")
    assert run["run"].get("layout") is None and len(run["results"]) == 2
    assert ResultRecord.model_validate(run["results"][0]["record"]) == record(repetition=1)
    assert store.get_run("old", histograms=True)["results"] == run["results"]
    points = store.metric_history("x", "randread-4k", "bs=4k,iodepth=32", "run", "read", "2030")
    projected = store.metric_history(
        "x", "randread-4k", "bs=4k,iodepth=32", "run", "read", "2030", fields=["iops"]
    )
    assert [p["repetition"] for p in points] == [2, 1]
    assert set(projected[0]["record"]) == {"iops", "repetition", "group"}  # no histogram read
    page, _ = store.get_run_page("old")
    assert len(page["results"]) == 2

    store.start_run("new", "weekly", {}, "2030-01-03T00:00:00Z", STARTED, ["gp3"])
    store.put_results("new", "gp3", [record(repetition=1)], "2030-01-03T00:00:00Z", labels)
    assert _raw(store, "RUN#new", "RUN")["layout"] == {"N": "2"}
    both = store.metric_history(
        "x", "randread-4k", "bs=4k,iodepth=32", "run", "read", "2030", fields=["iops"]
    )
    assert [(p["run_id"], set(p["record"])) for p in both] == [
        ("new", {"iops", "repetition", "group"}),
        ("old", {"iops", "repetition", "group"}),
        ("old", {"iops", "repetition", "group"}),
    ]


def test_coarsening_keeps_bounds_and_counts() -> None:
    buckets = [{"le_us": float(i), "count": i} for i in range(1, 8)]
    merged = coarsen_histogram(buckets, 4)
    assert merged == [
        {"le_us": 2.0, "count": 3},
        {"le_us": 4.0, "count": 7},
        {"le_us": 6.0, "count": 11},
        {"le_us": 7.0, "count": 7},
    ]


def test_unprocessed_items_are_retried_then_reported(stack_env: dict[str, str]) -> None:
    class Flaky:
        def __init__(self, failures: int) -> None:
            self.failures = failures
            self.calls = 0

        def batch_write_item(self, RequestItems: dict[str, Any]) -> dict[str, Any]:  # noqa: N803 - boto3's name
            self.calls += 1
            if self.calls <= self.failures:
                return {"UnprocessedItems": RequestItems}
            return {"UnprocessedItems": {}}

    slept: list[float] = []
    flaky = Flaky(2)
    store = DynamoResultsStore(flaky, "t", sleep=slept.append)
    assert store.put_results("r1", "gp3", [record()], STARTED, {}) == 1
    assert flaky.calls == 3
    assert slept == [0.05, 0.1]

    stuck = DynamoResultsStore(Flaky(100), "t", sleep=slept.append)
    with pytest.raises(ThrottledError, match="unprocessed"):
        stuck.put_results("r1", "gp3", [record()], STARTED, {})


# ------------------------------------------------------------------------ reads


def test_get_run_reads_everything_in_one_paginated_query(table: str, call_log: Any) -> None:
    store = DynamoResultsStore(
        boto3.client("dynamodb", region_name=REGION), table, clock=FixedClock(), page_size=4
    )
    store.start_run("r1", "weekly", {}, STARTED, STARTED, ["gp3", "io2"])
    for config in ("gp3", "io2"):
        store.put_config(
            state().model_copy(update={"item": state().item.model_copy(update={"config_id": config})}),
            "COLLECTED",
        )
        store.put_results(
            "r1",
            config,
            [record(workload=f"w{i}", config_id=config) for i in range(5)],
            STARTED,
            {"storage_option": config},
        )
    store.start_run("r2", "weekly", {}, STARTED, STARTED, ["gp3"])
    store.put_results("r2", "gp3", [record()], STARTED, {})
    log = call_log(store.db)

    run = store.get_run("r1")

    assert run["run"]["run_id"] == "r1"
    assert sorted(c["config_id"] for c in run["configs"]) == ["gp3", "io2"]
    assert len(run["results"]) == 10
    assert log.names == ["Query"] * 2  # 5 items (run, 2 configs, 2 packed) in pages of 4, one query
    assert all(params["KeyConditionExpression"] == "PK = :pk" for _, params in log.calls)
    assert "PK" not in run["run"] and "GSI1PK" not in run["run"]


def test_get_run_of_an_unknown_run_is_a_key_error(store: DynamoResultsStore) -> None:
    with pytest.raises(KeyError):
        store.get_run("nope")

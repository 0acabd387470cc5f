"""The results store's four access patterns, pagination, idempotency and item sizes, on two engines.

Every test runs twice, with the same code: on moto (``mock_aws``) and on DynamoDB Local 2.6.1,
the real engine (started once per session under a temporary root; its jars come from the
project's ``.storagebench/dynamodb-local`` cache, so nothing is downloaded when they are there).
Each test gets its own table built from template.yaml (``Template.table_kwargs``). Every
operation the client sends is logged, and no test may send a Scan.
"""

from __future__ import annotations

import shutil
import tempfile
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from tests.support import runs
from tests.support.moto_env import moto_credentials
from tests.support.runs import run_summary

pytest.importorskip("boto3", reason="boto3 is not installed (the aws extra)")
pytest.importorskip("moto", reason="moto is not installed (the local extra)")
pytest.importorskip("yaml", reason="PyYAML is not installed (the local extra)")

import boto3
from moto import mock_aws
from tests.support.records import stored_record

from storagebench.adapters.aws.dynamo.codec import MAX_ITEM_BYTES, item_size
from storagebench.adapters.aws.dynamo.previous import PreviousLayoutStore
from storagebench.adapters.aws.dynamodb import DynamoResultsStore
from storagebench.analysis.regressions import compute_regressions
from storagebench.core.errors import InvalidRequestError, ProvisioningError
from storagebench.core.regression import INSUFFICIENT, Regression
from storagebench.core.state import ConfigResult, ConfigState, Resources, RunSummary, WorkItem
from storagebench.results.records import HistogramBucket, ResultRecord
from storagebench.store import keys
from storagebench.workflow.ports import Services
from storagebench.workflow.steps.finalize import finalize
from storagebench_local.adapters.artifacts import LocalArtifacts
from storagebench_local.dynamodb_local import (
    DYNAMODB_LOCAL_VERSION,
    DynamoDBLocal,
    DynamoDBLocalUnavailable,
)
from storagebench_local.template import Template

REPO = Path(__file__).resolve().parents[3]
CACHE = REPO / ".storagebench" / "dynamodb-local"
REGION = "us-east-1"
OPTION = "c5.large/ebs:gp3:100GiB:xfs"
T0 = datetime(2030, 1, 1, 2, 0, 0, tzinfo=UTC)


def iso(moment: datetime) -> str:
    return moment.astimezone(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


def day(n: int, hours: int = 0) -> str:
    return iso(T0 + timedelta(days=n, hours=hours))


# ============================================================================ engines


class CallLog:
    """The operations a client sent (botocore's provide-client-params event), in order."""

    def __init__(self, client: Any) -> None:
        self.names: list[str] = []
        client.meta.events.register("provide-client-params.dynamodb.*", self._record)

    def _record(self, model: Any, **_: Any) -> None:
        self.names.append(model.name)

    def mark(self) -> int:
        return len(self.names)

    def since(self, mark: int) -> list[str]:
        return self.names[mark:]


class FixedClock:
    def now(self) -> datetime:
        return datetime(2031, 1, 1, tzinfo=UTC)


def _cached() -> bool:
    return (CACHE / "lib" / f".complete-{DYNAMODB_LOCAL_VERSION}").is_file()


@pytest.fixture(scope="session")
def dynamodb_local(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DynamoDBLocal]:
    """One DynamoDB Local for the session, its data under a temporary root, its jars cached."""
    if shutil.which("java") is None:
        pytest.skip(
            "java is not installed: DynamoDB Local needs Java 17 (apt-get install openjdk-17-jre-headless)"
        )
    if shutil.which("mvn") is None and not _cached():
        pytest.skip(
            f"mvn is not installed and DynamoDB Local is not cached in {CACHE} (apt-get install maven)"
        )
    server = DynamoDBLocal(tmp_path_factory.mktemp("dynamodb-local"), cache_dir=CACHE)
    try:
        server.start()
    except DynamoDBLocalUnavailable as error:
        pytest.skip(f"DynamoDB Local cannot run here ({error.missing}): {error}")
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(params=["moto", "dynamodb-local"])
def engine(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[str, Any]]:
    for name in ("AWS_PROFILE", "AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_DYNAMODB"):
        monkeypatch.delenv(name, raising=False)
    if request.param == "moto":
        moto_credentials(monkeypatch, REGION)
        with mock_aws():
            yield "moto", boto3.client("dynamodb", region_name=REGION)
    else:
        server: DynamoDBLocal = request.getfixturevalue("dynamodb_local")
        yield "dynamodb-local", server.client()


@pytest.fixture
def client(engine: tuple[str, Any]) -> Any:
    return engine[1]


@pytest.fixture
def calls(client: Any) -> Iterator[CallLog]:
    log = CallLog(client)
    yield log
    assert "Scan" not in log.names, "the store must answer every access pattern with Query"


@pytest.fixture
def table(client: Any, calls: CallLog) -> Iterator[str]:
    name = f"results-{uuid.uuid4().hex[:12]}"
    client.create_table(**Template(REPO / "template.yaml").table_kwargs("ResultsTable", name))
    client.get_waiter("table_exists").wait(TableName=name, WaiterConfig={"Delay": 0.1, "MaxAttempts": 100})
    yield name
    client.delete_table(TableName=name)


@pytest.fixture
def store(client: Any, table: str) -> DynamoResultsStore:
    return DynamoResultsStore(client, table, clock=FixedClock())


# ============================================================================ data


def record(
    workload: str = "randread-4k",
    repetition: int = 1,
    iops: float = 1000.0,
    mean_us: float = 500.0,
    **extra: Any,
) -> ResultRecord:
    percentiles = {"p50_us": mean_us * 0.97, "p95_us": mean_us * 1.2, "p99_us": mean_us * 1.4}
    measured = {"iops": iops, "bw_mibps": iops * 4 / 1024}
    identity = {"target_id": "data", "workload": workload, "repetition": repetition}
    return stored_record(mean_us, percentiles, **{**identity, **measured, **extra})


def work_item(
    run_id: str, config_id: str = "gp3", suite: str = "nightly", started: str | None = None
) -> WorkItem:
    started = started or day(0)
    return runs.work_item(run_id, config_id, suite, REGION, started, started)


def config_state(run_id: str, config_id: str = "gp3") -> ConfigState:
    return ConfigState(item=work_item(run_id, config_id), resources=Resources(instance_id="i-1"))


def start(store: DynamoResultsStore, run_id: str, started: str, suite: str = "nightly") -> None:
    store.start_run(run_id, suite, {"name": suite}, started, started, ["gp3"])


def finish(store: DynamoResultsStore, run_id: str, started: str, suite: str = "nightly") -> RunSummary:
    summary = run_summary(
        run_id,
        suite,
        started,
        started,
        configs=[ConfigResult(run_id=run_id, config_id="gp3", status="succeeded", records=1)],
        records=1,
    )
    store.finish_run(summary)
    return summary


def measured_run(
    store: DynamoResultsStore,
    run_id: str,
    started: str,
    records: list[ResultRecord],
    suite: str = "nightly",
    option: str = OPTION,
    finished: bool = True,
) -> None:
    start(store, run_id, started, suite)
    store.put_results(run_id, "gp3", records, started, {"storage_option": option, "suite": suite})
    if finished:
        finish(store, run_id, started, suite)


def all_pages(fetch: Any, limit: int) -> tuple[list[Any], int]:
    """Every item of a paged query and how many pages it took."""
    found: list[Any] = []
    cursor: str | None = None
    pages = 0
    while True:
        page, cursor = fetch(limit=limit, cursor=cursor)
        pages += 1
        found.extend(page)
        assert len(page) <= limit
        if cursor is None:
            return found, pages
        assert pages < 1000


# ============================================================================ pattern 1


def test_pattern_1_a_run_with_its_configs_and_results_is_one_query(
    store: DynamoResultsStore, calls: CallLog
) -> None:
    start(store, "r1", day(0))
    store.put_config(config_state("r1", "gp3"), "RUNNING")
    store.put_config(config_state("r1", "io2"), "RUNNING")
    records = [record(workload=f"w{n}", repetition=rep) for n in range(4) for rep in (1, 2)]
    assert store.put_results("r1", "gp3", records, day(0), {"storage_option": OPTION}) == 8
    start(store, "r2", day(1))  # a neighbour partition, never read
    store.put_results("r2", "gp3", [record()], day(1), {"storage_option": OPTION})

    mark = calls.mark()
    run = store.get_run("r1")
    assert calls.since(mark) == ["Query"]
    assert run["run"]["run_id"] == "r1" and run["run"]["status"] == "RUNNING"
    assert sorted(c["config_id"] for c in run["configs"]) == ["gp3", "io2"]
    assert len(run["results"]) == 8
    assert {r["record_key"] for r in run["results"]} == {keys.record_key(r) for r in records}
    assert run["results"][0]["record"]["latency"]["mean_us"] == 500.0
    assert not any(k in run["run"] for k in ("PK", "SK", "GSI1PK", "GSI3SK"))
    with pytest.raises(KeyError):
        store.get_run("nope")


def test_pattern_1_paged_run_first_then_everything_once(store: DynamoResultsStore, calls: CallLog) -> None:
    start(store, "r1", day(0))
    store.put_config(config_state("r1", "gp3"), "COLLECTED")
    store.put_config(config_state("r1", "io2"), "COLLECTED")
    records = [record(workload=f"w{n}") for n in range(7)]
    store.put_results("r1", "gp3", records, day(0), {"storage_option": OPTION})

    pages: list[dict[str, Any]] = []
    cursor: str | None = None
    mark = calls.mark()
    while True:
        page, cursor = store.get_run_page("r1", cursor=cursor, limit=3)
        pages.append(page)
        if cursor is None:
            break
    assert set(calls.since(mark)) == {"Query"}
    assert len(pages) == 2  # 1 run + 2 configs + 1 item packing the 7 results, 3 items per page
    assert pages[0]["run"]["run_id"] == "r1" and all(p["run"] is None for p in pages[1:])
    results = [r["record_key"] for p in pages for r in p["results"]]
    assert sorted(results) == sorted(keys.record_key(r) for r in records)
    assert len(results) == len(set(results))
    assert sorted(c["config_id"] for p in pages for c in p["configs"]) == ["gp3", "io2"]
    with pytest.raises(KeyError):
        store.get_run_page("nope")


# ============================================================================ pattern 2


def test_pattern_2_latest_runs_of_a_suite_newest_first(store: DynamoResultsStore, calls: CallLog) -> None:
    for n in range(7):
        start(store, f"n{n}", day(n), "nightly")
    for n in range(3):
        start(store, f"w{n}", day(n, hours=1), "weekly")

    mark = calls.mark()
    latest = store.list_runs("nightly", limit=3)
    assert calls.since(mark) == ["Query"]
    assert [r["run_id"] for r in latest] == ["n6", "n5", "n4"]
    assert [r["run_id"] for r in store.list_runs("weekly")] == ["w2", "w1", "w0"]
    assert store.list_runs("never") == []

    everything, pages = all_pages(lambda **kw: store.list_runs_page("nightly", **kw), limit=2)
    assert [r["run_id"] for r in everything] == [f"n{n}" for n in range(6, -1, -1)]
    assert pages >= 4
    first, cursor = store.list_runs_page("nightly", limit=7)
    assert len(first) == 7
    if cursor is not None:  # DynamoDB may hand a cursor back at the very end: its page is empty
        assert store.list_runs_page("nightly", limit=7, cursor=cursor) == ([], None)
    assert set(calls.since(mark)) == {"Query"}


# ============================================================================ pattern 3


def test_pattern_3_one_metric_over_a_date_range(store: DynamoResultsStore, calls: CallLog) -> None:
    for n in range(6):  # a run a day, two repetitions each
        reps = [record(repetition=rep, iops=1000.0 + n * 10 + rep) for rep in (1, 2)]
        measured_run(store, f"n{n}", day(n), reps)
    measured_run(store, "x0", day(2, hours=1), [record(iops=5.0)], option="other-option")
    measured_run(store, "x1", day(3, hours=1), [record(workload="seqread", iops=5.0)])

    mark = calls.mark()
    points = store.metric_history(
        OPTION, "randread-4k", {"iodepth": 32, "bs": "4k"}, "run", "read", day(1), day(4)
    )
    assert calls.since(mark) == ["Query"]
    assert [(p["run_id"], p["repetition"]) for p in points] == [
        ("n3", 2),
        ("n3", 1),
        ("n2", 2),
        ("n2", 1),
        ("n1", 2),
        ("n1", 1),
    ]  # newest first; the run started at `until` is left out, the one at `since` is in
    assert points[0]["started_at"] == day(3) and points[0]["config_id"] == "gp3"
    assert points[0]["record"]["iops"] == 1032.0
    assert points[0]["labels"]["storage_option"] == OPTION

    oldest_first = store.metric_history(
        OPTION, "randread-4k", "bs=4k,iodepth=32", "run", "read", day(0), newest_first=False
    )
    assert [p["run_id"] for p in oldest_first][::2] == ["n0", "n1", "n2", "n3", "n4", "n5"]
    dates = store.metric_history(
        OPTION, "randread-4k", "bs=4k,iodepth=32", "run", "read", "2030-01-02", "2030-01-04"
    )
    assert {p["run_id"] for p in dates} == {"n1", "n2"}
    assert (
        len(store.metric_history(OPTION, "randread-4k", "bs=4k,iodepth=32", "run", "read", day(0), limit=3))
        == 3
    )

    paged, pages = all_pages(
        lambda **kw: store.metric_history_page(
            OPTION, "randread-4k", "bs=4k,iodepth=32", "run", "read", day(0), day(9), **kw
        ),
        limit=5,
    )
    assert len(paged) == 12 and pages >= 3
    assert len({(p["run_id"], p["repetition"]) for p in paged}) == 12
    projected = store.metric_history(
        OPTION, "randread-4k", "bs=4k,iodepth=32", "run", "read", day(3), day(4), fields=["iops", "latency"]
    )
    assert [(p["run_id"], p["repetition"]) for p in projected] == [("n3", 2), ("n3", 1)]
    assert set(projected[0]["record"]) <= {"iops", "latency", "repetition", "group"}
    assert projected[0]["record"]["iops"] == 1032.0 and projected[0]["record"]["latency"]["mean_us"] == 500.0
    assert projected[0]["labels"]["storage_option"] == OPTION and projected[0]["started_at"] == day(3)
    with pytest.raises(ValueError, match="before since"):
        store.metric_history(OPTION, "randread-4k", "-", "run", "read", day(4), day(1))
    assert set(calls.since(mark)) == {"Query"}


def test_pattern_3_suite_filter_still_fills_pages(store: DynamoResultsStore, calls: CallLog) -> None:
    for n in range(5):
        measured_run(store, f"n{n}", day(n), [record(iops=1000.0)], suite="nightly")
        measured_run(store, f"h{n}", day(n, hours=1), [record(iops=1.0)], suite="hourly")
    mark = calls.mark()
    page, cursor = store.metric_history_page(
        OPTION, "randread-4k", "bs=4k,iodepth=32", "run", "read", day(0), limit=3, suite="nightly"
    )
    assert [p["run_id"] for p in page] == ["n4", "n3", "n2"] and cursor is not None
    rest, _ = store.metric_history_page(
        OPTION,
        "randread-4k",
        "bs=4k,iodepth=32",
        "run",
        "read",
        day(0),
        limit=3,
        cursor=cursor,
        suite="nightly",
    )
    assert [p["run_id"] for p in rest] == ["n1", "n0"]
    assert set(calls.since(mark)) == {"Query"}


# ============================================================================ pattern 4


def test_pattern_2_carries_each_configs_cost_delta_and_verdict(store: DynamoResultsStore) -> None:
    economics = {
        "baseline": "gp3",
        "run_cost_usd": 0.04,
        "configs": [
            {"id": "gp3", "monthly_usd": 505.04, "delta_monthly_pct": 0.0, "verdict": "baseline"},
            {
                "id": "io1",
                "monthly_usd": 769.54,
                "delta_monthly_pct": 52.37,
                "verdict": "52 % more expensive",
            },
        ],
    }
    measured_run(store, "priced", day(1), series_records(1))
    store.record_economics("priced", economics)
    store.record_economics("priced", economics)  # a retried Finalize: same item, same content
    (latest,) = store.list_runs("nightly", 1)
    assert latest["run_id"] == "priced" and latest["economics"] == economics
    assert store.get_run("priced")["run"]["economics"] == economics
    with pytest.raises(ProvisioningError, match="never recorded"):
        store.record_economics("no-such-run", economics)
    with pytest.raises(ValueError, match="over half the item budget"):
        store.record_economics("priced", {"configs": [{"verdict": "x" * MAX_ITEM_BYTES}]})


def test_pattern_4_runs_in_progress_and_finish_run_empties_gsi3(
    store: DynamoResultsStore, calls: CallLog
) -> None:
    for n in range(4):
        start(store, f"r{n}", day(n))
    mark = calls.mark()
    assert [r["run_id"] for r in store.runs_in_progress()] == ["r3", "r2", "r1", "r0"]
    assert calls.since(mark) == ["Query"]
    everything, _ = all_pages(store.runs_in_progress_page, limit=3)
    assert [r["run_id"] for r in everything] == ["r3", "r2", "r1", "r0"]

    finish(store, "r1", day(1))
    finish(store, "r3", day(3))
    assert [r["run_id"] for r in store.runs_in_progress()] == ["r2", "r0"]
    for n in (0, 2):
        finish(store, f"r{n}", day(n))
    assert store.runs_in_progress() == []
    assert store.runs_in_progress_page() == ([], None)
    raw = store.db.get_item(TableName=store.table, Key={"PK": {"S": "RUN#r1"}, "SK": {"S": "RUN"}})["Item"]
    assert "GSI3PK" not in raw and "GSI3SK" not in raw and raw["GSI1PK"] == {"S": "SUITE#nightly"}
    assert [r["status"] for r in store.list_runs("nightly")] == ["SUCCEEDED"] * 4


# ============================================================================ cursors


def test_a_bad_cursor_is_a_clear_value_error_naming_it(store: DynamoResultsStore) -> None:
    for n in range(3):
        start(store, f"n{n}", day(n), "nightly")
        start(store, f"w{n}", day(n), "weekly")
    _, nightly = store.list_runs_page("nightly", limit=1)
    _, active = store.runs_in_progress_page(limit=1)
    assert nightly is not None and active is not None
    for bad in ("not-a-cursor!", "e30", nightly[:-4], "!" * 300):
        with pytest.raises(ValueError, match="invalid pagination cursor") as caught:
            store.list_runs_page("nightly", limit=1, cursor=bad)
        assert repr(bad[:77])[1:-1] in str(caught.value)
    with pytest.raises(ValueError, match="another query"):
        store.list_runs_page("weekly", limit=1, cursor=nightly)  # another suite's cursor
    with pytest.raises(ValueError, match="GSI1"):
        store.list_runs_page("nightly", limit=1, cursor=active)  # another index's cursor
    with pytest.raises(ValueError, match="limit"):
        store.list_runs_page("nightly", limit=0)
    page, _ = store.list_runs_page("nightly", limit=1, cursor=nightly)
    assert [r["run_id"] for r in page] == ["n1"]


# ============================================================================ writes


def test_writes_are_idempotent(store: DynamoResultsStore, calls: CallLog) -> None:
    start(store, "r1", day(0))
    start(store, "r1", day(0))  # a retried Plan
    records = [record(repetition=rep) for rep in (1, 2, 3)]
    for _ in range(2):  # a retried Collect
        assert store.put_results("r1", "gp3", records, day(0), {"storage_option": OPTION}) == 3
    store.put_results("r1", "gp3", [records[0], records[0]], day(0), {"storage_option": OPTION})
    for _ in range(2):
        store.put_config(config_state("r1"), "COLLECTED")

    raw = store.db.query(
        TableName=store.table,
        KeyConditionExpression="PK = :pk",
        ExpressionAttributeValues={":pk": {"S": "RUN#r1"}},
    )["Items"]
    sorts = sorted(i["SK"]["S"] for i in raw)
    batches = [keys.batch_id([keys.record_key(r) for r in chosen]) for chosen in (records, records[:1])]
    assert sorts == ["CONFIG#gp3", *sorted(keys.results_sk("gp3", b, 0) for b in batches), "RUN"]
    assert len(store.get_run("r1")["results"]) == 3  # one document per record key
    assert len(store.list_runs("nightly")) == 1 and len(store.runs_in_progress()) == 1
    assert len(store.metric_history(OPTION, "randread-4k", "bs=4k,iodepth=32", "run", "read", day(0))) == 3
    finish(store, "r1", day(0))
    finish(store, "r1", day(0))  # a retried Finalize
    with pytest.raises(InvalidRequestError, match="cannot be reused"):
        start(store, "r1", day(0))


def test_a_result_is_stored_before_the_config_status_changes(store: DynamoResultsStore) -> None:
    """Collect stores records first, then moves the config to COLLECTED: a crash in between keeps them."""
    start(store, "r1", day(0))
    store.put_config(config_state("r1"), "RUNNING")
    store.put_results("r1", "gp3", [record()], day(0), {"storage_option": OPTION})
    run = store.get_run("r1")
    assert [c["status"] for c in run["configs"]] == ["RUNNING"]
    assert len(run["results"]) == 1
    store.put_config(config_state("r1"), "COLLECTED")
    run = store.get_run("r1")
    (config,) = run["configs"]
    assert config["status"] == "COLLECTED" and "at_RUNNING" in config and "at_COLLECTED" in config
    assert len(run["results"]) == 1


@pytest.mark.parametrize("buckets", [1_856, 40_000])
def test_a_record_with_a_full_histogram_fits_an_item(store: DynamoResultsStore, buckets: int) -> None:
    """fio's full-resolution histogram has 1,856 bins; a merged one can hold many more."""
    histogram = [HistogramBucket(le_us=1.0 + i * 0.731, count=i % 97 + 1) for i in range(buckets)]
    big = record(histogram=histogram, raw=[f"step-{i}/fio.json" for i in range(500)])
    start(store, "r1", day(0))
    assert store.put_results("r1", "gp3", [big], day(0), {"storage_option": OPTION}) == 1
    (without,) = store.get_run("r1")["results"]
    assert "histogram" not in without["record"]
    (stored,) = store.get_run("r1", histograms=True)["results"]
    kept = stored["record"]["histogram"]
    assert len(kept) <= 512 and sum(b["count"] for b in kept) == sum(b.count for b in histogram)
    assert kept[-1]["le_us"] == histogram[-1].le_us
    for pk in ("RUN#r1", "POINTS#r1", "HISTOGRAMS#r1"):
        items = store.db.query(
            TableName=store.table,
            KeyConditionExpression="PK = :pk",
            ExpressionAttributeValues={":pk": {"S": pk}},
        )["Items"]
        assert items and all(item_size(store._plain(i)) < MAX_ITEM_BYTES < 400 * 1024 for i in items)
    assert stored["bounded"]


def test_the_engine_refuses_an_item_over_400_kb(store: DynamoResultsStore, engine: tuple[str, Any]) -> None:
    """Why the store bounds items: both engines enforce DynamoDB's limit."""
    item = {"PK": {"S": "RUN#big"}, "SK": {"S": "RUN"}, "blob": {"S": "x" * (400 * 1024 + 10)}}
    with pytest.raises(store.db.exceptions.ClientError, match=r"(?i)size"):
        store.db.put_item(TableName=store.table, Item=item)


# ============================================================================ regressions


def verdict(n: int, flagged: bool = False) -> Regression:
    return Regression(
        storage_option=OPTION,
        workload=f"workload-{n:05d}-" + "x" * 200,
        variant="bs=4k,iodepth=32",
        phase="run",
        direction="read",
        metric="iops",
        higher_is_better=True,
        verdict="regression" if flagged else "none",
        flagged=flagged,
        value=900.0,
        repetitions=3,
        baseline=1000.0,
        delta_pct=-10.0,
        band=(950.0, 1050.0),
        history_n=10,
        config_ids=["gp3"],
    )


def test_regressions_are_chunked_under_the_item_limit_and_rewritten_idempotently(
    store: DynamoResultsStore, calls: CallLog
) -> None:
    start(store, "r1", day(0))
    many = [verdict(n, flagged=n % 100 == 0) for n in range(2_500)]  # ~1.4 MB of verdicts
    parts = store.record_regressions("r1", many)
    assert parts >= 3
    assert store.get_regressions("r1") == [v.model_dump(mode="json") for v in many]
    run = store.get_run("r1")["run"]
    assert run["regression_counts"] == {"regression": 25, "improvement": 0, "none": 2_475, INSUFFICIENT: 0}
    assert run["regression_parts"] == parts
    assert store.list_runs("nightly")[0]["regression_counts"]["regression"] == 25

    assert store.record_regressions("r1", many) == parts  # a retried Finalize: same items
    assert store.record_regressions("r1", many[:3]) == 1  # fewer: the extra parts go
    assert [v["workload"] for v in store.get_regressions("r1")] == [v.workload for v in many[:3]]
    raw = store.db.query(
        TableName=store.table,
        KeyConditionExpression="PK = :pk AND begins_with(SK, :p)",
        ExpressionAttributeValues={":pk": {"S": "RUN#r1"}, ":p": {"S": "REGRESSIONS#"}},
    )["Items"]
    assert [i["SK"]["S"] for i in raw] == ["REGRESSIONS#0000"]
    page, _ = store.get_run_page("r1", limit=50)
    assert len(page["regressions"]) == 3
    assert store.get_run("r1")["results"] == []  # get_run keeps its shape: verdicts are not results
    assert store.record_regressions("r1", []) == 0 and store.get_regressions("r1") == []
    with pytest.raises(ProvisioningError, match="never recorded"):
        store.record_regressions("nope", many[:1])
    assert set(calls.names) <= {
        "CreateTable",
        "DescribeTable",
        "PutItem",
        "GetItem",
        "UpdateItem",
        "BatchWriteItem",
        "Query",
        "DeleteItem",
        "DeleteTable",
    }


class Steady:
    """A series' history: values around a centre with a little noise, repetition by repetition."""

    @staticmethod
    def iops(run: int, rep: int) -> float:
        return 1000.0 + ((run * 7 + rep * 3) % 5 - 2) * 4.0  # 992..1008

    @staticmethod
    def mean_us(run: int, rep: int) -> float:
        return 500.0 + ((run * 5 + rep) % 3 - 1) * 3.0


def series_records(run: int, iops_factor: float = 1.0, latency_factor: float = 1.0) -> list[ResultRecord]:
    out = []
    for rep in (1, 2, 3):
        for workload, variant in (("randread-4k", {"iodepth": 32, "bs": "4k"}), ("mixed", {"ratio": 1.0})):
            out.append(
                record(
                    workload=workload,
                    variant=variant,
                    repetition=rep,
                    iops=Steady.iops(run, rep) * iops_factor,
                    mean_us=Steady.mean_us(run, rep) * latency_factor,
                )
            )
    return out


def services(store: DynamoResultsStore) -> Services:
    # Finalize with ConfigResult entries uses the store, the clock and the artifacts (request,
    # economics, report): an empty directory here, so costs become a note and the report is drawn.
    return Services(
        compute=None,  # type: ignore[arg-type]
        filesystems=None,  # type: ignore[arg-type]
        agents=None,  # type: ignore[arg-type]
        artifacts=LocalArtifacts(Path(tempfile.mkdtemp(prefix="artifacts-"))),
        store=store,
        clock=FixedClock(),
    )


def entry(run_id: str, status: str = "succeeded") -> dict[str, Any]:
    return ConfigResult(run_id=run_id, config_id="gp3", status=status, records=6).model_dump(mode="json")


def test_finalize_flags_regressions_against_the_suites_last_runs(
    store: DynamoResultsStore, calls: CallLog
) -> None:
    for n in range(12):  # twelve steady nightly runs, all within the last DEFAULT_RUNS (20)
        measured_run(store, f"n{n:02d}", day(n), series_records(n))
    for n in range(12):  # another suite measures the same series far lower: it must not count
        measured_run(store, f"h{n:02d}", day(n, hours=1), series_records(n, 0.5, 3.0), suite="hourly")
    now = day(12)
    measured_run(store, "late", day(13), series_records(13, 0.1, 9.0))  # started after this run
    measured_run(store, "now", now, series_records(12, iops_factor=0.8, latency_factor=1.5), finished=False)

    mark = calls.mark()
    summary = finalize("now", "nightly", now, [entry("now")], services(store))
    sent = calls.since(mark)
    assert "Scan" not in sent and sent.count("Query") >= 4  # get_run, list_runs, one per series

    assert summary.status == "SUCCEEDED"
    flagged = {(r.workload, r.metric): r for r in summary.regressions}
    assert set(flagged) == {
        (w, m)
        for w in ("randread-4k", "mixed")
        for m in ("iops", "bw_mibps", "lat_mean_us", "lat_p95_us", "lat_p99_us")
    }
    iops = flagged[("randread-4k", "iops")]
    assert iops.verdict == "regression" and iops.flagged and iops.history_n == 12
    assert iops.baseline == pytest.approx(1000.0, abs=8.0)
    assert iops.delta_pct == pytest.approx(-20.0, abs=1.0)
    assert iops.band is not None and iops.band[0] < iops.baseline < iops.band[1]
    assert iops.config_ids == ["gp3"] and iops.repetitions == 3
    assert flagged[("mixed", "lat_mean_us")].verdict == "regression"  # ratio=1.0 found its history
    assert summary.regression_notes and "2 of 2 series" in summary.regression_notes[0]

    stored = store.get_regressions("now")
    assert len(stored) == 2 * 6 - 2  # real_s is absent from fio records
    assert {s["verdict"] for s in stored} == {"regression"}
    run = store.get_run("now")["run"]
    assert run["status"] == "SUCCEEDED" and run["regression_counts"]["regression"] == 10
    assert store.runs_in_progress() == []

    again = finalize("now", "nightly", now, [entry("now")], services(store))  # a retried Finalize
    assert again.regressions == summary.regressions
    assert len(store.get_regressions("now")) == len(stored)


def test_finalize_with_little_history_flags_nothing(store: DynamoResultsStore) -> None:
    for n in range(2):
        measured_run(store, f"n{n}", day(n), series_records(n))
    measured_run(store, "now", day(5), series_records(5, iops_factor=0.5), finished=False)
    summary = finalize("now", "nightly", day(5), [entry("now", "partial")], services(store))
    assert summary.status == "PARTIAL" and summary.regressions == []
    verdicts = store.get_regressions("now")
    assert verdicts and {v["verdict"] for v in verdicts} == {INSUFFICIENT}
    assert {v["history_n"] for v in verdicts} == {2}


def test_finalize_survives_a_store_that_cannot_record_regressions(
    store: DynamoResultsStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    for n in range(4):
        measured_run(store, f"n{n}", day(n), series_records(n))
    measured_run(store, "now", day(5), series_records(5, iops_factor=0.5), finished=False)

    def broken(*_: Any, **__: Any) -> int:
        raise ProvisioningError("record regressions of run now: ThrottlingException")

    monkeypatch.setattr(store, "record_regressions", broken)
    summary = finalize("now", "nightly", day(5), [entry("now")], services(store))
    assert summary.status == "SUCCEEDED" and summary.regressions  # still computed and reported
    assert any("not recorded" in note and "ThrottlingException" in note for note in summary.regression_notes)
    assert store.get_run("now")["run"]["status"] == "SUCCEEDED"


def test_a_run_started_in_the_same_second_counts_once_and_this_run_never(store: DynamoResultsStore) -> None:
    """History ends at this run's own sort key: an earlier-sorting run of the same second is in."""
    for n in range(3):
        measured_run(store, f"n{n}", day(n), series_records(n))
    measured_run(store, "a-same-second", day(5), series_records(3))
    measured_run(store, "now", day(5), series_records(5, iops_factor=0.5), finished=False)
    measured_run(store, "z-same-second", day(5), series_records(4, iops_factor=0.1))  # sorts after "now"
    summary = finalize("now", "nightly", day(5), [entry("now")], services(store))
    verdicts = store.get_regressions("now")
    assert {v["history_n"] for v in verdicts} == {4}
    assert {(r.workload, r.metric) for r in summary.regressions} >= {("randread-4k", "iops")}


def many_series_records(run: int, workloads: int, iops_factor: float = 1.0) -> list[ResultRecord]:
    return [
        record(workload=f"w{w:02d}", repetition=rep, iops=Steady.iops(run, rep) * iops_factor)
        for w in range(workloads)
        for rep in (1, 2)
    ]


def test_the_regression_check_reads_history_in_a_bounded_number_of_queries(
    store: DynamoResultsStore, calls: CallLog
) -> None:
    """Whatever the number of series: this run, the suite's runs, their digest (one Query each)."""
    for n in range(8):
        measured_run(store, f"n{n}", day(n), many_series_records(n, 30))
    measured_run(store, "now", day(9), many_series_records(9, 30, iops_factor=0.7), finished=False)

    mark = calls.mark()
    report = compute_regressions(store, "now", "nightly", day(9))
    assert calls.since(mark) == ["Query", "Query", "Query"]  # get_run, list_runs_page, series_digests
    assert report.series == report.series_compared == 30
    iops = {v.workload: v for v in report.verdicts if v.metric == "iops"}
    assert len(iops) == 30 and all(v.history_n == 8 and v.verdict == "regression" for v in iops.values())


def still_clock() -> float:  # stands still
    return 0.0


def test_the_regression_check_reads_runs_of_the_previous_layout_too(
    client: Any, table: str, store: DynamoResultsStore, calls: CallLog
) -> None:
    """Earlier runs stored before the digest existed are read per series (GSI2), the rest from the
    digest; both give the verdicts an all-previous history gives."""
    previous = PreviousLayoutStore(client, table, clock=FixedClock())
    for n in range(6):
        measured_run(previous, f"old{n}", day(n), many_series_records(n, 3))  # type: ignore[arg-type]
    for n in range(6, 10):
        measured_run(store, f"new{n}", day(n), many_series_records(n, 3))
    measured_run(store, "now", day(11), many_series_records(11, 3, iops_factor=0.7), finished=False)

    mark = calls.mark()
    # a clock that stands still: the per-series reads are not cut by the 60 s budget however slow
    # this machine's moto is (the budget has its own tests)
    report = compute_regressions(store, "now", "nightly", day(11), clock=still_clock)
    assert report.notes[1:] == []  # nothing left unread
    assert calls.since(mark).count("Query") == 3 + 3  # + one per series partition, for the old runs
    assert {v.history_n for v in report.verdicts} == {10}
    assert {v.verdict for v in report.verdicts if v.metric == "iops"} == {"regression"}

    for n in range(6, 10):  # the same history, all in the previous layout: the same verdicts
        measured_run(previous, f"again{n}", day(n, hours=1), many_series_records(n, 3), suite="other")  # type: ignore[arg-type]
    for n in range(6):
        measured_run(previous, f"again{n}", day(n, hours=1), many_series_records(n, 3), suite="other")  # type: ignore[arg-type]
    measured_run(store, "now2", day(11, hours=1), many_series_records(11, 3, iops_factor=0.7), suite="other")
    same = compute_regressions(store, "now2", "other", day(11, hours=1), clock=still_clock)
    assert same.notes[1:] == []
    assert [v.model_dump(exclude={"config_ids"}) for v in same.verdicts] == [
        v.model_dump(exclude={"config_ids"}) for v in report.verdicts
    ]

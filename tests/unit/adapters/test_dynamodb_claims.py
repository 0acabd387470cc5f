"""DynamoResultsStore on moto: the claim of a scheduled occurrence and the stop of a run, both
conditional writes on the table template.yaml defines."""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import boto3
import pytest
from tests.support.runs import run_summary

from storagebench.adapters.aws.dynamodb import DynamoResultsStore
from storagebench.store import keys

REGION = "us-east-1"
OCCURRENCE = "arn:aws:scheduler:us-east-1:123456789012:schedule/sb-schedules/nightly@2030-01-02T02:00:00Z"


@pytest.fixture
def store(table: str) -> DynamoResultsStore:
    return DynamoResultsStore(boto3.client("dynamodb", region_name=REGION), table)


def _start(store: DynamoResultsStore, run_id: str) -> None:
    store.start_run(
        run_id, "nightly", {"name": "nightly"}, "2030-01-02T02:00:05Z", "2030-01-03T02:00:05Z", ["a"]
    )


def test_the_first_claim_holds_the_occurrence_and_the_others_are_recorded(store: DynamoResultsStore) -> None:
    assert store.claim_occurrence(OCCURRENCE, "exec-a", "2030-01-02T02:00:05Z") == "exec-a"
    assert store.claim_occurrence(OCCURRENCE, "exec-a", "2030-01-02T02:00:09Z") == "exec-a"  # Plan retried
    assert store.claim_occurrence(OCCURRENCE, "exec-b", "2030-01-02T02:00:07Z") == "exec-a"
    assert store.claim_occurrence(OCCURRENCE, "exec-c", "2030-01-02T02:00:08Z") == "exec-a"
    claim = store._get(keys.occurrence_pk(OCCURRENCE), keys.CLAIM)
    assert claim is not None and claim["run_id"] == "exec-a" and set(claim["refused"]) == {"exec-b", "exec-c"}
    assert store.runs_in_progress() == [] and store.list_runs("nightly") == []  # on no index
    # the claim expires (issue 27, 11): 35 days after its holder's last claim, on the TTL attribute
    assert int(claim[keys.EXPIRES]) == 1893549609 + 35 * 86400  # 2030-01-02T02:00:09Z


def test_the_table_expires_items_on_the_attribute_claims_carry() -> None:
    from pathlib import Path

    from storagebench_local.cfn import load_template

    template = load_template(Path(__file__).resolve().parents[3] / "template.yaml")
    table = template["Resources"]["ResultsTable"]["Properties"]
    assert table["TimeToLiveSpecification"] == {"AttributeName": keys.EXPIRES, "Enabled": True}


@pytest.fixture
def atomic_writes(monkeypatch: pytest.MonkeyPatch) -> None:
    """DynamoDB applies a conditional write atomically; moto checks the condition and writes without
    a lock, so two threads could both pass attribute_not_exists (a test that failed under load).
    Its item writes are serialised here, as the service's are per item."""
    from moto.dynamodb.models import DynamoDBBackend

    lock = threading.Lock()

    def serialised(original: Callable[..., Any]) -> Callable[..., Any]:
        def write(self: Any, *args: Any, **kwargs: Any) -> Any:
            with lock:
                return original(self, *args, **kwargs)

        return write

    for name in ("put_item", "update_item", "delete_item"):
        monkeypatch.setattr(DynamoDBBackend, name, serialised(getattr(DynamoDBBackend, name)))


@pytest.mark.usefixtures("atomic_writes")
def test_concurrent_claims_leave_one_holder(store: DynamoResultsStore) -> None:
    runs = [f"exec-{n}" for n in range(6)]
    with ThreadPoolExecutor(max_workers=6) as pool:
        holders = list(
            pool.map(lambda r: store.claim_occurrence(OCCURRENCE, r, "2030-01-02T02:00:05Z"), runs)
        )
    assert len(set(holders)) == 1 and holders[0] in runs


def test_mark_stopping_only_from_running_and_keeps_the_run_in_progress(store: DynamoResultsStore) -> None:
    assert store.mark_stopping("unknown", "2030-01-02T03:00:00Z") is None
    assert store.run_status("unknown") is None
    _start(store, "run-1")
    marked = store.mark_stopping("run-1", "2030-01-02T03:00:00Z")
    assert marked is not None and marked["status"] == "STOPPING" and marked["configs"] == ["a"]
    assert "PK" not in marked and store.run_status("run-1") == "STOPPING"
    assert [r["run_id"] for r in store.runs_in_progress()] == ["run-1"]
    assert store.mark_stopping("run-1", "2030-01-02T03:00:01Z") is None  # once
    store.finish_run(
        run_summary("run-1", "nightly", "2030-01-02T02:00:05Z", "2030-01-02T03:03:00Z", status="FAILED")
    )
    assert store.run_status("run-1") == "FAILED" and store.runs_in_progress() == []


def test_the_janitor_fails_a_stop_whose_sweep_never_ended_it(store: DynamoResultsStore) -> None:
    _start(store, "run-1")
    store.mark_stopping("run-1", "2030-01-02T03:00:00Z")
    assert store.fail_stuck_run("run-1", "still STOPPING", "2030-01-04T00:00:00Z")
    assert store.run_status("run-1") == "FAILED"
    assert not store.fail_stuck_run("run-1", "again", "2030-01-04T01:00:00Z")

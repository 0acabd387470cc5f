"""The store's documents decoded once: wrong types read as absent, bad results become notes."""

from __future__ import annotations

from typing import Any

from storagebench.core.state import ConfigState
from storagebench.store.models import HistoryPoint, StoredConfig, StoredRun, decode_run

RECORD: dict[str, Any] = {
    "config_id": "gp3",
    "target_id": "data",
    "workload": "randread-4k",
    "profile": "fio-randread",
    "repetition": 1,
    "phase": "run",
    "direction": "read",
    "engine": "fio",
    "iops": 3000.0,
    "bytes": 1,
    "runtime_s": 60.0,
    "latency": {
        "basis": "lat",
        "samples": 10,
        "mean_us": 500.0,
        "stdev_us": 1.0,
        "min_us": 1.0,
        "max_us": 9.0,
        "p95_us": 600.0,
    },
}


def test_a_run_item_of_the_wrong_shapes_reads_as_absent_not_as_an_exception() -> None:
    run = StoredRun.decode(
        {
            "run_id": "r1",
            "suite": "",
            "status": None,
            "configs": ["a", 3, "b"],
            "config_results": [{"config_id": "a", "records": "7", "errors": [{"step": "collect"}]}, "x", {}],
            "request": "not a request",
            "economics": [1],
            "records": True,
        }
    )
    assert (run.run_id, run.suite, run.status) == ("r1", None, None)
    assert run.configs == ["a", "b"]
    assert len(run.config_results) == 1
    outcome = run.config_results[0]
    assert outcome.records is None and outcome.errors == ["collect"]
    assert run.request is None and run.economics is None and run.records is None
    assert StoredRun.decode(None).run_id is None


def test_a_config_whose_state_does_not_validate_keeps_what_can_be_read() -> None:
    config = StoredConfig.decode(
        {
            "config_id": "c",
            "status": "CLEANED",
            "updated_at": "2026-11-21T17:10:00Z",
            "state": {
                "resources": {"launched_at": "2026-11-21T17:00:00Z"},
                "collected": {"status": "partial", "records": 4, "problems": ["p1"]},
                "cleanup": {"leftovers": ["vol-1"]},
                "errors": ["boom"],
            },
        }
    )
    assert config.state is None  # no work item: not the workflow's state
    assert config.launched_at == "2026-11-21T17:00:00Z"
    assert (config.collect_status, config.collected_records, config.collect_problems) == (
        "partial",
        4,
        ["p1"],
    )
    assert config.leftovers == ["vol-1"] and config.errors == ["boom"]
    assert config.status == "CLEANED"


def test_a_valid_state_is_the_workflows_model() -> None:
    item = {
        "run_id": "r",
        "config_id": "c",
        "suite": "s",
        "region": "us-east-1",
        "started_at": "2026-11-21T17:00:00Z",
        "expires_at": "2026-11-22T17:00:00Z",
        "timing": {
            "ready_poll_s": 10,
            "ready_timeout_s": 600,
            "heartbeat_s": 300,
            "command_timeout_s": 3600,
            "task_timeout_s": 3900,
        },
        "artifacts_prefix": "runs/r/c/",
    }
    state = ConfigState.model_validate({"item": item})
    config = StoredConfig.decode({"config_id": "c", "state": state.model_dump(mode="json")})
    assert config.state == state


def test_unreadable_results_become_one_note_and_the_rest_are_kept() -> None:
    stored = {
        "run": {"run_id": "r"},
        "configs": [{"config_id": "gp3"}, {"status": "no id"}, "junk"],
        "results": [
            {"config_id": "gp3", "record_key": "k1", "labels": {"storage_option": "opt-a"}, "record": RECORD},
            {
                "config_id": "gp3",
                "labels": {"storage_option": "opt-b"},
                "record": {**RECORD, "repetition": 2},
            },
            {"record_key": "bad", "record": {**RECORD, "repetition": 0}},
            "junk",
        ],
    }
    document = decode_run(stored)
    assert [c.config_id for c in document.configs] == ["gp3"]
    assert [r.record.repetition for r in document.results] == [1, 2]
    assert document.results[0].record_key == "k1" and document.results[1].record_key is None
    assert document.options == {("gp3", "data"): "opt-a"}  # the first result that names one
    [note] = document.notes
    assert note.startswith("2 stored result(s) could not be read") and "(bad): repetition" in note
    assert "results[3]: not an object" in note


def test_a_history_point_reads_its_metrics_and_refuses_a_group_that_is_not_a_number() -> None:
    point = {"started_at": "t", "run_id": "r", "config_id": "gp3", "repetition": 2, "record": RECORD}
    decoded = HistoryPoint.decode(point)
    assert decoded is not None
    assert decoded.metrics == {"iops": 3000.0, "lat_mean_us": 500.0, "lat_p95_us": 600.0}
    assert (decoded.group, decoded.repetition) == (None, 2)
    assert HistoryPoint.decode({**point, "record": {**RECORD, "group": "4"}}) is None
    assert HistoryPoint.decode({**point, "record": None}) is None
    assert HistoryPoint.decode({**point, "record": {"iops": float("nan"), "group": 4}}) == HistoryPoint(
        started_at="t", run_id="r", config_id="gp3", repetition=2, group=4, metrics={}
    )

"""A config's export key and its inverse: the API finds each file Collect wrote by listing the run's
prefix and reading the config and attempt back from the name."""

from __future__ import annotations

import pytest
from tests.support.runs import work_item

from storagebench.core.state import StepTiming, WorkItem
from storagebench.workflow.artifact_keys import export_file_of, export_key, run_export_prefix

STARTED = "2026-11-25T23:30:00-02:00"  # the 26th in UTC: the partition is the run's UTC start day


def item(config_id: str, attempt: int) -> WorkItem:
    return work_item(
        "nightly-20261126T013000Z-0a1b",
        config_id,
        "nightly",
        "us-east-1",
        STARTED,
        "2026-11-26T09:30:00Z",
        timing=StepTiming(ready_poll_s=1, ready_timeout_s=1, heartbeat_s=1, command_timeout_s=1),
        attempt=attempt,
    )


@pytest.mark.parametrize(("config_id", "attempt"), [("gp3", 1), ("gp3-500g-6000iops", 2), ("io2", 12)])
def test_every_key_collect_writes_reads_back_as_its_config_and_attempt(config_id: str, attempt: int) -> None:
    prefix = run_export_prefix("nightly", STARTED, "nightly-20261126T013000Z-0a1b")
    assert prefix == "exports/suite=nightly/date=2026-11-26/run=nightly-20261126T013000Z-0a1b/"
    key = export_key(item(config_id, attempt))
    assert key.startswith(prefix) and "/" not in key.removeprefix(prefix)
    assert export_file_of(key.removeprefix(prefix)) == (config_id, attempt)


@pytest.mark.parametrize(
    "name", ["gp3.json", "gp3.jsonl.tmp", ".jsonl", "a/gp3.jsonl", "suite=x.jsonl", "README"]
)
def test_another_name_is_no_export(name: str) -> None:
    assert export_file_of(name) is None


def test_a_prefix_refuses_a_value_that_would_leave_its_segment() -> None:
    with pytest.raises(ValueError, match="run='a/b'"):
        run_export_prefix("nightly", STARTED, "a/b")

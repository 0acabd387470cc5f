"""Collect's flat export: the config's rows as JSON Lines in the Athena table's partition, written
after the records are stored, from what Collect validated; a failed write is recorded, not lost."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from tests.support import workflow_fakes as wf

from storagebench.core.errors import ProvisioningError
from storagebench.core.state import AgentOutcome, ConfigState
from storagebench.costs.monthly import monthly_cost
from storagebench.export.schema import COLUMN_NAMES
from storagebench.request import parse_request
from storagebench.workflow import artifact_keys
from storagebench.workflow.bindings import storage_option
from storagebench.workflow.exports import EXPORT_CONTENT_TYPE, agent_fio_version
from storagebench.workflow.ports import snapshot_prices
from storagebench.workflow.steps import collect as collect_step
from storagebench.workflow.steps.check_ready import check_ready
from storagebench.workflow.steps.cleanup import cleanup
from storagebench.workflow.steps.collect import collect
from storagebench.workflow.steps.provision import provision
from storagebench.workflow.steps.start_agent import start_agent

StateOf = Callable[..., ConfigState]
EXPORT_KEY = "exports/suite=suite-a/date=2026-11-21/run=run-1/alpha.jsonl"


def ran(state_of: StateOf, fakes: Any) -> ConfigState:
    """Config alpha launched, ready, its agent done: where Collect starts."""
    state = check_ready(provision(state_of("alpha"), fakes.services), fakes.services)
    state = start_agent(state, "token-1", fakes.services)
    return state.model_copy(update={"outcome": AgentOutcome(status="completed", exit_code=0)})


def with_output(state_of: StateOf, fakes: Any, targets: list[str], fio_version: Any = None) -> ConfigState:
    state = ran(state_of, fakes)
    directory = wf.write_agent_output(wf.agent_output_dir(fakes, state), "alpha", targets)
    if fio_version is not None:
        manifest = json.loads((directory / "manifest.json").read_text())
        manifest["system"] = {"fio_version": fio_version, "kernel": "6.1.0"}
        (directory / "manifest.json").write_text(json.dumps(manifest))
    return state


def exported_rows(fakes: Any) -> list[dict[str, Any]]:
    text, content_type = fakes.artifacts.texts[EXPORT_KEY]
    assert content_type == EXPORT_CONTENT_TYPE
    return [json.loads(line) for line in text.splitlines()]


def test_the_export_key_is_the_partition_of_the_runs_suite_and_utc_day(state_of: StateOf) -> None:
    item = state_of("alpha").item
    assert artifact_keys.export_key(item) == EXPORT_KEY
    late = item.model_copy(update={"started_at": "2026-11-21T23:30:00-02:00"})  # 01:30 UTC the next day
    assert artifact_keys.export_key(late).startswith("exports/suite=suite-a/date=2026-11-22/")


@pytest.mark.parametrize(("field", "value"), [("run_id", "a/b"), ("config_id", "x=y"), ("suite", "")])
def test_a_key_segment_that_would_break_the_partitions_is_refused(
    state_of: StateOf, field: str, value: str
) -> None:
    item = state_of("alpha").item.model_copy(update={field: value})
    with pytest.raises(ValueError, match=r"export partition .*'/', '='"):
        artifact_keys.export_key(item)


def test_collect_writes_one_row_per_stored_record_with_the_run_and_config_beside_it(
    state_of: StateOf, fakes: Any
) -> None:
    state = collect(with_output(state_of, fakes, ["data", "shared"], "fio-3.36"), fakes.services)
    rows = exported_rows(fakes)
    stored = [r for put in fakes.store.results for r in put.records]
    assert len(rows) == len(stored) == 2 and state.errors == []
    config = parse_request(wf.request_doc()).config("alpha")
    cost = monthly_cost(config, snapshot_prices("us-east-1"))
    by_target = {row["target_id"]: row for row in rows}
    for row in rows:
        assert list(row) == list(COLUMN_NAMES)
        assert (row["run_id"], row["suite"], row["date"], row["config_id"]) == (
            "run-1",
            "suite-a",
            "2026-11-21",
            "alpha",
        )
        assert row["started_at"] == "2026-11-21T17:00:00Z" and row["instance_type"] == "c5.4xlarge"
        assert row["storage_option"] == storage_option(config, row["target_id"])
        assert row["monthly_usd"] == pytest.approx(cost.monthly_usd) and row["price_source"] == "snapshot"
        assert row["fio_version"] == "fio-3.36"
        assert (row["engine"], row["direction"], row["emulated"]) == ("command", "mixed", False)
    assert by_target["data"]["target_kind"] == "ebs" and by_target["data"]["target_type"] == "gp3"
    assert by_target["data"]["target_size_gib"] == 100
    assert by_target["shared"]["target_kind"] == "efs" and by_target["shared"]["target_type"] == "elastic"
    assert (by_target["data"]["real_s"], by_target["shared"]["real_s"]) == (2.0, 3.0)
    # fio's version is stored with the records too, so an export of the stored run says it as well
    assert all(put.labels["fio_version"] == "fio-3.36" for put in fakes.store.results)


@pytest.mark.parametrize("version", ["3.36; rm -rf /", "fio-" + "9" * 80, 336, ""])
def test_a_fio_version_that_does_not_read_as_one_is_not_kept(
    state_of: StateOf, fakes: Any, version: Any
) -> None:
    state = with_output(state_of, fakes, ["data"], version)
    assert agent_fio_version(wf.agent_output_dir(fakes, state)) is None
    collect(state, fakes.services)
    assert [row["fio_version"] for row in exported_rows(fakes)] == [None]
    assert "fio_version" not in fakes.store.results[0].labels


def test_records_naming_a_target_the_config_lacks_are_stored_but_not_exported(
    state_of: StateOf, fakes: Any
) -> None:
    state = collect(with_output(state_of, fakes, ["data", "ghost"]), fakes.services)
    assert {put.records[0].target_id for put in fakes.store.results} == {"data", "ghost"}
    assert [row["target_id"] for row in exported_rows(fakes)] == ["data"]
    assert state.collected is not None
    assert any("1 record(s) left out" in p and "alpha/ghost" in p for p in state.collected.problems)


def test_a_failed_export_write_keeps_the_records_and_records_the_failure(
    state_of: StateOf, fakes: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    def refuse(key: str, text: str, content_type: str) -> str:
        raise ProvisioningError(f"s3 put s3://bucket/{key}: AccessDenied")

    monkeypatch.setattr(fakes.artifacts, "put_text", refuse)
    state = collect(with_output(state_of, fakes, ["data", "shared"]), fakes.services)
    assert state.collected is not None and state.collected.records == 2  # measured and stored
    assert sum(len(put.records) for put in fakes.store.results) == 2
    (error,) = state.errors
    assert (error.step, error.error) == ("collect", "ExportError")
    assert EXPORT_KEY in error.cause and "AccessDenied" in error.cause and "2 rows" in error.cause
    (stored_state, status) = fakes.store.configs[-1]
    assert status == "COLLECTED" and stored_state.errors == [error]
    report = cleanup(state, fakes.services)
    assert report.status == "partial"  # the run says the export is missing


def test_collect_without_records_writes_no_export(state_of: StateOf, fakes: Any) -> None:
    collect(with_output(state_of, fakes, []), fakes.services)
    assert EXPORT_KEY not in fakes.artifacts.texts


@pytest.mark.parametrize("ceilings", [True, False])
def test_collect_tells_annotate_whether_the_instances_network_is_awss(
    state_of: StateOf, fakes: Any, monkeypatch: pytest.MonkeyPatch, ceilings: bool
) -> None:
    seen: list[bool] = []

    def spy(records: Any, directory: Any, config: Any, network_ceilings: bool = True) -> Any:
        seen.append(network_ceilings)
        return records

    monkeypatch.setattr(collect_step, "annotate", spy)
    fakes.services.network_ceilings = ceilings  # local mode sets False: loopback is not the type's network
    collect(with_output(state_of, fakes, ["data"]), fakes.services)
    assert seen == [ceilings]

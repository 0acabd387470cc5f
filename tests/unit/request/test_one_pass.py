"""`validate` reports every problem of a request in one pass: rules pydantic skips (a model whose other
fields failed) run on what parsed, each problem once, and none that follows from another."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from storagebench.cli.main import app
from storagebench.request import FieldError, RequestError, load_request, parse_request

ELEVEN = Path(__file__).resolve().parents[2] / "data" / "requests" / "eleven-mistakes.json"

# Every level of the request: top-level patterns and references, a config's catalog rules behind a
# target that failed, target rules, workload rules, an unknown field, a rule across two fields.
ELEVEN_PATHS = [
    "name",
    "baseline",
    "configs[0].instance_type",
    "configs[0].targets[0].iops",
    "configs[0].targets[1].provisioned_throughput_mibps",
    "configs[1].image",
    "configs[1].targets[0].size_gib",
    "workloads[0].profile",
    "workloads[1].params.bs",
    "prewarm.methd",
    "timing.command_timeout_h",
]


def errors_of(document: Any) -> list[FieldError]:
    with pytest.raises(RequestError) as caught:
        parse_request(document)
    return caught.value.errors


def test_eleven_mistakes_are_eleven_problems_in_document_order_each_with_value_and_rule() -> None:
    with pytest.raises(RequestError) as caught:
        load_request(ELEVEN)
    errors = caught.value.errors
    assert [e.path for e in errors] == ELEVEN_PATHS
    document = json.loads(ELEVEN.read_text())
    by_path = {e.path: e for e in errors}
    assert by_path["configs[0].instance_type"].value == "c5.4xlarg"
    assert "did you mean c5.4xlarge" in by_path["configs[0].instance_type"].message
    assert by_path["configs[1].image"].value == document["configs"][1]["image"]
    assert "al2023" in by_path["configs[1].image"].message
    assert by_path["configs[0].targets[1].provisioned_throughput_mibps"].missing
    for error in errors:
        assert error.message  # what is allowed
        assert error.missing or error.value is not None or error.path == "(request)"


def test_validate_prints_the_eleven_in_one_run_and_exits_2() -> None:
    runner = CliRunner()
    result = runner.invoke(app, ["validate", "--suite", str(ELEVEN), "--json"])
    assert result.exit_code == 2
    body = json.loads(result.stdout)
    assert [e["path"] for e in body["errors"]] == ELEVEN_PATHS
    text = runner.invoke(app, ["validate", "--suite", str(ELEVEN)])
    assert text.exit_code == 2 and "11 problem(s)" in text.stderr


def test_a_config_is_checked_against_the_catalog_although_its_target_failed(minimal: dict[str, Any]) -> None:
    config = minimal["configs"][0]
    config.update(instance_type="c5.large", image="ubuntu-20.04", ebs_optimized=False)
    config["targets"] = [{"kind": "ebs", "type": "gp3", "size_gib": 0}, {"kind": "instance_store"}]
    assert {e.path for e in errors_of(minimal)} == {
        "configs[0].targets[0].size_gib",
        "configs[0].image",
        "configs[0].ebs_optimized",  # c5 is always EBS-optimized
    }  # the instance-store rule reads every target: it waits for target 0 to parse


def test_a_target_rule_runs_beside_a_field_error_of_the_same_target(minimal: dict[str, Any]) -> None:
    minimal["configs"][0]["targets"] = [
        {"kind": "ebs", "type": "gp3", "size_gib": 100, "count": 0, "initialization_rate_mibps": 200}
    ]
    errors = errors_of(minimal)
    assert [(e.path, e.value) for e in errors] == [
        ("configs[0].targets[0].count", 0),
        ("configs[0].targets[0].initialization_rate_mibps", 200),  # needs a snapshot_id
    ]


def test_a_rule_reading_a_failed_field_does_not_run_no_cascade(minimal: dict[str, Any]) -> None:
    minimal["configs"][0]["instance_type"] = "C5 LARGE"  # not a type name: no catalog lookup on it
    minimal["configs"][0]["targets"] = [
        {"kind": "ebs", "type": "gp3", "size_gib": 100, "iops": "many", "throughput_mibps": 1000}
    ]
    errors = errors_of(minimal)
    # the throughput rule depends on iops (0.25 MiB/s per IOPS): it waits for iops to be a number
    assert [e.path for e in errors] == ["configs[0].instance_type", "configs[0].targets[0].iops"]


def test_each_problem_is_reported_once(minimal: dict[str, Any]) -> None:
    minimal["configs"][0]["targets"] = [
        {"kind": "ebs", "type": "gp2", "size_gib": 100, "iops": 3000, "layout": "jbod", "encrypted": "yes"}
    ]
    errors = errors_of(minimal)
    assert [(e.path, e.message.split(" (")[0].split(";")[0]) for e in errors] == [
        ("configs[0].targets[0].iops", "cannot be provisioned on gp2"),
        ("configs[0].targets[0].layout", "jbod needs filesystem raw"),
        ("configs[0].targets[0].layout", "jbod needs count >= 2"),
        ("configs[0].targets[0].encrypted", "Input should be a valid boolean"),
    ]


def test_workload_and_timing_rules_run_beside_their_own_field_errors(minimal: dict[str, Any]) -> None:
    minimal["workloads"] = [{"profile": "std-randread-4kk", "scale": 0}]
    minimal["timing"] = {"ready_poll_s": 0, "command_timeout_h": 30, "max_run_hours": 24}
    assert [e.path for e in errors_of(minimal)] == [
        "workloads[0].profile",
        "workloads[0].scale",
        "timing.ready_poll_s",
        "timing.command_timeout_h",
    ]

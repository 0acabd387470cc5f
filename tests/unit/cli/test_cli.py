"""The storagebench command line: validate, schema, workloads and the agent's argument handling."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from click.testing import Result
from typer.testing import CliRunner

# Imported here, at collection: Progress binds sys.stderr as a default argument when its module is
# first imported, and an import inside a CliRunner invocation would bind that invocation's stream,
# which is closed for every later run (see test_agent_progress_goes_to_the_current_stderr).
import storagebench.agent.log  # noqa: F401
from storagebench.cli.main import app
from storagebench.cli.options import parse_emulate, parse_params
from storagebench.workloads import PROFILES, SUITES

VALID: dict[str, Any] = {
    "name": "gp2-vs-io1",
    "baseline": "io1",
    "configs": [
        {
            "id": "io1",
            "instance_type": "c5.4xlarge",
            "root_volume": {"type": "io1", "size_gib": 80, "iops": 4000},
            "targets": [{"kind": "ebs", "type": "io1", "size_gib": 512, "iops": 1500}],
        },
        {
            "id": "gp2",
            "instance_type": "c5.4xlarge",
            "targets": [{"kind": "ebs", "type": "gp2", "size_gib": 512}],
        },
    ],
    "workloads": [{"profile": "dd-seq-write-1m-dsync"}, {"profile": "fio-randrw-4k-25read", "scale": 0.01}],
}


@pytest.fixture
def runner() -> CliRunner:
    return CliRunner()


def write(path: Path, document: Any) -> Path:
    path.write_text(json.dumps(document, indent=2), encoding="utf-8")
    return path


def invalid_document() -> dict[str, Any]:
    document = json.loads(json.dumps(VALID))
    document["region"] = "mars-1"
    document["baseline"] = "nope"
    document["configs"][0]["targets"][0]["iops"] = 25601
    return document


@pytest.fixture
def as_root(monkeypatch: pytest.MonkeyPatch) -> None:
    """Pass the agent's root check without doing anything that needs root (it fails earlier)."""
    monkeypatch.setattr(os, "geteuid", lambda: 0)


@pytest.fixture
def not_root(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(os, "geteuid", lambda: 1000)


# --------------------------------------------------------------------------- validate


def test_validate_valid_file(runner: CliRunner, tmp_path: Path) -> None:
    path = write(tmp_path / "ok.json", VALID)
    result = runner.invoke(app, ["validate", "--suite", str(path)])
    assert result.exit_code == 0, result.stderr
    assert "valid" in result.stdout
    assert "gp2-vs-io1" in result.stdout
    assert "io1" in result.stdout
    assert "c5.4xlarge" in result.stdout
    assert "fio-randrw-4k-25read x0.01" in result.stdout
    assert result.stderr == ""


def test_validate_invalid_file_lists_every_problem(runner: CliRunner, tmp_path: Path) -> None:
    path = write(tmp_path / "bad.json", invalid_document())
    result = runner.invoke(app, ["validate", "-s", str(path)])
    assert result.exit_code == 2
    assert result.stdout == ""
    assert "3 problem(s)" in " ".join(result.stderr.split())  # the header may wrap; problems do not
    assert 'region: must be an AWS region code such as us-east-1 (got "mars-1")' in result.stderr
    assert "configs[0].targets[0].iops: io1 allows 100..25,600 IOPS for 512 GiB" in result.stderr
    assert "(got 25601)" in result.stderr
    assert 'baseline: must name a config: io1, gp2 (got "nope")' in result.stderr


def test_validate_json_valid(runner: CliRunner, tmp_path: Path) -> None:
    path = write(tmp_path / "ok.json", VALID)
    result = runner.invoke(app, ["validate", "-s", str(path), "--json"])
    assert result.exit_code == 0, result.stderr
    document = json.loads(result.stdout)
    assert document["valid"] is True
    assert document["file"] == str(path)
    assert document["name"] == "gp2-vs-io1"
    assert document["baseline"] == "io1"
    assert [c["id"] for c in document["configs"]] == ["io1", "gp2"]
    for config in document["configs"]:
        assert set(config) == {"id", "instance_type", "machines", "targets", "steps"}
        assert config["steps"] == 6
        (target,) = config["targets"]
        assert (target["id"], target["kind"]) == ("ebs0", "ebs")
        assert "GiB on c5.4xlarge" in target["envelope"]
    assert [w["id"] for w in document["workloads"]] == ["dd-seq-write-1m-dsync", "fio-randrw-4k-25read"]
    assert document["warnings"] == []


def test_validate_json_invalid(runner: CliRunner, tmp_path: Path) -> None:
    path = write(tmp_path / "bad.json", invalid_document())
    result = runner.invoke(app, ["validate", "-s", str(path), "--json"])
    assert result.exit_code == 2
    document = json.loads(result.stdout)
    assert document["valid"] is False
    assert document["file"] == str(path)
    assert {e["path"] for e in document["errors"]} == {"region", "baseline", "configs[0].targets[0].iops"}
    for error in document["errors"]:
        assert set(error) == {"path", "value", "message", "missing"}
    by_path = {e["path"]: e for e in document["errors"]}
    assert by_path["configs[0].targets[0].iops"]["value"] == 25601
    assert by_path["region"]["value"] == "mars-1"


def test_validate_syntax_error(runner: CliRunner, tmp_path: Path) -> None:
    path = tmp_path / "syntax.json"
    path.write_text('{"name": "t",\n  "configs": [,]\n}', encoding="utf-8")
    result = runner.invoke(app, ["validate", "-s", str(path)])
    assert result.exit_code == 2
    assert "not valid JSON at line 2 column 15" in result.stderr
    json_result = runner.invoke(app, ["validate", "-s", str(path), "--json"])
    assert json_result.exit_code == 2
    (error,) = json.loads(json_result.stdout)["errors"]
    assert error["message"].startswith("not valid JSON at line 2 column 15")
    assert error["value"] is None


def test_validate_missing_file(runner: CliRunner, tmp_path: Path) -> None:
    result = runner.invoke(app, ["validate", "-s", str(tmp_path / "nope.json"), "--json"])
    assert result.exit_code == 2
    (error,) = json.loads(result.stdout)["errors"]
    assert error["message"] == "cannot read the file: No such file or directory"


def test_validate_non_object(runner: CliRunner, tmp_path: Path) -> None:
    path = write(tmp_path / "list.json", [VALID])
    result = runner.invoke(app, ["validate", "-s", str(path)])
    assert result.exit_code == 2
    assert "(request): must be a JSON object" in result.stderr


def test_validate_needs_a_file(runner: CliRunner) -> None:
    result = runner.invoke(app, ["validate"])
    assert result.exit_code == 2


def test_validate_refuses_an_unknown_instance_naming_the_closest(runner: CliRunner, tmp_path: Path) -> None:
    document = json.loads(json.dumps(VALID))
    document["configs"][1]["instance_type"] = "x9z.large"
    path = write(tmp_path / "unknown.json", document)
    result = runner.invoke(app, ["validate", "-s", str(path), "--json"])
    assert result.exit_code == 2
    (error,) = json.loads(result.stdout)["errors"]
    assert (error["path"], error["value"]) == ("configs[1].instance_type", "x9z.large")
    assert "not in the catalog" in error["message"] and "did you mean" in error["message"]


def test_validate_text_keeps_brackets(runner: CliRunner, tmp_path: Path) -> None:
    document = json.loads(json.dumps(VALID))
    document["workloads"] = [{"profile": "fio-custom", "params": {"job_file": "[global]\n[job]\noutput=x\n"}}]
    path = write(tmp_path / "job.json", document)
    result = runner.invoke(app, ["validate", "-s", str(path)])
    assert result.exit_code == 2
    assert "[job] sets output" in result.stderr
    assert "[global]" in result.stderr


# --------------------------------------------------------------------------- schema and workloads


def test_schema(runner: CliRunner) -> None:
    result = runner.invoke(app, ["schema"])
    assert result.exit_code == 0
    schema = json.loads(result.stdout)
    assert "$defs" in schema
    assert "EbsTarget" in schema["$defs"]
    jsonschema.Draft202012Validator.check_schema(schema)
    assert jsonschema.Draft202012Validator(schema).is_valid(VALID)


def test_workloads_json(runner: CliRunner) -> None:
    result = runner.invoke(app, ["workloads", "--json"])
    assert result.exit_code == 0
    library = json.loads(result.stdout)
    assert [p["name"] for p in library["profiles"]] == list(PROFILES)
    assert library["suites"] == {name: list(members) for name, members in SUITES.items()}
    for profile in library["profiles"]:
        assert {
            "name",
            "title",
            "family",
            "intent",
            "engine",
            "needs",
            "source",
            "description",
            "params",
        } <= set(profile)
        for param in profile["params"]:
            assert {"name", "kind", "default", "allowed", "scales", "sweepable", "help"} <= set(param)


def test_workloads_table(runner: CliRunner) -> None:
    result = runner.invoke(app, ["workloads"])
    assert result.exit_code == 0
    for suite in SUITES:
        assert f"suite {suite}:" in result.stdout
    assert "dd-seq-write-1m-dsync" in result.stdout


def test_no_arguments_shows_help(runner: CliRunner) -> None:
    result = runner.invoke(app, [])
    assert result.exit_code in (0, 2)
    assert "validate" in result.stdout
    assert "agent" in result.stdout


# --------------------------------------------------------------------------- agent: argument errors


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ([], "give exactly one of --workload, --suite or --plan"),
        (["-w", "std-randread-4k", "--plan", "p.json"], "give exactly one of --workload, --suite or --plan"),
        (["-w", "std-randread-4k", "--suite", "s.json"], "give exactly one of --workload, --suite or --plan"),
        (["--suite", "s.json", "--plan", "p.json"], "give exactly one of --workload, --suite or --plan"),
        (["-w", "std-randread-4k"], "with --workload give exactly one of --emulate TYPE:SIZE or --dir PATH"),
        (
            ["-w", "std-randread-4k", "--emulate", "gp3:100", "--dir", "/tmp"],
            "with --workload give exactly one of --emulate TYPE:SIZE or --dir PATH",
        ),
    ],
)
def test_agent_source_errors(runner: CliRunner, args: list[str], message: str) -> None:
    result = runner.invoke(app, ["agent", *args])
    assert result.exit_code == 2
    assert message in result.stderr
    assert result.stdout == ""


@pytest.mark.usefixtures("as_root")
def test_agent_bad_emulate(runner: CliRunner) -> None:
    result = runner.invoke(app, ["agent", "-w", "std-randread-4k", "--emulate", "gp3:x"])
    assert result.exit_code == 2
    assert "--emulate 'gp3:x': size_gib 'x' is not a whole number" in result.stderr
    assert "TYPE:SIZE_GIB[:IOPS[:THROUGHPUT_MIBPS]]" in result.stderr


@pytest.mark.usefixtures("as_root")
def test_agent_emulate_breaking_an_aws_rule(runner: CliRunner, tmp_path: Path) -> None:
    result = runner.invoke(
        app, ["agent", "-w", "std-randread-4k", "--emulate", "io1:100:9000", "--out", str(tmp_path / "o")]
    )
    assert result.exit_code == 2
    assert "configs[0].targets[0].iops" in result.stderr
    assert "io1 allows 100..5,000 IOPS for 100 GiB" in result.stderr
    assert not (tmp_path / "o").exists()


def test_agent_bad_param(runner: CliRunner, tmp_path: Path) -> None:
    result = runner.invoke(app, ["agent", "-w", "std-randread-4k", "--dir", str(tmp_path), "-p", "noequals"])
    assert result.exit_code == 2
    assert "--param 'noequals': expected NAME=VALUE" in result.stderr


def test_agent_param_out_of_range(runner: CliRunner, tmp_path: Path) -> None:
    result = runner.invoke(app, ["agent", "-w", "std-randread-4k", "--dir", str(tmp_path), "-p", "iodepth=0"])
    assert result.exit_code == 2
    assert "workloads[0].params.iodepth" in result.stderr
    assert "int 1..1024" in result.stderr


def test_agent_unknown_profile(runner: CliRunner, tmp_path: Path) -> None:
    result = runner.invoke(app, ["agent", "-w", "dd-seq-write-1m", "--dir", str(tmp_path)])
    assert result.exit_code == 2
    assert "unknown workload profile 'dd-seq-write-1m'" in result.stderr
    assert "did you mean" in result.stderr
    assert "dd-seq-write-1m-dsync" in result.stderr


@pytest.mark.usefixtures("not_root")
@pytest.mark.parametrize("source", [["-w", "std-randread-4k", "--emulate", "gp3:100"], ["--suite", "s.json"]])
def test_agent_emulation_needs_root(runner: CliRunner, source: list[str]) -> None:
    result = runner.invoke(app, ["agent", *source])
    assert result.exit_code == 2
    assert "emulated volumes need root" in result.stderr
    assert "--dir PATH" in result.stderr


def test_agent_refuses_a_non_empty_out(runner: CliRunner, tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    (out / "old.txt").write_text("keep me", encoding="utf-8")
    work = tmp_path / "work"
    work.mkdir()
    result = runner.invoke(
        app, ["agent", "-w", "dd-seq-write-1m-dsync", "--dir", str(work), "--out", str(out)]
    )
    assert result.exit_code == 2
    assert "is not empty; results are never overwritten" in result.stderr
    assert (out / "old.txt").read_text(encoding="utf-8") == "keep me"


def test_agent_plan_file_not_json(runner: CliRunner, tmp_path: Path) -> None:
    plan = tmp_path / "plan.json"
    plan.write_text("{nope", encoding="utf-8")
    result = runner.invoke(app, ["agent", "--plan", str(plan), "--out", str(tmp_path / "o")])
    assert result.exit_code == 2
    assert "error:" in result.stderr


def test_agent_plan_file_invalid(runner: CliRunner, tmp_path: Path) -> None:
    plan = write(tmp_path / "plan.json", {"plan_version": 99})
    result = runner.invoke(app, ["agent", "--plan", str(plan), "--out", str(tmp_path / "o")])
    assert result.exit_code == 2
    assert "invalid agent plan" in result.stderr
    assert "plan_version: 99 is not supported" in result.stderr


def test_agent_plan_file_missing(runner: CliRunner, tmp_path: Path) -> None:
    result = runner.invoke(app, ["agent", "--plan", str(tmp_path / "none.json")])
    assert result.exit_code == 2
    assert "error:" in result.stderr


@pytest.mark.usefixtures("as_root")
def test_agent_suite_unknown_config(runner: CliRunner, tmp_path: Path) -> None:
    path = write(tmp_path / "ok.json", VALID)
    result = runner.invoke(
        app, ["agent", "--suite", str(path), "--config", "zz", "--out", str(tmp_path / "o")]
    )
    assert result.exit_code == 2
    assert "no config 'zz'" in result.stderr
    assert "io1, gp2" in result.stderr


@pytest.mark.usefixtures("as_root")
def test_agent_suite_invalid_request(runner: CliRunner, tmp_path: Path) -> None:
    path = write(tmp_path / "bad.json", invalid_document())
    result = runner.invoke(app, ["agent", "--suite", str(path)])
    assert result.exit_code == 2
    assert "invalid benchmark request (3 problems)" in result.stderr
    assert "configs[0].targets[0].iops" in result.stderr


def _agent_on_efs(runner: CliRunner, tmp_path: Path) -> Result:
    """The agent given a request whose config alpha's one target is EFS, which only AWS has."""
    document = {
        "name": "t",
        "configs": [{"id": "alpha", "instance_type": "c5.large", "targets": [{"kind": "efs"}]}],
        "workloads": [{"profile": "std-randread-4k"}],
    }
    path = write(tmp_path / "efs.json", document)
    return runner.invoke(app, ["agent", "--suite", str(path), "--out", str(tmp_path / "o")])


@pytest.mark.usefixtures("as_root")
def test_agent_suite_with_an_aws_only_target(runner: CliRunner, tmp_path: Path) -> None:
    result = _agent_on_efs(runner, tmp_path)
    assert result.exit_code == 2
    assert "config alpha, targets[0] (efs): needs AWS and cannot be emulated" in result.stderr


@pytest.mark.usefixtures("as_root")
def test_agent_error_keeps_the_config_id(runner: CliRunner, tmp_path: Path) -> None:
    result = _agent_on_efs(runner, tmp_path)
    assert "config alpha, targets[0]" in result.stderr


def test_agent_fio_custom_without_job_file_is_explained(runner: CliRunner, tmp_path: Path) -> None:
    result = runner.invoke(
        app, ["agent", "-w", "fio-custom", "--dir", str(tmp_path), "--out", str(tmp_path / "o")]
    )
    assert result.exit_code == 2
    assert "workloads[0].params.job_file" in result.stderr


# --------------------------------------------------------------------------- option parsers


@pytest.mark.parametrize(
    ("text", "volume"),
    [
        ("gp3:100", {"type": "gp3", "size_gib": 100}),
        ("io1:512:1500", {"type": "io1", "size_gib": 512, "iops": 1500}),
        ("gp3:200:6000:250", {"type": "gp3", "size_gib": 200, "iops": 6000, "throughput_mibps": 250}),
        ("st1:500", {"type": "st1", "size_gib": 500}),
    ],
)
def test_parse_emulate(text: str, volume: dict[str, Any]) -> None:
    assert parse_emulate(text) == volume


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("gp3", "expected TYPE:SIZE_GIB"),
        ("gp3:", "expected TYPE:SIZE_GIB"),
        (":100", "expected TYPE:SIZE_GIB"),
        ("gp3:100:", "expected TYPE:SIZE_GIB"),
        ("gp3:100:3000:125:9", "expected TYPE:SIZE_GIB"),
        ("", "expected TYPE:SIZE_GIB"),
        ("gp3:x", "size_gib 'x' is not a whole number"),
        ("gp3:1.5", "size_gib '1.5' is not a whole number"),
        ("io1:100:lots", "iops 'lots' is not a whole number"),
        ("gp3:100:3000:fast", "throughput_mibps 'fast' is not a whole number"),
    ],
)
def test_parse_emulate_errors(text: str, message: str) -> None:
    with pytest.raises(ValueError) as caught:
        parse_emulate(text)
    assert message in str(caught.value)
    assert f"--emulate {text!r}" in str(caught.value)


def test_parse_params() -> None:
    assert parse_params([]) == {}
    assert parse_params(["iodepth=32", "bs=4k", "numjobs=[1,2,4]", "direct=1", "timeseries=false"]) == {
        "iodepth": 32,
        "bs": "4k",
        "numjobs": [1, 2, 4],
        "direct": 1,
        "timeseries": False,
    }
    assert parse_params(["command=echo a=b"]) == {"command": "echo a=b"}  # only the first = splits
    assert parse_params(['bs="8k"']) == {"bs": "8k"}
    assert parse_params(["bs=4k", "bs=8k"]) == {"bs": "8k"}  # the last one wins
    assert parse_params(["command="]) == {"command": ""}


@pytest.mark.parametrize("item", ["noequals", "=32", ""])
def test_parse_params_errors(item: str) -> None:
    with pytest.raises(ValueError, match="expected NAME=VALUE"):
        parse_params([item])


# --------------------------------------------------------------------------- agent: a real run


def _agent_dd(runner: CliRunner, tmp_path: Path, *extra: str) -> tuple[Result, Path, Path]:
    """The agent's dd write at scale 0.001 in a fresh directory: its result, the directory and --out."""
    work = tmp_path / "work"
    work.mkdir()
    out = tmp_path / "out"
    args = ["agent", "-w", "dd-seq-write-1m-dsync", "--dir", str(work), "--scale", "0.001"]
    return runner.invoke(app, [*args, *extra, "--out", str(out)]), work, out


def test_agent_runs_dd_in_a_directory(runner: CliRunner, tmp_path: Path) -> None:
    result, work, out = _agent_dd(runner, tmp_path, "--json")
    assert result.exit_code == 0, result.stderr
    document = json.loads(result.stdout)
    assert document["output"] == str(out)
    # One 1 MiB block in milliseconds: flagged, not hidden (protocol.measurable)
    assert document["problems"] == []  # kept and labelled: a warning, not a failed phase
    [warning] = document["warnings"]
    assert "write: too small to measure" in warning
    records = document["records"]
    assert records
    for record in records:
        assert "too-small" in record["labels"]
        assert record["workload"] == "dd-seq-write-1m-dsync"
        assert record["engine"] == "dd"
        assert record["direction"] == "write"
        assert record["bw_mibps"] > 0
        assert record["bytes"] == 1 << 20  # 1,000 blocks x 0.001 -> 1 block of 1 MiB
    assert (out / "manifest.json").exists()
    assert (out / "plan.json").exists()
    assert list(work.iterdir()) == []  # the step cleaned up what it wrote


def test_agent_text_output_with_repetitions(runner: CliRunner, tmp_path: Path) -> None:
    result, _, out = _agent_dd(runner, tmp_path, "--repetitions", "2")
    assert result.exit_code == 0, result.stderr
    assert "raw output and manifest:" in result.stdout  # the table wraps names at 80 columns
    plan = json.loads((out / "plan.json").read_text(encoding="utf-8"))
    assert [s["id"] for s in plan["steps"]] == [
        "dd-seq-write-1m-dsync.local0.r1",
        "dd-seq-write-1m-dsync.local0.r2",
    ]
    assert plan["prewarm"]["method"] == "none"


def test_agent_progress_goes_to_the_current_stderr(runner: CliRunner, tmp_path: Path) -> None:
    result, _, _ = _agent_dd(runner, tmp_path, "--json")
    assert result.exit_code == 0
    assert "preparing target local0 (directory)" in result.stderr

"""``storagebench compare`` on local results: two runs or a suite's, what is printed at 80 columns,
the flat formats, and exit 2 naming what is wrong."""

from __future__ import annotations

import csv
import io
import json
from typing import Any

import pytest
from tests.support.cli_backends import serve_local_store
from tests.support.records import emulated, latency, result_record, stored_result
from typer.testing import CliRunner

from storagebench.cli import compare_cmd
from storagebench.cli.console import out
from storagebench.cli.main import app
from storagebench.costs.run_compare import FLAT_FIELDS
from storagebench.results.records import ResultRecord

OLD = "local-demo-20261125T151152Z-e9fe"
NEW = "local-demo-20261125T165838Z-db47"
RUNNING = "local-demo-20261125T170524Z-42a8"
OPTIONS = {"gp3": "c5.4xlarge/ebs:gp3:100GiB:xfs", "io1": "c5.4xlarge/ebs:io1:100GiB:4000iops:xfs"}
IOPS = {
    OLD: {"gp3": [3000.5, 3042.0, 3011.0], "io1": [3999.0, 4003.0, 4001.0]},
    NEW: {"gp3": [3300.5, 3342.0, 3311.0], "io1": [3998.0, 4004.0, 4002.0]},
}
STARTED = {OLD: "2026-11-25T15:11:52Z", NEW: "2026-11-25T16:58:38Z", RUNNING: "2026-11-25T17:05:24Z"}


def measured(config_id: str, repetition: int, iops: float) -> ResultRecord:
    lat = latency(399 + repetition, mean_us=250, stdev_us=9, min_us=60, max_us=9000)
    rates = {"iops": iops, "bw_mibps": iops * 4 / 1024}
    return emulated(result_record(config_id=config_id, repetition=repetition, **rates, latency=lat))


def stored_run(run_id: str) -> dict[str, Any]:
    results = [
        stored_result(measured(cid, i + 1, v), {"storage_option": OPTIONS[cid], "suite": "local-demo"})
        for cid, values in IOPS[run_id].items()
        for i, v in enumerate(values)
    ]
    if run_id == OLD:  # only the older run measured sequential reads
        results.append({**results[0], "record": {**results[0]["record"], "workload": "std-seqread-1m"}})
    run = {"run_id": run_id, "suite": "local-demo", "status": "SUCCEEDED", "started_at": STARTED[run_id]}
    return {"run": run, "configs": [], "results": results}


class FakeStore:
    """The local store (DynamoDB Local in real use) holding two finished demo runs and one running."""

    def get_run(self, run_id: str) -> dict[str, Any]:
        if run_id not in IOPS:
            raise KeyError(run_id)
        return stored_run(run_id)

    def list_runs_page(self, suite: str, limit: int = 10, cursor: str | None = None) -> Any:
        if suite != "local-demo":
            return [], None
        runs = [
            {"run_id": RUNNING, "status": "RUNNING", "started_at": STARTED[RUNNING]},
            {"run_id": NEW, "status": "SUCCEEDED", "started_at": STARTED[NEW]},
            {"run_id": OLD, "status": "SUCCEEDED", "started_at": STARTED[OLD]},
        ]
        # one run a page: the command follows the cursor
        start = int(cursor or 0)
        return runs[start : start + 1], (str(start + 1) if start + 1 < len(runs) else None)


@pytest.fixture(autouse=True)
def local_results(monkeypatch: pytest.MonkeyPatch) -> None:
    serve_local_store(monkeypatch, FakeStore, compare_cmd)
    monkeypatch.setenv("COLUMNS", "80")
    monkeypatch.setattr(out, "width", 80)


def compare(*args: str) -> Any:
    return CliRunner().invoke(app, ["compare", *args], env={"COLUMNS": "80"})


def test_two_runs_at_80_columns() -> None:
    result = compare(OLD, NEW)
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert all(len(line) <= 80 for line in lines), max(lines, key=len)
    assert "…" not in result.stdout
    assert f"run A: {OLD}" in lines and f"run B: {NEW}" in lines  # whole ids, on lines of their own
    assert lines[5].startswith("emulated: emulated volumes (gp3, io1)")
    gp3 = next(i for i, line in enumerate(lines) if line.startswith(OPTIONS["gp3"]))
    iops = next(line for line in lines[gp3:] if line.startswith("IOPS"))
    assert iops.split() == ["IOPS", "3,018", "3,318", "+9.9", "+8.2..+12", "<0.001", "faster"]
    io1 = next(i for i, line in enumerate(lines) if line.startswith(OPTIONS["io1"]))
    io1_iops = next(line for line in lines[io1:] if line.startswith("IOPS"))
    assert "faster" not in io1_iops and "slower" not in io1_iops
    assert "no sig. difference" in io1_iops or "too few (need" in io1_iops
    assert "only in A: c5.4xlarge/ebs:gp3:100GiB:xfs  std-seqread-1m, read" in result.stdout


def test_json_is_the_whole_comparison() -> None:
    result = compare(OLD, NEW, "--format", "json")
    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)
    assert (document["a"]["run_id"], document["b"]["run_id"]) == (OLD, NEW)
    gp3 = next(m for m in document["measurements"] if m["config_a"] == "gp3")
    iops = next(x for x in gp3["metrics"] if x["metric"] == "iops")
    assert iops["verdict"] == "faster" and iops["p_value"] < 0.001 and iops["better"] is True
    assert [u["workload"] for u in document["only_in_a"]] == ["std-seqread-1m"]


@pytest.mark.parametrize("fmt", ["jsonl", "csv"])
def test_flat_formats_have_one_row_per_measurement_and_metric(fmt: str) -> None:
    result = compare(OLD, NEW, "--format", fmt)
    assert result.exit_code == 0, result.output
    if fmt == "jsonl":
        rows = [json.loads(line) for line in result.stdout.splitlines()]
    else:
        rows = list(csv.DictReader(io.StringIO(result.stdout)))
    assert all(list(row) == list(FLAT_FIELDS) for row in rows)
    iops = [r for r in rows if r["metric"] == "iops"]
    assert (iops[0]["config_a"], iops[0]["verdict"]) == ("gp3", "faster")
    assert rows[-1]["verdict"] == "only in A"


def test_a_suite_compares_its_latest_finished_run_with_the_one_before() -> None:
    result = compare("--suite", "local-demo", "--format", "json")
    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)
    assert (document["a"]["run_id"], document["b"]["run_id"]) == (OLD, NEW)  # the running one skipped
    dated = compare("--suite", "local-demo", "--against", "2026-11-25T16:00:00Z", "--format", "json")
    assert json.loads(dated.stdout)["a"]["run_id"] == OLD


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ([OLD, "no-such-run"], "RUN_B: no run 'no-such-run' in the local results"),
        ([OLD], "give two runs (compare RUN_A RUN_B) or a suite"),
        ([OLD, OLD], "RUN_A and RUN_B are the same run"),
        ([OLD, NEW, "--suite", "local-demo"], "give two runs or --suite NAME, not both"),
        ([OLD, NEW, "--against", "2026-11-01"], "--against '2026-11-01' chooses a suite's run"),
        (
            ["--suite", "local-demo", "--against", "2026-11-01"],
            "no finished run of suite local-demo started before",
        ),
        (["--suite", "local-demo", "--against", "yesterday"], "--against 'yesterday' is not an ISO date"),
        (["--suite", "nightly"], "suite nightly has no runs"),
        ([OLD, NEW, "--format", "xml"], "--format 'xml' is not one of table, json, jsonl, csv"),
        ([OLD, NEW, "--local", "--stack", "s"], "not both"),
    ],
)
def test_bad_input_exits_2_saying_what_is_wrong(args: list[str], message: str) -> None:
    result = compare(*args)
    assert result.exit_code == 2, result.output
    assert message in " ".join(result.stderr.split())

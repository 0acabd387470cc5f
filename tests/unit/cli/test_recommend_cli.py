"""``storagebench recommend`` on local results, and ``run --require``: what is printed at 80 columns
and the exit status (0 a config meets every requirement, 1 none does, 2 bad input)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from tests.support.cli_backends import serve_local_store
from tests.support.records import emulated, repetitions
from typer.testing import CliRunner

from storagebench.cli import recommend_cmd
from storagebench.cli.main import app

EVENTS = Path(__file__).resolve().parents[3] / "events"
RUN = "local-demo-20261125T151152Z-e9fe"
IOPS = {"gp2": [3000.0, 3010.0], "gp3": [3005.0, 3011.0], "io1": [3999.0, 4003.0]}
MONTHLY = {"gp2": 507.04, "gp3": 505.04, "io1": 769.54}


def stored_run() -> dict[str, Any]:
    request = json.loads((EVENTS / "local-demo.json").read_text(encoding="utf-8"))
    request.pop("requirements")  # judged only on what each test requires
    results = [emulated(record).model_dump(mode="json") for record in repetitions(IOPS)]
    economics = {
        "configs": [{"id": c, "monthly_usd": usd, "cost_partial": False} for c, usd in MONTHLY.items()]
    }
    run = {"run_id": RUN, "status": "SUCCEEDED", "request": request, "economics": economics}
    return {"run": run, "configs": [], "results": results}


class FakeStore:
    def get_run(self, run_id: str) -> dict[str, Any]:
        if run_id != RUN:
            raise KeyError(run_id)
        return stored_run()

    def metric_history(
        self, storage_option: str, workload: str, variant: Any, phase: str, direction: str, since: str
    ) -> list[dict[str, Any]]:
        """The demo run's results as series points, under the keys the request's configs map to."""
        config_id = {
            "c5.4xlarge/ebs:gp2:100GiB:xfs": "gp2",
            "c5.4xlarge/ebs:gp3:100GiB:xfs": "gp3",
            "c5.4xlarge/ebs:io1:100GiB:4000iops:xfs": "io1",
        }.get(storage_option)
        points = []
        for item in stored_run()["results"]:
            wanted = (config_id, direction, workload)
            if (item["config_id"], item["direction"], item["workload"]) == wanted:
                record = {k: v for k, v in item.items() if k != "config_id"}
                points.append({"started_at": "2026-11-25T15:11:52Z", "run_id": RUN, "record": record})
        return points if since <= "2026-11-25" else []


@pytest.fixture(autouse=True)
def local_results(monkeypatch: pytest.MonkeyPatch) -> None:
    """The local store (DynamoDB Local in real use) holding the demo run."""

    serve_local_store(monkeypatch, FakeStore, recommend_cmd)
    monkeypatch.setenv("COLUMNS", "80")


def recommend(*args: str) -> Any:
    return CliRunner().invoke(app, ["recommend", "--run", RUN, *args])


def test_a_config_meeting_the_requirement_is_named_and_exits_0() -> None:
    result = recommend("--require", "std-randread-4k:iops>=3500")
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert f"run {RUN}" in lines  # the whole id, on a line of its own
    assert "io1 at $769.54/month is the cheapest config meeting std-randread-4k:iops>=3500" in lines
    assert all(len(line) <= 80 for line in lines) and "…" not in result.stdout
    assert lines[0].startswith("emulated: emulated volumes (gp2, gp3, io1)")


def test_none_meeting_names_none_says_why_for_each_config_and_exits_1() -> None:
    result = recommend("--require", "std-randread-4k:iops>=5000")
    assert result.exit_code == 1, result.output
    text = " ".join(result.stdout.split())
    assert "no config meets std-randread-4k:iops>=5000" in text
    for config_id in IOPS:
        assert f"│ {config_id} " in result.stdout
    assert result.stdout.count("FAILS std-randread-4k:iops>=5000 (read)") == 3
    assert "not >= 5,000 (mean 4,001, 2 runs)" in " ".join(result.stdout.replace("│", " ").split())
    assert "…" not in result.stdout
    assert "no config meets every requirement: exit 1" in result.stderr


def test_json_carries_the_whole_answer_and_the_same_exit_status() -> None:
    result = recommend("-r", "std-randread-4k:iops>=3500", "-r", "std-randread-4k:read:iops>=4100", "--json")
    assert result.exit_code == 1
    answer = json.loads(result.stdout)
    assert answer["recommended"] is None and len(answer["failed"]) == 3
    io1 = next(v for v in answer["failed"] if v["config_id"] == "io1")
    assert [c["met"] for c in io1["checks"]] == [True, False]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--require", "std-randread-4k:p95<2"], "unknown metric 'p95'"),
        (["--require", "std-randwrite-4k:iops>=1"], "workloads: std-randread-4k, std-seqread-1m"),
        ([], "request has no requirements"),
        (["--require", "std-randread-4k:iops>=1", "--local", "--stack", "s"], "not both"),
    ],
)
def test_bad_input_exits_2_saying_what_is_wrong(args: list[str], message: str) -> None:
    result = recommend(*args)
    assert result.exit_code == 2, result.output
    assert message in " ".join(result.stderr.split())


def test_an_unknown_run_exits_2() -> None:
    result = CliRunner().invoke(app, ["recommend", "--run", "nope", "-r", "std-randread-4k:iops>=1"])
    assert result.exit_code == 2 and "no run 'nope'" in result.stderr


# ------------------------------------------------------------------------------ run --require


def run_demo_requiring(requirement: str, *where: str) -> Any:
    """``storagebench run`` of the local demo ``where`` it is told, with ``--require requirement``."""
    suite = str(EVENTS / "local-demo.json")
    return CliRunner().invoke(app, ["run", *where, "--suite", suite, "--require", requirement])


def test_run_refuses_a_bad_requirement_before_anything_runs() -> None:
    result = run_demo_requiring("std-randread-4k:iops=>1", "--local")
    assert result.exit_code == 2
    assert "did you mean >=" in result.stderr


def test_run_on_a_stack_refuses_require_since_it_only_starts_the_run() -> None:
    result = run_demo_requiring("std-randread-4k:iops>=1", "--stack", "s")
    assert result.exit_code == 2
    assert "storagebench recommend --stack" in " ".join(result.stderr.split())


def test_without_require_the_requests_requirements_decide(monkeypatch: pytest.MonkeyPatch) -> None:
    document = stored_run()
    document["run"]["request"]["requirements"] = ["std-randread-4k:iops>=3500"]
    monkeypatch.setattr(FakeStore, "get_run", lambda self, run_id: document)
    result = recommend()
    assert result.exit_code == 0, result.output
    assert "requirements: std-randread-4k:iops>=3500" in result.stdout


def recommend_suite(*args: str) -> Any:
    return CliRunner().invoke(app, ["recommend", "--suite", str(EVENTS / "local-demo.json"), *args])


def test_a_dry_recommendation_from_history_names_io1_and_its_source() -> None:
    result = recommend_suite("--require", "std-randread-4k:iops>=3500", "--since", "2026-11-01")
    assert result.exit_code == 0, result.output
    assert "io1 at $769.54/month is the cheapest config meeting" in result.stdout
    assert "from stored history (nothing launched)" in result.stdout
    assert f"run {RUN}" in " ".join(result.stdout.split())


def test_a_dry_recommendation_without_history_fails_each_config_and_exits_1() -> None:
    result = recommend_suite("--require", "std-randread-4k:iops>=3500", "--since", "2026-11-30")
    assert result.exit_code == 1, result.output
    assert "no history since 2026-11-30" in " ".join(result.stdout.split())


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--since", "yesterday"], "--since 'yesterday' is not a date"),
        (["--run", RUN], "give exactly one of --run RUN_ID or --suite FILE"),
        (["--require", "std-nothing:iops>=1"], "unknown workload 'std-nothing'"),
    ],
)
def test_a_dry_recommendation_refuses_bad_input_by_name(args: list[str], message: str) -> None:
    result = recommend_suite(*args)
    assert result.exit_code == 2, result.output
    assert message in " ".join(result.stderr.split())


def test_since_without_suite_is_refused() -> None:
    result = recommend("--since", "2026-11-01")
    assert result.exit_code == 2
    assert "--since goes with --suite FILE" in result.stderr

"""``results --run ID --format json --histograms`` and ``run --local --json`` carry each record's
latency histogram as the agent measured it; ``results`` without the option, its tables and the
progress of a local run read the run without them (the store keeps them apart: one more Query).
On the real store (DynamoResultsStore on moto, the table template.yaml defines), with records
parsed from real fio output."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import boto3
import pytest
from moto import mock_aws
from tests.support.cli_backends import serve_local_store
from tests.support.fio_runs import measured
from tests.support.moto_env import moto_credentials
from typer.testing import CliRunner

from storagebench.adapters.aws.dynamodb import DynamoResultsStore
from storagebench.cli import results_cmd
from storagebench.cli.main import app
from storagebench.results.records import ResultRecord
from storagebench_local.session import Execution
from storagebench_local.template import Template

REPO = Path(__file__).resolve().parents[3]
REGION = "us-east-1"
TABLE = "storagebench-results"
RUN = "local-demo-20301102T030405Z-3f9c2a"
STARTED = "2030-11-02T03:04:05Z"
LABELS = {"storage_option": "local/ebs:gp3:1GiB:ext4", "suite": "local-demo"}


WRITTEN = [
    *measured("numjobs4", "std-randread-4k", 1, STARTED),
    *measured("single_randread", "std-randread-4k", 2, STARTED),
    *measured("new_group", "two-groups", 1, STARTED),
]


class Store(DynamoResultsStore):
    """The real store, noting whether each run read asked for the histograms."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.reads: list[bool] = []

    def get_run(self, run_id: str, *, histograms: bool = False) -> dict[str, Any]:
        self.reads.append(histograms)
        return super().get_run(run_id, histograms=histograms)


@pytest.fixture
def store(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[Store]:
    """A local run as Plan and Collect stored it; ``results`` reads it from here."""
    moto_credentials(monkeypatch, REGION)
    with mock_aws():
        client = boto3.client("dynamodb", region_name=REGION)
        client.create_table(**Template(REPO / "template.yaml").table_kwargs("ResultsTable", TABLE))
        found = Store(client, TABLE)
        found.start_run(RUN, "local-demo", {"name": "local-demo"}, STARTED, STARTED, ["gp3"])
        assert found.put_results(RUN, "gp3", WRITTEN, STARTED, LABELS) == len(WRITTEN)

        serve_local_store(monkeypatch, lambda: found, results_cmd)
        monkeypatch.chdir(tmp_path)
        yield found


def histograms_by_record(document: dict[str, Any]) -> dict[tuple[Any, ...], Any]:
    """Each stored record's histogram (None when the read left it out), by measurement and repetition."""
    found = {}
    for result in document["results"]:
        record = ResultRecord.model_validate(result["record"])
        found[(*record.key(), record.repetition)] = record.histogram
    return found


def expected() -> dict[tuple[Any, ...], Any]:
    return {(*r.key(), r.repetition): r.histogram for r in WRITTEN}


def test_results_json_leaves_the_histograms_out_by_default(store: Store) -> None:
    result = CliRunner().invoke(app, ["results", "--run", RUN, "--format", "json"])
    assert result.exit_code == 0, result.output
    got = histograms_by_record(json.loads(result.stdout))
    assert set(got) == set(expected()) and all(h is None for h in got.values())
    assert store.reads == [False]


def test_results_json_with_histograms_gives_back_what_the_agent_measured(store: Store) -> None:
    result = CliRunner().invoke(app, ["results", "--run", RUN, "--format", "json", "--histograms"])
    assert result.exit_code == 0, result.output
    got = histograms_by_record(json.loads(result.stdout))
    assert got == expected() and all(got.values())
    assert store.reads == [True]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--run", RUN], "not --format table"),
        (["--run", RUN, "--format", "jsonl"], "not --format jsonl"),
        (["--run", RUN, "--format", "csv"], "not --format csv"),
        (["--suite", "local-demo", "--format", "json"], "--histograms goes with --run RUN_ID --format json"),
        (
            ["--storage", "x", "--workload", "std-randread-4k", "--format", "json"],
            "--histograms goes with --run RUN_ID --format json",
        ),
    ],
)
def test_histograms_where_they_have_no_place_are_refused(store: Store, args: list[str], message: str) -> None:
    result = CliRunner().invoke(app, ["results", *args, "--histograms"], env={"COLUMNS": "200"})
    assert result.exit_code == 2, result.output
    assert message in " ".join(result.stderr.split())
    assert store.reads == []  # refused before anything is read


# ----------------------------------------------------------------------------- run --local --json


class Session:
    """LocalSession as ``run --local`` drives it, over the store above: the run it starts is the
    one stored there, and its progress is polled once before it ends."""

    def __init__(self, store: Store) -> None:
        self.notices: list[str] = []
        self.services = SimpleNamespace(store=store)

    def __enter__(self) -> Session:
        return self

    def __exit__(self, *_: object) -> None:
        return None

    def start(self, document: dict[str, Any]) -> tuple[str, str]:
        return RUN, f"arn:aws:states:{REGION}:123456789012:execution:storagebench:{RUN}"

    def instance_prefix(self, run_id: str, config_id: str, *, max_age_s: float = 0.0) -> str | None:
        return None  # no instance yet: the progress line shows the config's status alone

    def wait(self, run_id: str, arn: str, on_poll: Callable[[str], None]) -> Execution:
        on_poll(run_id)
        return Execution(
            run_id=run_id,
            arn=arn,
            status="SUCCEEDED",
            output={"status": "SUCCEEDED"},
            error=None,
            cause=None,
            wall_s=12.5,
        )


@pytest.mark.parametrize("as_json", [True, False])
def test_run_local_json_prints_the_histograms_and_its_progress_reads_without(
    store: Store, monkeypatch: pytest.MonkeyPatch, as_json: bool
) -> None:
    monkeypatch.setattr("storagebench_local.session.LocalSession", lambda root, options: Session(store))
    args = ["run", "--local", "--suite", str(REPO / "events" / "local-demo.json")]
    result = CliRunner().invoke(app, [*args, "--json"] if as_json else args, env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    assert store.reads == [False, as_json]  # the progress poll, then the answer
    if as_json:
        document = json.loads(result.stdout)
        assert document["run_id"] == RUN and document["execution"]["status"] == "SUCCEEDED"
        assert histograms_by_record(document) == expected()

"""One read path for a run: ``results --run`` renders the same stored run identically from the local
store and from a stack's API (``GET /runs/{id}``'s JSON read back into the run view), both through
``api.run_view``: the caveats first, the run's row, each config's status, storage option and errors,
the costs, the measurements table with its load curve and latency-SLA answer, how the repetitions
stopped, and the notes. On moto: the real store (the table template.yaml defines) and the API
served on 127.0.0.1, called over HTTP with SigV4."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from test_run_repetitions import STARTED
from test_run_repetitions import _state as config_state
from tests.support.api_cli import Signed, cli, hooks, served  # noqa: F401 - the served API and its hooks are fixtures
from tests.support.api_events import call
from tests.support.api_stack import REGION, Stack
from typer.testing import CliRunner

from storagebench.api.models import RunDetail
from storagebench.api.run_view import RunReader
from storagebench.cli import results_cmd
from storagebench.cli.main import app
from storagebench.core.series import SteadyStateOutcome
from storagebench.core.state import CollectSummary, ConfigState, ErrorInfo
from storagebench.results.records import LatencyStats, ResultRecord, SlaSearch

RUN = "demo-1"
SUITE = "local-demo"
OPTIONS = {"gp3": "c5.4xlarge/ebs:gp3:100GiB", "io1": "c5.4xlarge/ebs:io1:100GiB:5000iops"}
VERDICT = SteadyStateOutcome(
    step="std-seqread-1m.ebs0.r1",
    phase="run",
    job="seq",
    criterion="bw_slope:0.5%",
    attained=False,
    duration_s=30,
)
FAILURE = ErrorInfo(step="Collect", error="AgentError", cause="fio exited 1: io_u error on file /dev/nvme1n1")


def measured(config_id: str, iodepth: int, repetition: int, iops: float, p95_us: float) -> ResultRecord:
    """One repetition of a queue-depth sweep point, on an emulated volume."""
    return ResultRecord(
        config_id=config_id,
        target_id="ebs0",
        workload="std-randread-4k",
        profile="fio-randread",
        variant={"iodepth": iodepth},
        repetition=repetition,
        phase="run",
        direction="read",
        engine="fio",
        iops=iops,
        bw_mibps=iops * 4 / 1024,
        bytes=int(iops * 4096 * 60),
        ios=int(iops * 60),
        runtime_s=60.0,
        latency=LatencyStats(
            basis="clat",
            samples=int(iops * 60),
            mean_us=p95_us / 2,
            stdev_us=p95_us / 4,
            min_us=50.0,
            max_us=p95_us * 4,
            p95_us=p95_us,
            p99_us=p95_us * 1.5,
        ),
        labels=[f"emulated:{config_id}:100GiB"],
    )


def sla_record(config_id: str) -> ResultRecord:
    """A latency-SLA search that found 1,800 IOPS under p99 1 ms (Collect keeps it on the record)."""
    probes = [(100, 100.0, 400.0, True), (3000, 2900.0, 4000.0, False), (1800, 1800.0, 950.0, True)]
    sla = SlaSearch.model_validate(
        {
            "percentile": 99.0,
            "target_us": 1000.0,
            "low_iops": 100,
            "high_iops": 3000,
            "tolerance": 0.05,
            "max_probes": 3,
            "min_delivered": 0.95,
            "met": True,
            "sustained_iops": 1800.0,
            "answer_probe": 3,
            "bracket": [1800, 3000],
            "stopped": "max-probes",
            "probes": [
                {
                    "probe": n,
                    "rate_iops": rate,
                    "iops": iops,
                    "latency_us": p99,
                    "delivered": iops / rate,
                    "ios": int(iops * 30),
                    "runtime_s": 30.0,
                    "met": met,
                    "dir": f"probe-{n:02d}",
                    **({} if met else {"why": "p99 over 1 ms"}),
                }
                for n, (rate, iops, p99, met) in enumerate(probes, start=1)
            ],
        }
    )
    return measured(config_id, 1, 1, 1800.0, 700.0).model_copy(
        update={"workload": "sla-randread-4k", "variant": {}, "phase": "search", "sla": sla}
    )


def _state(config_id: str, collected: CollectSummary | None, errors: list[ErrorInfo]) -> ConfigState:
    """The config's workflow state as test_run_repetitions writes it (run demo-1), with its errors."""
    return config_state(config_id, collected).model_copy(update={"errors": errors})


def _record(stack: Stack) -> None:
    """A run as the workflow stores it: two configs measured (a sweep and an SLA search), one of
    them failed with an error and a steady-state verdict, and the costs Finalize recorded."""
    store = stack.store
    store.start_run(RUN, SUITE, {"name": SUITE}, STARTED, "2030-01-03T03:04:05Z", ["gp3", "io1"])
    for config_id, scale in (("gp3", 1.0), ("io1", 1.6)):
        records = [
            measured(config_id, depth, rep, 1000.0 * depth * scale * (1 + rep / 100), 200.0 * depth**1.4)
            for depth in (1, 4, 16, 64)
            for rep in (1, 2)
        ]
        store.put_results(
            RUN,
            config_id,
            [*records, sla_record(config_id)],
            STARTED,
            {"storage_option": OPTIONS[config_id], "suite": SUITE},
        )
    summary = CollectSummary(status="ok", records=9, steady_state=[VERDICT])
    store.put_config(_state("gp3", summary, []), "CLEANED")
    store.put_config(_state("io1", None, [FAILURE]), "FAILED")
    store.record_economics(
        RUN,
        {
            "baseline": "gp3",
            "price_source": "snapshot",
            "price_date": "2030-01-01",
            "run_cost_usd": 3.21,
            "configs": [
                {
                    "id": "gp3",
                    "monthly_usd": 130.0,
                    "delta_monthly_pct": 0.0,
                    "run_usd": 1.1,
                    "verdict": "baseline",
                },
                {
                    "id": "io1",
                    "monthly_usd": 480.0,
                    "delta_monthly_pct": 269.2,
                    "run_usd": 2.11,
                    "verdict": "269 % more expensive; 1.6x faster on 4k random read",
                },
            ],
        },
    )


@pytest.fixture
def local(stack: Stack, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Stack:
    """``results`` without --stack reads the same table as the local store."""

    @contextmanager
    def local_store(root: Path) -> Iterator[Any]:
        yield stack.store

    monkeypatch.setattr(results_cmd, "local_store", local_store)
    monkeypatch.chdir(tmp_path)
    return stack


def _shown(*args: str) -> Any:
    result = CliRunner().invoke(app, ["results", "--run", RUN, *args], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    return result


def test_a_run_renders_the_same_from_the_local_store_and_from_the_stacks_api(
    local: Stack,
    served: tuple[str, Signed],  # noqa: F811
) -> None:
    _record(local)
    url, signed = served
    here = _shown()
    there = _shown("--api-url", url, "--region", REGION)
    assert signed.problems == []
    assert there.stdout == here.stdout
    assert there.stderr == here.stderr
    # ... and what they both show is the whole run, not two empty answers
    words = " ".join(here.stdout.replace("│", " ").split())
    assert here.stdout.startswith("caveat: throttled emulated volumes (")
    assert f"run {RUN}" in here.stdout
    for fragment in (
        OPTIONS["gp3"],
        OPTIONS["io1"],
        "Collect: AgentError: fio exited 1: io_u error on file /dev/nvme1n1",
        "269 % more expensive",
        "$3.21",
        "iodepth=64",
        "latency against load, gp3 std-randread-4k (read)",
        "latency SLA, io1 sla-randread-4k, p99 <= 1 ms: sustains 1,800 IOPS",
        "gp3: std-seqread-1m.ebs0.r1 run seq: steady state not attained",
    ):
        assert fragment in words, f"{fragment!r} not in {words}"
    # every grade is marked: 2 configs x (4 sweep points + the SLA search); the cell wraps
    assert here.stdout.count("(emulated") >= 2 * (4 + 1)


def test_the_apis_run_document_is_the_run_view_of_the_stored_run(local: Stack) -> None:
    _record(local)
    status, body, _ = call(local.handler, "GET", f"/runs/{RUN}")
    assert status == 200, body
    view = RunReader(local.store).get_run(RUN)
    assert RunDetail.model_validate(body) == view
    assert json.loads(view.model_dump_json()) == body
    assert view.emulated == ["gp3", "io1"] and len(view.caveats) == 1
    assert [s.config_id for s in view.sla_searches] == ["gp3", "io1"]
    options = {c.config_id: c.storage_options for c in view.configs}
    assert options == {c: {"ebs0": o} for c, o in OPTIONS.items()}


def test_a_stack_document_that_does_not_read_exits_1_naming_the_field(
    local: Stack,
    served: tuple[str, Signed],  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    _record(local)
    url, _ = served
    real = RunReader.get_run

    def older(self: RunReader, run_id: str, *, histograms: bool = False) -> Any:
        view = real(self, run_id, histograms=histograms)
        return view.model_copy(update={"status": None})  # a status the model refuses

    monkeypatch.setattr(RunReader, "get_run", older)
    result = CliRunner().invoke(app, ["results", "--run", RUN, "--api-url", url, "--region", REGION])
    assert result.exit_code == 1, result.output
    assert "the API's run document does not read as a run view: status:" in " ".join(result.stderr.split())

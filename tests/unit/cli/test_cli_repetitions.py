"""``results --run`` shows how each config's repetitions stopped, with one renderer for a local run
(the stored document) and a stack's run (the API's run document): each adaptive series' spent,
allowed, precision reached and why it stopped, and a line per steady-state verdict; whole at 80
columns, nothing when the run recorded neither, a note for an entry that does not read."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from tests.support.cli_backends import serve_local_store, serve_stack_api
from tests.support.report_runs import adaptive_series
from typer.testing import CliRunner

from storagebench.api.models import ConfigProgress
from storagebench.cli import results_cmd
from storagebench.cli.main import app

RUN = "local-demo-20261125T165801Z-3f9c2a"


VERDICT = {
    "step": "std-seqread-1m.ebs0.r1",
    "phase": "run",
    "job": "std-seqread-1m",
    "criterion": "iops_slope:0.3%",
    "attained": False,
    "duration_s": 60.0,
    "ramp_s": 10.0,
    "runtime_s": 300.0,
}
COLLECTED: dict[str, dict[str, Any]] = {
    "gp3": {
        "series": [adaptive_series("std-randread-4k.ebs0", [3010.0, 2995.0, 3004.0], bounds=(2, 10))],
        "steady_state": [],
    },
    "gp2": {
        "series": [adaptive_series("std-randread-4k.ebs0", [1650.0, 1480.0, 910.0, 1590.0], bounds=(2, 4))],
        "steady_state": [VERDICT],
    },
    "io1": {
        "series": [adaptive_series("std-randread-4k.ebs0", [2010.0, 2400.0], bounds=(3, 8))],
        "steady_state": [],
    },
}


def stored(collected: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """``get_run`` of a local run whose configs' collect summaries hold ``collected``."""
    configs = [
        {
            "run_id": RUN,
            "config_id": config_id,
            "status": "CLEANED",
            "updated_at": "2026-11-25T17:01:02Z",
            "state": {"collected": {"status": "ok", "records": 3, "problems": [], **summary}},
        }
        for config_id, summary in collected.items()
    ]
    run = {"run_id": RUN, "suite": "local-demo", "status": "SUCCEEDED", "configs": list(collected)}
    return {"run": run, "configs": configs, "results": []}


def api_document(collected: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """``GET /runs/{id}``: each config's progress as the API's model dumps it."""
    configs = [
        ConfigProgress(config_id=config_id, status="CLEANED", **summary).model_dump(mode="json")
        for config_id, summary in collected.items()
    ]
    run = {"run_id": RUN, "suite": "local-demo", "status": "SUCCEEDED", "configs": list(collected)}
    return {
        "run_id": RUN,
        "status": "SUCCEEDED",
        "execution": None,
        "run": run,
        "configs": configs,
        "results": [],
        "economics": None,
        "regressions": [],
        "notes": [],
    }


@pytest.fixture
def collected(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> dict[str, dict[str, Any]]:
    """What the configs recorded; the local store and the stack's API both answer with it."""
    recorded: dict[str, dict[str, Any]] = {}

    class Store:
        def get_run(self, run_id: str, *, histograms: bool = False) -> dict[str, Any]:
            return stored(recorded)

        def get_regressions(self, run_id: str) -> list[dict[str, Any]]:
            return []

    class Api:
        def call(self, method: str, path: str, *args: Any, **kwargs: Any) -> tuple[int, Any]:
            assert (method, path) == ("GET", f"/runs/{RUN}")
            return 200, api_document(recorded)

    serve_local_store(monkeypatch, Store, results_cmd)
    serve_stack_api(monkeypatch, Api)
    (tmp_path / ".storagebench" / "artifacts" / "runs" / RUN).mkdir(parents=True)
    monkeypatch.chdir(tmp_path)
    return recorded


WHERE = {"local": ["results", "--run", RUN], "stack": ["results", "--stack", "sb", "--run", RUN]}


def _words(text: str) -> str:
    """The table's cells joined across the lines they wrap on."""
    return " ".join(text.replace("│", " ").split())


@pytest.mark.parametrize("where", list(WHERE))
def test_each_series_and_verdict_is_shown_whole_at_80_columns(
    collected: dict[str, dict[str, Any]], where: str
) -> None:
    collected.update(COLLECTED)
    result = CliRunner().invoke(app, WHERE[where], env={"COLUMNS": "80"})
    assert result.exit_code == 0, result.output
    text = result.stdout
    assert "adaptive repetitions" in text and "…" not in text
    table_lines = [line for line in text.splitlines() if line[:1] in "┏┃┡│├└"]
    assert table_lines and max(map(len, table_lines)) <= 80
    words = _words(text)
    for fragment in (
        "precision reached (±0.6 % < 2 % after 3)",
        "max reached (±38.3 % after 4)",
        "undecided: the run ended first (running (±112.4 % after 2; target < 2 %, 3..8 repetitions))",
        "not shown at 80 columns: of",  # the least needed column gives way, named
    ):
        assert fragment in words, f"{fragment!r} not in {words}"
    assert (
        "gp2: std-seqread-1m.ebs0.r1 run std-seqread-1m: steady state not attained "
        "(iops_slope:0.3% over 60 s after 300 s)"
    ) in words
    assert result.stderr == ""
    wide = CliRunner().invoke(app, WHERE[where], env={"COLUMNS": "200"})
    assert "2..10, < 2 %" in wide.stdout and "3..8, < 2 %" in wide.stdout


@pytest.mark.parametrize("where", list(WHERE))
def test_nothing_when_no_config_repeated_adaptively(collected: dict[str, dict[str, Any]], where: str) -> None:
    collected.update({"gp3": {"series": [], "steady_state": []}})
    result = CliRunner().invoke(app, WHERE[where], env={"COLUMNS": "80"})
    assert result.exit_code == 0, result.output
    assert "adaptive repetitions" not in result.stdout and "steady state" not in result.stdout


def test_an_entry_that_does_not_read_is_a_note_and_the_others_still_show(
    collected: dict[str, dict[str, Any]],
) -> None:
    collected.update(COLLECTED)
    broken = {**COLLECTED["io1"], "series": [*COLLECTED["io1"]["series"], {"series": "x.ebs0"}]}
    collected["io1"] = broken
    result = CliRunner().invoke(app, WHERE["local"], env={"COLUMNS": "120"})
    assert result.exit_code == 0, result.output
    assert "io1: series[1]: workload: Field required" in _words(result.stderr)
    assert "undecided: the run ended first" in _words(result.stdout)

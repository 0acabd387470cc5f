"""`storagebench agent --emulate` and `--dir` say what they cannot measure, on stderr, before running."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, ClassVar

import pytest
import typer
from typer.testing import CliRunner

import storagebench.agent.log  # bind Progress's stderr at collection, as test_cli does
import storagebench.agent.runner
from storagebench.cli import agent_cmd
from storagebench.protocol.caveats import directory_caveat, emulated_caveat

RUNNING = "FAKE RUNNER STARTED"


class FakeRunner:
    """Records the plan it was given; prints a marker so the test can see what came before it."""

    plans: ClassVar[list[dict[str, Any]]] = []

    def __init__(self, plan: dict[str, Any], *args: Any) -> None:
        self.plan = plan

    def execute(self) -> int:
        typer.echo(RUNNING, err=True)
        FakeRunner.plans.append(self.plan)
        return 0


@pytest.fixture
def app(monkeypatch: pytest.MonkeyPatch) -> typer.Typer:
    monkeypatch.setattr(storagebench.agent.runner, "Runner", FakeRunner)
    monkeypatch.setattr(agent_cmd, "show_results", lambda output_dir, as_json: None)
    monkeypatch.setattr(os, "geteuid", lambda: 0)  # the root check only; nothing here needs root
    application = typer.Typer()
    agent_cmd.register(application)
    return application


def run(app: typer.Typer, *args: str) -> Any:
    result = CliRunner().invoke(app, list(args), catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result


def one_line(text: str) -> str:
    return " ".join(text.split())


def test_emulate_warns_that_emulated_latency_is_not_ebs_latency(app: typer.Typer, tmp_path: Path) -> None:
    result = run(app, "-w", "std-randread-4k", "--emulate", "gp3:100", "--out", str(tmp_path / "o"))
    err = one_line(result.stderr)
    expected = one_line(emulated_caveat(["ebs0: gp3"]))
    assert FakeRunner.plans[-1]["targets"][0]["emulate"], "the plan really emulates a volume"
    assert f"warning: {expected}" in err, err
    assert err.index("warning: emulated volumes") < err.index(RUNNING)
    assert "warning" not in result.stdout


def test_dir_warns_that_a_directory_measures_the_host(app: typer.Typer, tmp_path: Path) -> None:
    target = tmp_path / "scratch"
    target.mkdir()
    result = run(app, "-w", "std-randread-4k", "--dir", str(target), "--out", str(tmp_path / "o"))
    err = one_line(result.stderr)
    (spec,) = FakeRunner.plans[-1]["targets"]
    expected = one_line(directory_caveat([f"{spec['id']}: {target.resolve()}"]))
    assert f"warning: {expected}" in err, err
    assert "page cache" in err and err.index("warning: directory target") < err.index(RUNNING)

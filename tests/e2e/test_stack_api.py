"""The API of a deployed stack, through the CLI: runs only when STORAGEBENCH_STACK names one.

Skipped otherwise: it needs AWS credentials allowed execute-api:Invoke on that stack and reads
its CloudFormation outputs. It starts nothing that costs money: a dry run (nothing launched),
a refused request, and reads.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from storagebench.cli.main import app

STACK = os.environ.get("STORAGEBENCH_STACK", "")
EVENTS = Path(__file__).resolve().parents[2] / "events"

pytestmark = pytest.mark.skipif(
    not STACK,
    reason="STORAGEBENCH_STACK is not set: these tests call a deployed stack's API (AWS credentials)",
)


def cli(*args: str) -> Any:
    return CliRunner().invoke(app, [*args, "--stack", STACK])


def test_a_dry_run_previews_the_nightly_request() -> None:
    result = cli("run", "--suite", str(EVENTS / "nightly.json"), "--dry-run", "--json")
    assert result.exit_code == 0, result.output
    preview = json.loads(result.stdout)["preview"]
    assert preview["configs"] and preview["estimate"]["total_usd"] > 0


def test_an_invalid_request_is_refused_with_its_field(tmp_path: Path) -> None:
    document = json.loads((EVENTS / "nightly.json").read_text(encoding="utf-8"))
    document["configs"][0]["targets"][0]["size_gib"] = 0
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(document), encoding="utf-8")
    result = cli("run", "--suite", str(path), "--dry-run")
    assert result.exit_code == 2 and "size_gib" in result.stderr


def test_the_runs_in_progress_and_an_unknown_run() -> None:
    result = cli("results", "--active", "--json")
    assert result.exit_code == 0, result.output
    assert isinstance(json.loads(result.stdout)["runs"], list)
    result = cli("results", "--run", "no-such-run-00000000")
    assert result.exit_code == 2 and "run_not_found" in result.stderr

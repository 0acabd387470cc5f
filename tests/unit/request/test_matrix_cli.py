"""The expansion as `validate`, `cost` and the local dry run show it: generated ids, skipped points
with the rule each breaks, at 80 and 140 columns without cutting an id or a reason."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from storagebench.cli.main import app

EVENTS = Path(__file__).resolve().parents[3] / "events"
WIDTHS = (80, 140)
SKIPPED = [
    "gp3-20g-3000iops-1000mibps",
    "gp3-20g-12000iops-250mibps",
    "gp3-20g-12000iops-1000mibps",
    "gp3-20g-40000iops-250mibps",
    "gp3-20g-40000iops-1000mibps",
    "gp3-100g-3000iops-1000mibps",
    "gp3-500g-3000iops-1000mibps",
]


@pytest.fixture(autouse=True)
def in_tmp(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    shutil.copy(EVENTS / "gp3-matrix.json", tmp_path / "request.json")
    monkeypatch.chdir(tmp_path)


def run(args: list[str], width: int = 80) -> Any:
    return CliRunner().invoke(app, args, env={"COLUMNS": str(width)})


def joined(text: str) -> str:
    """The output with its soft wraps undone: every id and reason reads whole."""
    return " ".join(text.split())


def assert_fits(text: str, width: int) -> None:
    wide = [line for line in text.splitlines() if len(line) > width]
    assert not wide, wide
    assert "…" not in text


def shown_fitting(args: list[str], width: int) -> str:
    """The command's output, which must succeed and fit ``width`` columns, joined into one line."""
    result = run(args, width)
    assert result.exit_code == 0, result.output
    assert_fits(result.stdout, width)
    return joined(result.stdout)


@pytest.mark.parametrize("width", WIDTHS)
def test_validate_lists_the_expansion_and_each_skipped_point(width: int) -> None:
    text = shown_fitting(["validate", "--suite", "request.json"], width)
    assert (
        "matrix configs[0] gp3: size_gib 20/100/500 x iops 3000/12000/40000 x throughput_mibps 250/1000 = "
        "18 point(s): 11 config(s), 7 skipped" in text
    )
    for point in SKIPPED:
        assert f"skipped {point}: " in text
    assert (
        "skipped gp3-20g-12000iops-250mibps: iops 12000: gp3 allows 3,000..10,000 IOPS for 20 GiB "
        "(500 per GiB, at most 80,000)" in text
    )
    assert "gp3-500g-40000iops-1000mibps" in text  # the config table names every generated config


def test_validate_json_gives_the_matrices() -> None:
    result = run(["validate", "--suite", "request.json", "--json"])
    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)
    (matrix,) = document["matrices"]
    assert matrix["points"] == 18 and len(matrix["generated"]) == 11
    assert [s["id"] for s in matrix["skipped"]] == SKIPPED
    assert matrix["skipped"][0]["problems"] == [
        {
            "field": "throughput_mibps",
            "value": 1000,
            "message": "gp3 allows 125..750 MiB/s (0.25 MiB/s per IOPS: 3,000 IOPS allow 750)",
        }
    ]
    assert [c["id"] for c in document["configs"]] == matrix["generated"]


@pytest.mark.parametrize("width", WIDTHS)
def test_validate_refuses_every_invalid_point_by_default(tmp_path: Path, width: int) -> None:
    document = json.loads((tmp_path / "request.json").read_text(encoding="utf-8"))
    del document["matrix_invalid"]
    (tmp_path / "request.json").write_text(json.dumps(document), encoding="utf-8")
    result = run(["validate", "--suite", "request.json"], width)
    assert result.exit_code == 2
    text = joined(result.stderr)
    assert "request.json: 8 problem(s)" in text
    for point in SKIPPED:
        assert f"point {point}: " in text
    assert "matrix_invalid: 7 matrix point(s) break AWS's rules" in text


@pytest.mark.parametrize("width", WIDTHS)
def test_cost_prices_the_generated_configs_and_lists_the_skipped_points(width: int) -> None:
    text = shown_fitting(["cost", "--suite", "request.json"], width)
    assert "11 config(s), 7 skipped" in text
    assert "skipped gp3-100g-3000iops-1000mibps: throughput_mibps 1000:" in text
    document = json.loads(run(["cost", "--suite", "request.json", "--json"]).stdout)
    assert len(document["configs"]) == 11
    assert [s["id"] for s in document["matrices"][0]["skipped"]] == SKIPPED


@pytest.mark.parametrize("width", WIDTHS)
def test_the_local_dry_run_shows_the_expansion(width: int) -> None:
    result = run(["run", "--local", "--dry-run", "--suite", "request.json"], width)
    assert result.exit_code == 0, result.output
    text = joined(result.stdout)
    assert "gp3-matrix: 11 config(s)" in text
    assert "gp3-20g-3000iops-250mibps: r5b.4xlarge" in text
    for point in SKIPPED:
        assert f"skipped {point}: " in text
    preview = json.loads(run(["run", "--local", "--dry-run", "--suite", "request.json", "--json"]).stdout)[
        "preview"
    ]
    assert preview["matrices"][0]["generated"] == [c["id"] for c in preview["configs"]]
    assert len(preview["matrices"][0]["skipped"]) == 7

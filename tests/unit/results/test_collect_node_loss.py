"""Collect of a phase during which a node was removed: the agent's pause/recovery figures on the records."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from storagebench.agent.node_loss import measure
from storagebench.results.collect import Collection, collect
from storagebench.results.fio import split_fio_output

DATA = Path(__file__).resolve().parents[2] / "data"
PLANNED = {"role": "controller", "index": 0, "at_s": 5.0}


def figures(metric: str = "iops") -> Any:
    rates = dict.fromkeys(range(1, 51), 1000.0) | dict.fromkeys(range(51, 56), 0.0)
    rates |= dict.fromkeys(range(56, 101), 500.0)
    return measure(rates, removed_at_ms=5_000, metric=metric)


def run(tmp_path: Path, phase_extra: dict[str, Any], planned: dict[str, Any] | None = PLANNED) -> Collection:
    root = tmp_path / "out"
    directory = root / "steps/s1/run"
    directory.mkdir(parents=True)
    json_text, normal = split_fio_output((DATA / "fio/single_randread.out").read_text())
    (directory / "fio.json").write_text(json_text)
    (directory / "fio.txt").write_text(normal)
    phase = {"name": "run", "engine": "fio", "dir": "steps/s1/run", "status": "ok", **phase_extra}
    step = {
        "id": "s1",
        "workload": "ctrl-loss",
        "profile": "randread-4k",
        "variant": {},
        "repetition": 1,
        "target": "vol",
        "status": "ok",
        "phases": [phase],
    }
    manifest = {"manifest_version": 1, "run_id": "r", "config_id": "vsan", "steps": [step]}
    plan_phase: dict[str, Any] = {"name": "run", "engine": "fio"}
    if planned is not None:
        plan_phase["node_loss"] = planned
    (root / "manifest.json").write_text(json.dumps(manifest))
    (root / "plan.json").write_text(json.dumps({"steps": [{"id": "s1", "phases": [plan_phase]}]}))
    return collect(root)


def test_the_direction_measured_carries_its_pause_and_recovery(tmp_path: Path) -> None:
    collection = run(tmp_path, {"node_loss": {"read": figures(), "read_bw": figures("bw_mibps")}})
    assert collection.problems == []
    (record,) = collection.records
    loss = record.node_loss
    assert loss is not None
    assert (loss.role, loss.index, loss.at_s) == ("controller", 0, 5.0)
    assert loss.iops.pause_s == 0.5
    assert loss.iops.recovery_s == 0.5
    assert loss.iops.after_pct_of_before == 50.0
    assert loss.bw is not None and loss.bw.metric == "bw_mibps"
    assert json.loads(record.model_dump_json())["node_loss"]["iops"]["recovered"] is True


def test_an_unmeasured_loss_is_a_problem_with_the_agents_reason(tmp_path: Path) -> None:
    collection = run(
        tmp_path, {"node_loss_error": "controller[0] removed at 5 s: log too short after the removal"}
    )
    assert collection.records[0].node_loss is None
    assert collection.problems == [
        "step s1 phase run: node loss not measured: "
        "controller[0] removed at 5 s: log too short after the removal"
    ]


def test_a_planned_loss_without_figures_is_a_problem(tmp_path: Path) -> None:
    collection = run(tmp_path, {})
    assert collection.problems == [
        "step s1 phase run: node loss planned but the agent recorded no measurement"
    ]


def test_bad_figures_name_the_field(tmp_path: Path) -> None:
    bad = figures() | {"pause_s": -1}
    collection = run(tmp_path, {"node_loss": {"read": bad}})
    assert collection.records[0].node_loss is None
    assert collection.problems[0].startswith("step s1 phase run: node loss of read: ('iops', 'pause_s'):")


def test_no_loss_planned_no_figures(tmp_path: Path) -> None:
    collection = run(tmp_path, {"node_loss": {"read": figures()}}, planned=None)
    assert collection.records[0].node_loss is None
    assert collection.problems == []

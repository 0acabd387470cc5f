"""collect over a multi-client step: per-client records, the aggregates, and a missing client."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from client_captures import CLIENTS_333, RANDRW_333, capture

from storagebench.results.collect import collect


def output_dir(root: Path, fio_json: str, clients: list[str] | None, *, in_manifest: bool = False) -> Path:
    directory = root / "steps" / "s1" / "run"
    directory.mkdir(parents=True)
    (directory / "fio.json").write_text(fio_json)  # as `fio --client=... --output-format=json+` wrote it
    step: dict[str, Any] = {
        "id": "s1",
        "workload": "randrw",
        "profile": "oltp",
        "repetition": 1,
        "target": "efs0",
        "status": "ok",
        "phases": [{"name": "run", "engine": "fio", "dir": "steps/s1/run", "status": "ok", "rc": 0}],
    }
    planned: dict[str, Any] = {"id": "s1", "phases": [{"name": "run", "engine": "fio"}]}
    if clients is not None:
        (step if in_manifest else planned)["clients"] = clients
    manifest = {"manifest_version": 1, "config_id": "efs-2", "targets": [{"id": "efs0"}], "steps": [step]}
    (root / "manifest.json").write_text(json.dumps(manifest))
    (root / "plan.json").write_text(json.dumps({"steps": [planned]}))
    return root


def test_a_multi_client_step_yields_per_client_records_and_the_aggregates(tmp_path: Path) -> None:
    collection = collect(output_dir(tmp_path, capture(RANDRW_333), CLIENTS_333))
    assert collection.problems == []
    assert [(r.client_index, r.clients, r.direction) for r in collection.records] == [
        (1, None, "read"),
        (1, None, "write"),
        (2, None, "read"),
        (2, None, "write"),
        (None, 2, "read"),
        (None, 2, "write"),
    ]
    read = collection.records[4]
    assert read.ios == 63944 and read.raw == ["steps/s1/run/fio.json"]
    assert read.client_spread is not None and read.client_spread.straggler is not None


def test_the_manifests_clients_count_too(tmp_path: Path) -> None:
    collection = collect(output_dir(tmp_path, capture(RANDRW_333), CLIENTS_333, in_manifest=True))
    assert collection.problems == [] and len(collection.records) == 6


def test_a_missing_client_is_a_problem_and_the_others_records_are_kept(tmp_path: Path) -> None:
    collection = collect(output_dir(tmp_path, capture(RANDRW_333), [*CLIENTS_333, "127.0.0.1,18767"]))
    assert [r.client_index for r in collection.records] == [1, 1, 2, 2]  # no aggregate
    assert collection.problems == [
        "step s1 phase run: steps/s1/run/fio.json: client 3 (127.0.0.1:18767): no entry in fio's output: "
        "the server was unreachable or never reported",
        "step s1 phase run: steps/s1/run/fio.json: no aggregate record: client 3 (127.0.0.1:18767) "
        "yielded no records, a sum without it would understate",
    ]


def test_client_output_without_the_steps_clients_is_kept_with_a_warning(tmp_path: Path) -> None:
    collection = collect(output_dir(tmp_path, capture(RANDRW_333), None))
    assert len(collection.records) == 6
    assert collection.problems == [
        "step s1 phase run: steps/s1/run/fio.json: fio client/server output but the step names no "
        "clients: a client fio could not reach would go unnoticed"
    ]


def test_a_step_naming_clients_needs_client_output(tmp_path: Path) -> None:
    local = json.dumps({"fio version": "fio-3.33", "jobs": []})
    collection = collect(output_dir(tmp_path, local, CLIENTS_333))
    assert collection.records == []
    assert collection.problems == [
        "step s1 phase run: steps/s1/run/fio.json: expected fio client/server output (a 'client_stats' "
        "list), got a local fio run's output ('jobs')"
    ]


def test_bad_clients_in_the_plan_are_named(tmp_path: Path) -> None:
    collection = collect(output_dir(tmp_path, capture(RANDRW_333), []))
    assert collection.problems == [
        "step s1 phase run: the step's clients []: expected a non-empty list of fio --client strings"
    ]

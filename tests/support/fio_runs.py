"""Records the agent makes of the real fio outputs kept under ``tests/data/fio``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from storagebench.results.fio import fio_records, load_fio_json, split_fio_output
from storagebench.results.records import ResultRecord

FIO = Path(__file__).resolve().parents[1] / "data" / "fio"
# A latency-SLA search: the rate where p99 stays under 1 ms, probed between 100 and 4,500 IOPS.
SLA_SPEC: dict[str, Any] = {
    "percentile": 99.0,
    "target_us": 1000.0,
    "low_iops": 100,
    "high_iops": 4500,
    "tolerance": 0.05,
    "max_probes": 12,
    "min_delivered": 0.95,
}


def measured(name: str, workload: str, repetition: int, started_at: str, **fields: Any) -> list[ResultRecord]:
    """The records of ``tests/data/fio/<name>.out`` (json+ histograms merged into log buckets), as
    one gp3 volume's ``fio-randread`` run phase."""
    json_text, normal = split_fio_output((FIO / f"{name}.out").read_text())
    identity = {"config_id": "gp3", "target_id": "ebs0", "profile": "fio-randread", "phase": "run"}
    return fio_records(
        load_fio_json(json_text),
        **identity,
        workload=workload,
        repetition=repetition,
        started_at=started_at,
        normal_text=normal,
        **fields,
    )


def write_sla_search(root: Path, search: dict[str, Any]) -> None:
    """The agent's output folder after one latency-SLA search, step ``s1`` of ``sla-randread-4k`` on
    target ``vol``: every probe's fio output (the ``single_randread`` capture) and the manifest."""
    json_text, normal = split_fio_output((FIO / "single_randread.out").read_text())
    for entry in search.get("probes", []):
        directory = root / "steps/s1/search" / entry["dir"]
        directory.mkdir(parents=True)
        (directory / "fio.json").write_text(json_text)
        (directory / "fio.txt").write_text(normal)
    phase = {"name": "search", "engine": "fio", "dir": "steps/s1/search", "status": "ok", "search": search}
    step = {"id": "s1", "workload": "sla-randread-4k", "profile": "sla-randread-4k", "variant": {}}
    step.update(repetition=1, target="vol", status="ok", phases=[phase])
    manifest = {"manifest_version": 1, "run_id": "run-1", "config_id": "gp3", "steps": [step]}
    manifest["targets"] = [{"id": "vol", "labels": []}]
    root.mkdir(parents=True, exist_ok=True)
    (root / "manifest.json").write_text(json.dumps(manifest))

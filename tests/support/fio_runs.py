"""Records the agent makes of the real fio outputs kept under ``tests/data/fio``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from storagebench.results.fio import fio_records, load_fio_json, split_fio_output
from storagebench.results.records import ResultRecord

FIO = Path(__file__).resolve().parents[1] / "data" / "fio"


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

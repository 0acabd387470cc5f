"""The report's pre-warm line: the cold-read check's passes and penalty, or the full read."""

from __future__ import annotations

from typing import Any

from tests.support.records import result_record

from storagebench.report.prewarm_notes import prewarm_note, prewarm_notes
from storagebench.results.records import ColdReadCheck, ResultRecord, SampledPass

GIB = 1 << 30
MIB = 1 << 20


def record(**fields: Any) -> ResultRecord:
    return result_record(
        **{"target_id": "data", "workload": "prewarm", "phase": "prewarm", "engine": "prewarm", **fields}
    )


CHECK = ColdReadCheck(
    volumes=1,
    extents=32,
    block_bytes=MIB,
    bytes=4 * GIB,
    volume_pct=2.0,
    cold=SampledPass(mibps=98.5, seconds=41.6, read_ms_mean=10.15, read_ms_p50=9.9, read_ms_max=31.0),
    warm=SampledPass(mibps=124.8, seconds=32.8, read_ms_mean=8.01, read_ms_p50=8.0, read_ms_max=8.4),
    penalty_pct=26.7,
)


def test_the_check_line_shows_cold_warm_and_the_penalty() -> None:
    line = prewarm_note(record(bytes=4 * GIB, runtime_s=41.6, bw_mibps=98.5, cold_read=CHECK))
    assert line == (
        "pre-warm of gp3/data: cold-read check, 4 GiB in 32 extents (2 % of the volume, dd reads of 1 MiB): "
        "cold 98.5 MiB/s, 10.2 ms per read; warm 125 MiB/s, 8.01 ms; first-access penalty +27 %"
    )


def test_a_full_read_says_how_much_how_fast_and_how_long() -> None:
    full = record(bytes=200 * GIB, runtime_s=1600.0, bw_mibps=128.0, labels=["prewarm:fio"])
    assert prewarm_note(full) == (
        "pre-warm of gp3/data: read end to end with fio, 200 GiB at 128 MiB/s in 26 min 40 s"
    )


def test_only_prewarm_records_get_a_line() -> None:
    workload = record(
        workload="std-randread-4k",
        profile="std-randread-4k",
        phase="run",
        engine="fio",
        bytes=1,
        runtime_s=1.0,
    )
    full = record(bytes=GIB, runtime_s=8.0, bw_mibps=128.0)
    assert prewarm_notes([workload, full]) == [
        "pre-warm of gp3/data: read end to end with dd, 1 GiB at 128 MiB/s in 8.00 s"
    ]

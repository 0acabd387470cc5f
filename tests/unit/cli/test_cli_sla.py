"""The CLI answers a latency-SLA search in words after the measurements table: from the records
(aggregates do not keep the search), and end to end from an agent's output directory."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from rich.console import Console
from tests.support.fio_runs import SLA_SPEC, write_sla_search
from tests.support.records import emulated, latency, result_record

from storagebench.analysis.stats import aggregate
from storagebench.cli import agent_cmd, render
from storagebench.results.records import ResultRecord, SlaSearch

SPEC = SLA_SPEC
# (rate asked, IOPS achieved, p99 us): a gp3-like volume whose p99 crosses 1 ms near 1,800 IOPS
PROBES = [
    (100, 100.0, 414.0),
    (4500, 3000.0, 40_000.0),
    (671, 671.0, 515.0),
    (1738, 1738.0, 951.0),
    (2797, 2797.0, 5910.0),
    (2205, 2205.0, 1510.0),
    (1958, 1958.0, 1150.0),
    (1845, 1845.0, 1040.0),
    (1791, 1791.0, 993.0),
]


def probe(number: int, rate: int, iops: float, p99_us: float) -> dict[str, Any]:
    delivered = round(iops / rate, 4)
    misses = [f"p99 {p99_us / 1000:.3g} ms > 1 ms"] if p99_us > 1000 else []
    misses += [f"delivered {delivered:.0%} of the rate (needs 95%)"] if delivered < 0.95 else []
    entry: dict[str, Any] = {
        "probe": number,
        "rate_iops": rate,
        "iops": iops,
        "latency_us": p99_us,
        "delivered": delivered,
        "ios": int(iops * 30),
        "runtime_s": 30.0,
        "met": not misses,
        "dir": f"probe-{number:02d}",
    }
    if misses:
        entry["why"] = "; ".join(misses)
    return entry


def search(probes: list[tuple[int, float, float]]) -> dict[str, Any]:
    """A search as the agent writes it in its manifest (``protocol.sla.SearchResult``)."""
    entries = [probe(n, *p) for n, p in enumerate(probes, start=1)]
    met = [e for e in entries if e["met"]]
    answer = max(met, key=lambda e: e["rate_iops"]) if met else None
    missed = min((e["rate_iops"] for e in entries if not e["met"]), default=None)
    if answer is None:
        bracket, stopped = [SPEC["low_iops"]], "lowest-rate-failed"
    else:
        bracket, stopped = [answer["rate_iops"], missed], "within-tolerance"
    return {
        **SPEC,
        "probes": entries,
        "met": answer is not None,
        "answer": answer,
        "bracket": bracket,
        "stopped": stopped,
    }


def record(config_id: str, probes: list[tuple[int, float, float]], repetition: int = 1) -> ResultRecord:
    """The answer probe's record carrying the search, as Collect stores it."""
    found = search(probes)
    answer = found.pop("answer")
    sla = SlaSearch.model_validate(
        {
            **found,
            "sustained_iops": answer["iops"] if answer else None,
            "answer_probe": answer["probe"] if answer else None,
        }
    )
    chosen = answer or found["probes"][0]
    p99 = chosen["latency_us"]
    spread = {"samples": chosen["ios"], "mean_us": p99 / 3, "stdev_us": p99 / 6, "min_us": 90.0}
    probe = {"iops": chosen["iops"] if answer else None, "bytes": chosen["ios"] * 4096, "ios": chosen["ios"]}
    searched = {"phase": "search", "latency": latency(p99 * 0.8, **spread, p99_us=p99), "sla": sla}
    labels = [] if answer else ["sla-not-met"]
    measured = result_record(
        config_id=config_id,
        workload="sla-randread-4k",
        repetition=repetition,
        **probe,
        **searched,
        labels=labels,
    )
    return emulated(measured)


def printed(rows: list[ResultRecord], **options: Any) -> str:
    console = Console(record=True, width=400)
    render.aggregates(console, aggregate(rows), **options)
    return console.export_text()


def test_each_search_is_one_line_after_the_table() -> None:
    records = [record("gp3", PROBES), record("gp2", [(100, 100.0, 1240.0)])]
    text = printed(records, records=records)
    lines = [line for line in text.splitlines() if line.startswith("latency SLA, ")]
    assert lines == [
        "latency SLA, gp3 sla-randread-4k, p99 <= 1 ms: sustains 1,791 IOPS at p99 0.993 ms (asked 1,791 "
        "IOPS); the limit lies between 1,791 IOPS (met) and 1,845 IOPS (missed), as rates asked of fio: "
        "2.9 % apart; tolerance reached: the bracket narrowed to 2.9 % (tolerance 5.0 %) in 9 probes",
        "latency SLA, gp2 sla-randread-4k, p99 <= 1 ms: SLA not met even at the lowest rate, 100 IOPS: p99 "
        "was 1.24 ms; the limit lies below 100 IOPS, the lowest rate probed (lower min_iops or relax the SLA "
        "to find it); the lowest rate missed the SLA, so no higher rate was tried (1 probe)",
    ]
    assert text.index("latency SLA, ") > text.index("sla-randread-4k")  # after the table's rows


def test_repetitions_are_one_line_with_their_range_and_emulation_is_said() -> None:
    second = [(r, i * 0.97 if r > 1000 else i, p) for r, i, p in PROBES]
    records = [record("gp3", PROBES), record("gp3", second, repetition=2)]
    text = printed(records, records=records, emulated={"gp3"})
    (line,) = [line for line in text.splitlines() if line.startswith("latency SLA, ")]
    assert line.startswith(
        "latency SLA, gp3 sla-randread-4k, p99 <= 1 ms: sustains 1,737–1,791 IOPS at p99 0.993 ms over 2 "
        "repetitions; the limit per repetition, in IOPS asked of fio: 1,791–1,845 (tolerance reached), "
        "1,791–1,845 (tolerance reached)"
    )
    assert line.endswith(" (emulated)")


def test_without_records_or_searches_there_is_no_sla_line() -> None:
    records = [record("gp3", PROBES)]
    assert "latency SLA" not in printed(records)
    plain = records[0].model_copy(update={"sla": None, "workload": "std-randread-4k"})
    assert "latency SLA" not in printed([plain], records=[plain])


def test_the_agent_command_answers_the_search_from_its_output_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    found = search(PROBES)
    write_sla_search(tmp_path, found)
    console = Console(record=True, width=400)
    monkeypatch.setattr(agent_cmd, "out", console)
    monkeypatch.setattr(agent_cmd, "err", Console(record=True, width=400))
    agent_cmd.show_results(tmp_path, as_json=False)
    text = console.export_text()
    assert "latency SLA, gp3 sla-randread-4k, p99 <= 1 ms: sustains 1,791 IOPS at p99 0.993 ms" in text
    assert "tolerance reached: the bracket narrowed to 2.9 % (tolerance 5.0 %) in 9 probes" in text

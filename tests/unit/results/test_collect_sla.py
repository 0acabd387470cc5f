"""Collect of a latency-SLA search phase: the answer probe's records, carrying every probe."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.support.fio_runs import SLA_SPEC, write_sla_search

from storagebench.results.collect import Collection, collect


def probe(number: int, rate: int, iops: float, latency_us: float, met: bool) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "probe": number,
        "rate_iops": rate,
        "iops": iops,
        "latency_us": latency_us,
        "delivered": round(iops / rate, 4),
        "ios": int(iops * 3),
        "runtime_s": 3.0,
        "met": met,
        "dir": f"probe-{number:02d}",
    }
    if not met:
        entry["why"] = "p99 2 ms > 1 ms"
    return entry


def search_run(tmp_path: Path, search: dict[str, Any]) -> Collection:
    root = tmp_path / "out"
    write_sla_search(root, search)
    return collect(root)


SPEC = SLA_SPEC


def test_the_answer_probe_is_the_record_and_every_probe_is_kept(tmp_path: Path) -> None:
    probes = [probe(1, 100, 100.0, 300.0, True), probe(2, 4500, 3100.0, 9000.0, False)]
    probes.append(probe(3, 671, 670.2, 420.0, True))
    answer = probes[2]
    search = {**SPEC, "probes": probes, "met": True, "answer": answer, "bracket": [671, 4500], "stopped": "x"}
    collection = search_run(tmp_path, search)
    [record] = collection.records
    assert record.phase == "search" and record.raw[0] == "steps/s1/search/probe-03/fio.json"
    assert record.iops is not None and record.iops > 0  # fio's figure for the answer probe's files
    assert record.sla is not None and record.sla.met and record.sla.sustained_iops == 670.2
    assert record.sla.answer_probe == 3 and record.sla.bracket == [671, 4500]
    assert [(p.rate_iops, p.met) for p in record.sla.probes] == [(100, True), (4500, False), (671, True)]
    assert "sla-not-met" not in record.labels


def test_not_met_keeps_the_lowest_probes_latency_and_reports_no_iops(tmp_path: Path) -> None:
    search = {
        **SPEC,
        "probes": [probe(1, 100, 100.0, 2000.0, False)],
        "met": False,
        "answer": None,
        "bracket": [100],
        "stopped": "lowest-rate-failed",
    }
    [record] = search_run(tmp_path, search).records
    assert record.iops is None and record.bw_mibps is None and record.latency is not None
    assert record.sla is not None and not record.sla.met and record.sla.sustained_iops is None
    assert "sla-not-met" in record.labels


def test_a_bad_search_section_is_a_problem_naming_the_field(tmp_path: Path) -> None:
    search = {**SPEC, "percentile": 150, "probes": [probe(1, 100, 100.0, 300.0, True)], "met": True}
    search.update(answer=probe(1, 100, 100.0, 300.0, True), bracket=[100], stopped="x")
    collection = search_run(tmp_path, search)
    assert collection.records == []
    assert any("search.percentile" in p and "150" in p for p in collection.problems), collection.problems


def test_a_probe_dir_outside_the_phase_is_refused(tmp_path: Path) -> None:
    bad = probe(1, 100, 100.0, 300.0, True)
    search = {**SPEC, "probes": [bad], "met": True, "answer": bad, "bracket": [100], "stopped": "x"}
    search_run(tmp_path, search)
    manifest = json.loads((tmp_path / "out/manifest.json").read_text())
    manifest["steps"][0]["phases"][0]["search"]["probes"][0]["dir"] = "../../s9"
    (tmp_path / "out/manifest.json").write_text(json.dumps(manifest))
    collection = collect(tmp_path / "out")
    assert collection.records == []
    assert any("not inside the phase directory" in p for p in collection.problems)


def test_the_agents_judgement_is_checked_against_the_files(tmp_path: Path) -> None:
    answer = probe(1, 100, 100.0, 300.0, True)
    search = {**SPEC, "probes": [answer], "met": True, "answer": answer, "bracket": [100], "stopped": "x"}
    [record] = search_run(tmp_path / "first", search).records
    assert record.latency is not None and record.latency.p99_us is not None and record.ios is not None
    answer.update(ios=record.ios, latency_us=record.latency.p99_us)  # what the agent read from fio.json
    agreeing = search_run(tmp_path / "agreeing", search)
    assert not [p for p in agreeing.problems if "search probe" in p], agreeing.problems
    answer.update(ios=record.ios + 1, latency_us=record.latency.p99_us * 2)
    problems = "\n".join(search_run(tmp_path / "disagreeing", search).problems)
    assert f"the agent counted {record.ios + 1} I/Os, fio.json holds {record.ios}" in problems
    assert "the agent judged p99" in problems

"""The latency-SLA search: bisection against fake storage with a known knee, and the engine end to end.

The fake storage queues like a single server: at a rate r against a capacity C, the p99 is
``base / (1 - r / C)`` and fio achieves ``min(r, C)``. With base 200 us and a 1 ms target the
knee (p99 = 1 ms) is at r = 0.8 C, so the answer is known exactly and the search must land on
it within its tolerance.
"""

from __future__ import annotations

import json
import math
import os
import stat
import sys
from pathlib import Path
from typing import Any

import pytest

from storagebench.agent.engines import PhaseContext, run_phase
from storagebench.protocol.fio_summary import FioSummaryError, summarize_fio
from storagebench.protocol.plan import PlanError, SearchSpec, check_plan
from storagebench.protocol.sla import (
    STOP_HIGHEST_MET,
    STOP_LOWEST_FAILED,
    STOP_MAX_PROBES,
    STOP_TOLERANCE,
    Measured,
    Probe,
    answer_text,
    expected_probes,
    judge,
    search,
)

DATA = Path(__file__).resolve().parents[2] / "data" / "fio"


def spec(**overrides: Any) -> SearchSpec:
    base: SearchSpec = {
        "percentile": 99.0,
        "target_us": 1000.0,
        "low_iops": 100,
        "high_iops": 20_000,
        "tolerance": 0.05,
        "max_probes": 12,
    }
    base.update(overrides)  # type: ignore[typeddict-item]
    return base


def queue(capacity: float, base_us: float = 200.0) -> Any:
    """rate -> (achieved IOPS, p99 us) of a single-server queue."""

    def measure(rate: int) -> tuple[float, float]:
        utilisation = min(rate / capacity, 0.999)
        return min(rate, capacity), base_us / (1 - utilisation)

    return measure


def fake_fio(measure: Any, search_spec: SearchSpec, runtime_s: float = 10.0) -> Any:
    rates: list[int] = []

    def run_probe(number: int, rate: int) -> Probe:
        rates.append(rate)
        iops, p99 = measure(rate)
        return judge(Measured(iops, p99, round(iops * runtime_s), runtime_s), rate, search_spec)

    run_probe.rates = rates  # type: ignore[attr-defined]
    return run_probe


@pytest.mark.parametrize("capacity", [700.0, 3000.0, 7000.0, 16_000.0])
def test_the_answer_lands_on_the_knee_within_tolerance(capacity: float) -> None:
    knee = 0.8 * capacity  # p99 = 200 / (1 - u) = 1000 us at u = 0.8
    search_spec = spec()
    result = search(fake_fio(queue(capacity), search_spec), search_spec)
    assert result["met"] and result["stopped"] == STOP_TOLERANCE
    met, missed = result["bracket"]
    assert met <= knee < missed
    assert (missed - met) / missed <= 0.05
    answer = result["answer"]
    assert answer is not None and answer["met"]
    assert knee * 0.95 <= answer["iops"] <= knee
    assert len(result["probes"]) == expected_probes(search_spec) == 9  # what the planner budgets


def test_probes_are_numbered_and_bisect_geometrically_inside_the_bracket() -> None:
    search_spec = spec()
    probe = fake_fio(queue(7000.0), search_spec)
    result = search(probe, search_spec)
    rates = probe.rates
    assert rates[:2] == [100, 20_000]  # the lowest first, then the highest
    assert rates[2] == round(math.sqrt(100 * 20_000))
    assert [p["probe"] for p in result["probes"]] == list(range(1, len(rates) + 1))
    assert [p["rate_iops"] for p in result["probes"]] == rates
    passed, failed = 100, 20_000
    for entry in result["probes"][2:]:
        assert passed < entry["rate_iops"] < failed
        if entry["met"]:
            passed = entry["rate_iops"]
        else:
            failed = entry["rate_iops"]
            assert "p99" in entry["why"]
    assert result["bracket"] == [passed, failed]


def test_not_met_even_at_the_lowest_rate_stops_after_one_probe() -> None:
    search_spec = spec()
    result = search(fake_fio(queue(7000.0, base_us=2500.0), search_spec), search_spec)
    assert result["met"] is False and result["answer"] is None
    assert result["stopped"] == STOP_LOWEST_FAILED and len(result["probes"]) == 1
    assert "not met even at the lowest rate, 100 IOPS" in answer_text(dict(result))


def test_met_at_the_highest_rate_says_the_limit_is_above() -> None:
    search_spec = spec(high_iops=1000)
    result = search(fake_fio(queue(1e9), search_spec), search_spec)
    assert result["stopped"] == STOP_HIGHEST_MET and result["bracket"] == [1000]
    assert [p["rate_iops"] for p in result["probes"]] == [100, 1000]
    assert "the limit is higher" in answer_text(dict(result))


def test_a_rate_the_storage_cannot_deliver_misses_even_with_low_latency() -> None:
    # A throttled volume behind a shallow queue: latency stays flat, the rate is not delivered.
    search_spec = spec()

    def measure(rate: int) -> tuple[float, float]:
        return min(rate, 3000.0), 300.0

    result = search(fake_fio(measure, search_spec), search_spec)
    met, missed = result["bracket"]
    assert met <= 3000 / 0.95 < missed
    missed_probes = [p for p in result["probes"] if not p["met"]]
    assert missed_probes and all("delivered" in p["why"] for p in missed_probes)


def test_max_probes_ends_the_search_with_the_best_bracket_so_far() -> None:
    search_spec = spec(tolerance=0.001, max_probes=5)
    result = search(fake_fio(queue(7000.0), search_spec), search_spec)
    assert len(result["probes"]) == 5 and result["stopped"] == STOP_MAX_PROBES
    met, missed = result["bracket"]
    assert met <= 5600 < missed


def test_judge_needs_both_the_percentile_and_the_rate() -> None:
    assert judge(Measured(1000.0, 999.0, 10_000, 10.0), 1000, spec())["met"]
    late = judge(Measured(1000.0, 1001.0, 10_000, 10.0), 1000, spec())
    assert not late["met"] and late["why"] == "p99 1 ms > 1 ms"
    short = judge(Measured(940.0, 500.0, 9400, 10.0), 1000, spec())
    assert not short["met"] and short["why"] == "delivered 94% of the rate (needs 95%)"


# ------------------------------------------------------------------ fio's JSON, as the agent reads it


def _document(name: str) -> dict[str, Any]:
    text = (DATA / name).read_text(encoding="utf-8")
    start = text.index("\n{") + 1
    document, _ = json.JSONDecoder().raw_decode(text, start)
    return document


@pytest.mark.parametrize("name", ["lat_percentiles.out", "single_randread.out", "numjobs4.out"])
def test_one_jobs_percentile_from_bins_is_fios_own(name: str) -> None:
    for job in _document(name)["jobs"]:
        for direction, summary in summarize_fio({"jobs": [job]}).items():
            latency = (
                job[direction]["lat_ns"] if "bins" in job[direction]["lat_ns"] else job[direction]["clat_ns"]
            )
            assert summary.percentile_us(99) == latency["percentile"]["99.000000"] / 1000
            assert summary.ios == job[direction]["total_ios"]


def test_jobs_merge_ios_runtime_and_histograms() -> None:
    jobs = _document("numjobs4.out")["jobs"]
    summary = summarize_fio({"jobs": jobs})["read"]
    assert summary.ios == sum(job["read"]["total_ios"] for job in jobs)
    assert summary.runtime_s == max(job["read"]["runtime"] for job in jobs) / 1000
    assert summary.iops == pytest.approx(summary.ios / summary.runtime_s)


def test_a_percentile_without_histograms_is_an_error_not_a_guess() -> None:
    job = {"read": {"total_ios": 10, "runtime": 1000, "lat_ns": {"percentile": {"99.000000": 5000}}}}
    with pytest.raises(FioSummaryError, match="no json\\+ latency histogram"):
        summarize_fio({"jobs": [job, job]})["read"].percentile_us(99)


# ------------------------------------------------------------------ the plan's search section


def _plan(search_section: Any) -> dict[str, Any]:
    return {
        "plan_version": 1,
        "run_id": "r-1",
        "config_id": "c",
        "targets": [{"id": "d", "kind": "directory", "path": "/tmp"}],
        "steps": [
            {
                "id": "s",
                "workload": "w",
                "repetition": 1,
                "target": "d",
                "phases": [
                    {
                        "name": "search",
                        "engine": "fio",
                        "fio": {"jobs": [{"name": "a", "options": {}}]},
                        "search": search_section,
                    }
                ],
            }
        ],
    }


def test_the_plan_check_names_every_bad_search_field() -> None:
    check_plan(_plan(dict(spec())))
    bad = {**spec(), "percentile": 100, "target_us": 0, "high_iops": 50, "tolerance": 1.5, "max_probes": 1}
    with pytest.raises(PlanError) as caught:
        check_plan(_plan(bad))
    text = "\n".join(caught.value.problems)
    for field in ("percentile", "target_us", "high_iops", "tolerance", "max_probes"):
        assert f"search.{field}" in text


# ------------------------------------------------------------------ the engine, with a fake fio

FAKE_FIO = """#!{python}
import json, re, sys
capacity, base_us, runtime_s = 7000.0, 200.0, 2.0
job = open("job.fio").read()
per_job = int(re.search(r"^rate_iops=(\\d+)$", job, re.M).group(1))
jobs = int(re.search(r"^numjobs=(\\d+)$", job, re.M).group(1))
rate = per_job * jobs
achieved = min(rate, capacity)
p99_ns = int(base_us / (1 - min(rate / capacity, 0.999)) * 1000)
entries = []
for _ in range(jobs):
    ios = int(achieved / jobs * runtime_s)
    bins = {{str(int(base_us * 1000)): ios - ios // 50, str(p99_ns): ios // 50}}
    entries.append({{"jobname": "randread", "groupid": 0,
        "read": {{"total_ios": ios, "runtime": int(runtime_s * 1000), "lat_ns": {{"bins": bins}}}}}})
out = [a.split("=", 1)[1] for a in sys.argv if a.startswith("--output=")][0]
with open(out, "w") as handle:
    handle.write("preamble\\n" + json.dumps({{"jobs": entries}}) + "\\nnormal output\\n")
"""


def test_the_engine_runs_one_fio_per_probe_and_records_the_search(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    fio = bin_dir / "fio"
    fio.write_text(FAKE_FIO.format(python=sys.executable), encoding="utf-8")
    fio.chmod(fio.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    workdir = tmp_path / "work"
    workdir.mkdir()
    lines: list[str] = []
    context = PhaseContext(
        str(tmp_path), "filesystem", str(workdir), str(tmp_path / "phase"), None, False, lines.append
    )
    phase = {
        "name": "search",
        "engine": "fio",
        "fio": {
            "jobs": [{"name": "randread", "options": {"rw": "randread", "numjobs": 2}}],
            "timeseries": False,
        },
        "search": dict(spec()),
    }
    result = run_phase(phase, context)  # type: ignore[arg-type]
    assert result["status"] == "ok", result["error"]
    outcome = result["search"]
    met, missed = outcome["bracket"]
    assert met <= 5600 < missed and (missed - met) / missed <= 0.05
    assert len(lines) == len(outcome["probes"]) and "probe 1 at 100 IOPS" in lines[0]
    for probe in outcome["probes"]:
        job = (tmp_path / "phase" / probe["dir"] / "job.fio").read_text(encoding="utf-8")
        assert f"rate_iops={math.ceil(probe['rate_iops'] / 2)}\n" in job  # the rate is per job
        assert (tmp_path / "phase" / probe["dir"] / "fio.json").is_file()
    assert "warnings" not in result  # the answer probe did thousands of I/Os over 2 s


def test_a_too_small_fio_phase_warns(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    fio = bin_dir / "fio"
    tiny = {"jobs": [{"read": {"total_ios": 10, "runtime": 7, "lat_ns": {"bins": {"1000": 10}}}}]}
    fio.write_text(
        f"#!{sys.executable}\nimport sys\n"
        "out = [a.split('=', 1)[1] for a in sys.argv if a.startswith('--output=')][0]\n"
        f"open(out, 'w').write({json.dumps(json.dumps(tiny))} + '\\n')\n",
        encoding="utf-8",
    )
    fio.chmod(fio.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    context = PhaseContext(str(tmp_path), "raw", None, str(tmp_path / "phase"), None, False)
    phase = {
        "name": "run",
        "engine": "fio",
        "fio": {"jobs": [{"name": "a", "options": {}}], "timeseries": False},
    }
    result = run_phase(phase, context)  # type: ignore[arg-type]
    assert result["status"] == "ok", result["error"]
    assert result["warnings"] == [
        "read: too small to measure: 0.007 s of I/O (under 1 s) and 10 I/Os (under 1,000 for latency "
        "percentiles); its rates are start-up and cache effects, not the storage "
        "(raise the scale or the runtime)"
    ]

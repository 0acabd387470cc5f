"""Configs against the baseline: cost deltas, noise-aware metric deltas, verdicts, Pareto, targets."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError
from reference_book import ReferenceBook
from tests.support.records import latency, result_record

from storagebench.costs.compare import Comparison, compare
from storagebench.costs.frontier import pareto_frontier
from storagebench.costs.goals import Target, cheapest_meeting
from storagebench.costs.measures import with_totals, workload_names
from storagebench.costs.monthly import price_request
from storagebench.costs.verdicts import verdict
from storagebench.request import load_request
from storagebench.results.records import ResultRecord

EVENTS = Path(__file__).resolve().parents[3] / "events"


def rec(
    config_id: str,
    workload: str,
    repetition: int,
    *,
    profile: str | None = None,
    direction: Any = "read",
    engine: Any = "fio",
    iops: float | None = None,
    bw: float | None = None,
    p95_us: float | None = None,
    target: str = "ebs0",
    phase: str = "run",
) -> ResultRecord:
    lat = None
    if p95_us is not None:
        spread = {"stdev_us": p95_us / 4, "min_us": 50, "max_us": p95_us * 3}
        lat = latency(p95_us, samples=10_000, **spread, p50_us=p95_us / 2, p99_us=p95_us * 1.5)
    names = {"config_id": config_id, "target_id": target, "workload": workload}
    kind = {"repetition": repetition, "phase": phase, "direction": direction, "engine": engine}
    return result_record(
        **names, profile=profile or workload, **kind, iops=iops, bw_mibps=bw, runtime_s=60, latency=lat
    )


def series(config_id: str, workload: str, values: list[float], **kwargs: Any) -> list[ResultRecord]:
    return [rec(config_id, workload, i + 1, bw=v, **kwargs) for i, v in enumerate(values)]


# ----------------------------------------------------------------------------- field study 1

TIGHT = [-0.5, -0.3, -0.1, 0.1, 0.3, 0.5] * 2  # 12 repetitions, as published


def study1_records(extra: bool = False) -> list[ResultRecord]:
    records: list[ResultRecord] = []
    dd = {"profile": "dd-seq-write-1m-dsync", "engine": "dd", "direction": "write", "target": "share"}
    # 1 MiB x 1,000 dsync writes: beta 2 % slower, well outside the noise.
    records += series("alpha-io1", "dd-seq-write-1m-dsync", [100 + d for d in TIGHT], **dd)
    records += series("beta-gp2", "dd-seq-write-1m-dsync", [98 + d for d in TIGHT], **dd)
    # the 1 MB file: nearly identical, inside the noise (as published)
    records += series("alpha-io1", "dd-1mb-file", [50, 52, 48, 51, 49, 50, 53, 47, 50, 51, 49, 50], **dd)
    records += series("beta-gp2", "dd-1mb-file", [50.5, 49, 51, 50, 52, 48, 50, 49, 51, 50, 48, 52], **dd)
    # fio 4k random, 25 % reads, one repetition (3 hours): io1 about 36 % faster
    fio: dict[str, Any] = {"profile": "fio-randrw-4k-25read", "target": "share"}
    records += [
        rec("alpha-io1", "fio-randrw-4k-25read", 1, direction="read", iops=1000, p95_us=900, **fio),
        rec("alpha-io1", "fio-randrw-4k-25read", 1, direction="write", iops=3000, p95_us=1200, **fio),
        rec("beta-gp2", "fio-randrw-4k-25read", 1, direction="read", iops=640, p95_us=1500, **fio),
        rec("beta-gp2", "fio-randrw-4k-25read", 1, direction="write", iops=1920, p95_us=2500, **fio),
    ]
    if extra:
        for profile, slower in (("dd-seq-write-1g-dsync", 0.90), ("dd-seq-write-4g-dsync", 0.88)):
            dd_big = {**dd, "profile": profile}
            records += series("alpha-io1", profile, [200 + d for d in TIGHT], **dd_big)
            records += series("beta-gp2", profile, [200 * slower + d for d in TIGHT], **dd_big)
    return records


def study1(extra: bool = False) -> Comparison:
    request = load_request(EVENTS / "file-gateway-io1-vs-gp2.json")
    return compare(request, price_request(request, ReferenceBook()), study1_records(extra))


def test_verdict_example_from_study1() -> None:
    comparison = study1()
    beta = comparison.config("beta-gp2")
    assert comparison.baseline == "alpha-io1"
    # The whole config: the c5.large client ($62.69 a month) is in both, so 37.6 %, not the
    # gateways' own 40.1 % (storagebench cost reports both).
    assert beta.delta_monthly_pct == pytest.approx(-37.58, abs=0.01)
    assert beta.verdict == (
        "38 % cheaper; "
        "2 % slower on dd 1 MiB x 1,000 synchronous write; "
        "-36 % IOPS on 4 jobs x 2 files, 4k random, 25 % reads (1 run: untested); "
        "no significant difference on dd-1mb-file"
    )
    assert comparison.config("alpha-io1").verdict == "baseline"


def test_deltas_carry_their_intervals_and_the_noise_verdict() -> None:
    beta = study1().config("beta-gp2")
    rows = {w.workload: w for w in beta.workloads}
    dd = rows["dd-seq-write-1m-dsync"].headline
    assert dd is not None
    assert dd.metric == "bw_mibps" and dd.noise == "outside" and dd.better is False
    assert dd.delta_pct == pytest.approx(-2.0)
    assert dd.baseline_ci95 is not None and dd.ci95 is not None and dd.ci95[1] < dd.baseline_ci95[0]
    assert dd.assessment == "2 % lower MiB/s"
    assert dd.p_value is not None and dd.p_value < 1e-6  # 12 tight repetitions a side
    small = rows["dd-1mb-file"].headline
    assert small is not None and small.noise == "overlap" and small.better is None
    assert small.p_value is not None and small.p_value > 0.05
    assert small.assessment.startswith("no significant difference (p = ")
    fio = rows["fio-randrw-4k-25read"]
    assert fio.headline is not None
    assert (fio.headline.metric, fio.headline.noise) == ("iops", "unknown")
    assert fio.headline.mean == 2560 and fio.headline.baseline_mean == 4000  # read+write totals
    assert "no test, noise unknown" in fio.headline.assessment
    assert fio.headline.p_value is None and fio.headline.better is None
    # latency (lower is better) is compared per direction; one run a side: no verdict on it
    write_p95 = next(d for d in fio.deltas if d.metric == "lat_p95_us" and d.measurement == "write")
    assert write_p95.higher_is_better is False and write_p95.better is None
    assert write_p95.delta_pct == pytest.approx(2500 / 1200 * 100 - 100)


def test_verdict_keeps_the_three_most_important_differences() -> None:
    beta = study1(extra=True).config("beta-gp2")
    assert beta.verdict == (
        "38 % cheaper; "
        "12 % slower on dd 4 GiB synchronous write; "
        "10 % slower on dd 1 GiB synchronous write; "
        "2 % slower on dd 1 MiB x 1,000 synchronous write; "
        "2 more not shown"
    )


def test_workload_names_use_titles_or_renamed_ids() -> None:
    names = workload_names(load_request(EVENTS / "file-gateway-io1-vs-gp2.json"))
    assert names["dd-1mb-file"] == "dd-1mb-file"
    assert names["fio-randrw-4k-25read"] == "4 jobs x 2 files, 4k random, 25 % reads"
    assert names["dd-seq-write-1m-dsync"] == "dd 1 MiB x 1,000 synchronous write"


def test_with_totals_sums_directions_per_repetition() -> None:
    records = [
        rec("a", "w", 1, direction="read", iops=100, bw=1.0),
        rec("a", "w", 1, direction="write", iops=300, bw=3.0),
        rec("a", "w", 2, direction="read", iops=110),
    ]
    totals = [r for r in with_totals(records) if r.direction == "mixed"]
    assert len(totals) == 1
    assert (totals[0].iops, totals[0].bw_mibps, totals[0].latency) == (400, 4.0, None)
    assert "read+write total" in totals[0].labels


# ----------------------------------------------------------------------------- Pareto, targets

NIGHTLY: dict[str, dict[str, list[float]]] = {
    # config: IOPS and p95 latency (us) over three repetitions of 4k random reads
    "gp3": {"iops": [3005, 3010, 3015], "p95": [1500, 1550, 1600]},
    "gp3-tuned": {"iops": [12000, 12050, 12100], "p95": [900, 950, 1000]},
    "gp2": {"iops": [3000, 3010, 3020], "p95": [1600, 1700, 1800]},
    "io2": {"iops": [11900, 12000, 12100], "p95": [400, 450, 500]},
}


def nightly() -> Comparison:
    request = load_request(EVENTS / "nightly-default.json")
    records = [
        rec(cid, "std-randread-4k", i + 1, iops=iops, p95_us=p95)
        for cid, m in NIGHTLY.items()
        for i, (iops, p95) in enumerate(zip(m["iops"], m["p95"], strict=True))
    ]
    return compare(request, price_request(request, ReferenceBook()), records)


def test_pareto_frontier_drops_dominated_configs() -> None:
    comparison = nightly()
    iops = comparison.frontier("std-randread-4k", "iops")
    # monthly: gp3 $537.04, gp2 $547.04, gp3-tuned $597.04, io2 $1,339.54
    assert iops.frontier == ["gp3", "gp3-tuned"]
    points = {p.config_id: p for p in iops.points}
    assert points["gp2"].dominated_by == ["gp3"]  # dearer, same mean IOPS
    assert points["io2"].dominated_by == ["gp3-tuned"]  # dearer and fewer IOPS
    assert points["gp3"].monthly_usd == pytest.approx(537.04)
    p95 = comparison.frontier("std-randread-4k", "lat_p95_us")
    assert p95.frontier == ["gp3", "gp3-tuned", "io2"]  # io2 buys the lowest latency
    assert not p95.higher_is_better


def test_pareto_frontier_directly() -> None:
    frontier = pareto_frontier(
        "w", "iops", {"cheap": (100.0, 1000.0), "dominated": (200.0, 900.0), "fast": (300.0, 5000.0)}
    )
    assert frontier.frontier == ["cheap", "fast"]
    assert next(p for p in frontier.points if p.config_id == "dominated").dominated_by == ["cheap"]
    tie = pareto_frontier("w", "lat_p95_us", {"a": (100.0, 2.0), "b": (100.0, 2.0)})
    assert tie.frontier == ["a", "b"]  # identical points dominate neither


def test_price_performance_per_workload() -> None:
    gp3 = nightly().config("gp3")
    perf = next(p for p in gp3.price_performance if p.workload == "std-randread-4k")
    assert perf.iops == pytest.approx(3010)
    assert perf.usd_per_1000_iops_month == pytest.approx(537.04 / 3.010)
    assert perf.mibps is None and perf.usd_per_mibps_month is None


def test_nightly_verdicts() -> None:
    comparison = nightly()
    assert (
        comparison.config("gp2").verdict
        == "2 % more expensive; no significant difference on 4k random read, IOPS-bound"
    )
    assert comparison.config("io2").verdict == "2.5x the cost; 4.0x faster on 4k random read, IOPS-bound"


def test_cheapest_meeting_found_judged_on_the_interval() -> None:
    comparison = nightly()
    target = Target(p95_latency_below_ms=2, iops_at_least=3000)
    assert target.describe() == "p95 latency below 2 ms at 3,000 IOPS or more"
    found = comparison.cheapest_meeting(target)
    # gp3's mean is 3,010 IOPS but its 95 % lower bound is below 3,000: not a safe bet.
    assert found.met and found.config_id == "gp3-tuned"
    assert found.monthly_usd == pytest.approx(597.04)
    assert found.explanation.startswith("gp3-tuned at $597.04/month meets p95 latency below 2 ms")
    gp3 = next(c for c in found.candidates if c.config_id == "gp3")
    assert not gp3.qualifies and "< 3,000" in gp3.reason
    on_means = comparison.cheapest_meeting(Target(p95_latency_below_ms=2, iops_at_least=3000, basis="mean"))
    assert on_means.config_id == "gp3"


def test_cheapest_meeting_not_found_says_why() -> None:
    comparison = nightly()
    result = comparison.cheapest_meeting(Target(p95_latency_below_ms=0.3, workload="std-randread-4k"))
    assert not result.met and result.config_id is None
    assert result.explanation.startswith("no config meets p95 latency below 0.3 ms on std-randread-4k")
    for cid in NIGHTLY:
        assert f"{cid}: p95 latency" in result.explanation
    io2 = next(c for c in result.candidates if c.config_id == "io2")
    assert io2.values["p95_latency_below_ms"] > 0.45  # the interval's upper bound
    unmeasured = cheapest_meeting(
        Target(mibps_at_least=100), comparison.costs, aggregates=comparison.aggregates
    )
    assert not unmeasured.met and "no MiB/s measured" in unmeasured.explanation


def test_target_needs_a_condition() -> None:
    with pytest.raises(ValidationError, match="at least one condition"):
        Target()
    with pytest.raises(ValidationError):
        Target(iops_at_least=-1)


def test_configs_without_results_compare_on_cost_only() -> None:
    request = load_request(EVENTS / "virtual-san.json")
    comparison = compare(request, price_request(request, ReferenceBook()), [])
    row = comparison.config("r5b-io2-controllers")
    # the controllers are priced with it: 5.3x io2 direct attachment, not the "66 % cheaper" of a
    # bill that left them out
    assert row.verdict == "5.3x the cost; no results to compare"
    assert not row.cost_partial
    assert comparison.frontiers == []


def test_verdict_items_split_on_commas_when_no_name_has_one() -> None:
    comparison = study1()
    plain = [w for w in comparison.config("beta-gp2").workloads if w.workload == "dd-1mb-file"]
    assert verdict(-40.0, plain) == "40 % cheaper, no significant difference on dd-1mb-file"

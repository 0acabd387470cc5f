"""build_report on a realistic stored run: the numbers are the aggregates' and the comparison's, and
the three renderings carry them; missing inputs, failed configs and single runs are said, not hidden."""

from __future__ import annotations

import csv
import io
import math
import re
from html import escape
from typing import Any

import pytest
from tests.support import report_runs as fx

from storagebench.analysis.grades import grade
from storagebench.analysis.stats import Aggregate, aggregate
from storagebench.costs.measures import with_totals
from storagebench.report import METRIC_INFO, Report, build_report, render_csv, render_html, render_markdown
from storagebench.report.findings import caveats
from storagebench.report.fmt import delta_text, metric_value, value_text
from storagebench.report.markdown import md
from storagebench.report.model import Value

# The headline each workload's intent gives (costs.compare.INTENT_METRICS): (metric, direction)
HEADLINE = {
    "std-randread-4k": ("iops", "read"),
    "std-seqread-1m": ("bw_mibps", "read"),
    "std-latency-4k-qd1": ("lat_p95_us", "read"),
    "fio-randrw-4k-25read": ("iops", "mixed"),  # the read+write total
}


@pytest.fixture(scope="module")
def inputs() -> dict[str, Any]:
    return fx.full_report_inputs()


@pytest.fixture(scope="module")
def report(inputs: dict[str, Any]) -> Report:
    return build_report(**inputs)


@pytest.fixture(scope="module")
def aggregates() -> list[Aggregate]:
    return aggregate(with_totals(fx.records()))


def agg_of(aggregates: list[Aggregate], config_id: str, workload: str, direction: str) -> Aggregate:
    (found,) = [
        a for a in aggregates if (a.config_id, a.workload, a.direction) == (config_id, workload, direction)
    ]
    return found


def test_each_cell_holds_the_aggregate_of_its_headline_measurement(
    report: Report, aggregates: list[Aggregate]
) -> None:
    assert [w.id for w in report.workloads] == list(HEADLINE)
    for info in report.workloads:
        assert info.metric is not None and info.metric.name == HEADLINE[info.id][0]
    rows = {r.config_id: r for r in report.configs}
    for config_id in ("gp2", "gp3", "io1"):
        for cell in rows[config_id].cells:
            metric, direction = HEADLINE[cell.workload]
            summary = agg_of(aggregates, config_id, cell.workload, direction).metrics[metric]
            assert cell.value == Value(
                mean=summary.mean, ci_low=summary.ci95_low, ci_high=summary.ci95_high, n=summary.n
            )
            assert summary.n == 3 and cell.value.ci_low is not None


def test_deltas_costs_and_verdicts_are_the_comparisons(
    report: Report, inputs: dict[str, Any], aggregates: list[Aggregate]
) -> None:
    compared = {c["config_id"]: c for c in inputs["comparison"]["configs"]}
    for row in report.configs:
        assert row.monthly_usd == compared[row.config_id]["monthly_usd"]
        assert row.delta_monthly_pct == compared[row.config_id]["delta_monthly_pct"]
        assert row.verdict == compared[row.config_id]["verdict"]
    rows = {r.config_id: r for r in report.configs}
    for config_id in ("gp2", "io1"):
        deltas = [d for w in compared[config_id]["workloads"] for d in w["deltas"]]
        for cell in rows[config_id].cells:
            metric, direction = HEADLINE[cell.workload]
            base = agg_of(aggregates, "gp3", cell.workload, direction).metrics[metric].mean
            mine = agg_of(aggregates, config_id, cell.workload, direction).metrics[metric].mean
            assert cell.delta is not None
            assert cell.delta.pct == pytest.approx((mine - base) / abs(base) * 100, rel=1e-12)
            # the very delta the comparison computed for that measurement
            same = [
                d
                for d in deltas
                if d["workload"] == cell.workload
                and d["metric"] == metric
                and d["delta_pct"] == cell.delta.pct
            ]
            assert same and same[0]["noise"] == cell.delta.noise
    assert rows["gp3"].is_baseline and all(c.delta is None for c in rows["gp3"].cells)


def test_grades_are_the_p95_of_the_worst_direction_with_their_threshold(
    report: Report, aggregates: list[Aggregate]
) -> None:
    rows = {r.config_id: r for r in report.configs}
    for config_id in ("gp2", "gp3", "io1"):
        for cell in rows[config_id].cells:
            directions = ["read", "write"] if cell.workload == "fio-randrw-4k-25read" else ["read"]
            worst = max(
                agg_of(aggregates, config_id, cell.workload, d).metrics["lat_p95_us"].mean for d in directions
            )
            assert cell.grade is not None
            expected = grade(worst)
            assert (cell.grade.letter, cell.grade.p95_us, cell.grade.rule) == (
                expected.letter,
                expected.p95_us,
                expected.rule,
            )
    seq = {c.workload: c for c in rows["gp2"].cells}["std-seqread-1m"]
    assert seq.grade is not None and seq.grade.letter == "D" and "> 14.00 ms" in seq.grade.rule


def test_html_and_markdown_carry_the_table_numbers(report: Report) -> None:
    html, markdown = render_html(report), render_markdown(report)
    for row in report.configs:
        for info, cell in zip(report.workloads, row.cells, strict=True):
            if cell.value is None:
                continue
            assert info.metric is not None
            assert md(value_text(info.metric, cell.value)) in markdown
            shown = metric_value(info.metric, cell.value.mean)
            assert f'<span class="v">{shown}</span>' in html
            if cell.delta is not None:
                assert md(delta_text(cell.delta)) in markdown
                assert delta_text(cell.delta) in html
            assert cell.grade is not None and cell.grade.rule.split(" -> ")[0] in html.replace(
                "&lt;", "<"
            ).replace("&gt;", ">")
        assert md(row.verdict) in markdown
    assert not re.search(r"\d\s*(<[^>]*>\s*)*±", markdown + html)  # intervals are [low–high]
    assert "(n=3, few repetitions)" in markdown and "n=3, few repetitions" in html


def test_csv_has_one_row_per_measurement_and_metric_with_exact_numbers(
    report: Report, aggregates: list[Aggregate], inputs: dict[str, Any]
) -> None:
    rows = list(csv.DictReader(io.StringIO(render_csv(report))))
    assert len(rows) == sum(len(a.metrics) for a in aggregates)
    monthly = {c["config_id"]: c["monthly_usd"] for c in inputs["comparison"]["configs"]}
    by_key = {(a.config_id, a.workload, a.direction, a.variant, a.phase): a for a in aggregates}
    base = {(a.workload, a.direction): a for a in aggregates if a.config_id == "gp3"}
    for row in rows:
        agg = by_key[(row["config_id"], row["workload"], row["direction"], row["variant"], row["phase"])]
        summary = agg.metrics[row["metric"]]
        assert float(row["mean"]) == summary.mean
        assert float(row["ci_low"]) == summary.ci95_low and float(row["ci_high"]) == summary.ci95_high
        assert int(row["n"]) == summary.n
        assert row["unit"] == METRIC_INFO[row["metric"]].stored_unit
        assert float(row["monthly_usd"]) == monthly[row["config_id"]]
        assert row["run_id"] == fx.RUN_ID
        assert row["storage_option"] == fx.storage_option(row["config_id"])
        reference = base[(row["workload"], row["direction"])].metrics[row["metric"]].mean
        if row["config_id"] == "gp3":
            assert row["delta_pct_vs_baseline"] == ""
        else:
            assert float(row["delta_pct_vs_baseline"]) == pytest.approx(
                (summary.mean - reference) / reference * 100
            )
        p95 = agg.metrics.get("lat_p95_us")
        assert row["grade"] == (grade(p95.mean).letter if p95 is not None else "")
    totals = [r for r in rows if r["direction"] == "mixed"]
    assert totals and all("read+write total" in r["labels"] for r in totals)


def test_a_failed_config_without_results_is_shown_with_its_error(report: Report) -> None:
    st1 = {r.config_id: r for r in report.configs}["st1"]
    assert st1.status == "failed" and st1.records == 0
    assert all(cell.value is None for cell in st1.cells)
    assert st1.errors == ["provision: CapacityError: InsufficientInstanceCapacity in us-east-1a"]
    errors = [f for f in report.warnings if f.severity == "error"]
    assert [f.config_id for f in errors] == ["st1"] and "InsufficientInstanceCapacity" in errors[0].text
    assert "st1" in {b for chart in report.bars for b in chart.missing}
    html = render_html(report)
    assert "InsufficientInstanceCapacity in us-east-1a" in html
    assert report.warnings[0].severity == "error"  # errors first


def test_labels_from_collect_become_findings_naming_config_and_share(report: Report) -> None:
    texts = [f.text for f in report.warnings]

    def one(*words: str) -> str:
        (found,) = [t for t in texts if all(w in t for w in words)]
        return found

    assert one("gp2, 4k random read, IOPS-bound", "ran out of burst credits 41 s", "1 of 3 repetitions")
    assert one("gp2,", "measured on burst credits", "1 of 3")
    assert one("gp2,", "delivered 71 %", "under-delivered")
    assert one("io1,", "instance's EBS limit", "every repetition")
    assert one("gp2,", "two modes", "0.180 ms", "2.90 ms")
    cells = {c.workload: c for c in {r.config_id: r for r in report.configs}["gp2"].cells}
    assert cells["std-randread-4k"].flags == [
        "crossed burst knee",
        "on burst credits",
        "under-delivered 71 %",
    ]
    histogram = next(
        h for h in report.histograms if (h.config_id, h.workload) == ("gp2", "std-latency-4k-qd1")
    )
    assert histogram.bimodal is not None and "two latency modes" in histogram.bimodal
    # said once, first (findings.caveats), not again among the notes
    assert any("emulated volumes" in caveat for caveat in caveats(report))
    assert not any("emulated" in note for note in report.notes)


def test_flagged_regressions_are_reported_against_their_band(report: Report) -> None:
    assert report.regression_counts == {"regression": 1, "none": 1, "insufficient history": 1}
    (row,) = report.regressions
    assert (row.workload, row.metric.name, row.config_ids, row.history_n) == (
        "std-randread-4k",
        "lat_p95_us",
        ["gp3"],
        9,
    )
    assert row.measurement == "read"  # the workload has one fio job group: not named
    cell = {c.workload: c for c in {r.config_id: r for r in report.configs}["gp3"].cells}["std-randread-4k"]
    assert cell.regressions and "+36 %" in cell.regressions[0] and "last 9 runs" in cell.regressions[0]
    assert "0.110 to 0.126 ms" in cell.regressions[0]
    html, markdown = render_html(report), render_markdown(report)
    counts = "3 metric(s) compared with the suite's earlier runs: 1 regression(s), 1 within noise"
    assert escape(counts) in html and md(counts) in markdown
    assert "| regression | gp3 |" in markdown


def test_series_keep_the_knee_and_share_axes(report: Report) -> None:
    charts = {(c.config_id, c.workload): c for c in report.series}
    assert len(charts) == 12
    gp2 = charts[("gp2", "std-randread-4k")]
    assert [ln.label for ln in gp2.lines] == ["repetition 1", "repetition 2", "repetition 3"]
    assert [ln.knee_s for ln in gp2.lines] == [None, 41.0, None]
    # read and write of the randrw phase are summed into one line
    mixed = charts[("gp3", "fio-randrw-4k-25read")].lines[0]
    document = fx.series_document("gp3")["series"]
    read, write = (
        e["iops"] for e in document if e["workload"] == "fio-randrw-4k-25read" and e["repetition"] == 1
    )
    assert mixed.iops == [r + w for r, w in zip(read, write, strict=True)]
    html = render_html(report)
    assert html.count('class="knee"') == 1 and "burst knee 41 s" in html


def test_scatter_is_the_comparisons_frontier(report: Report, inputs: dict[str, Any]) -> None:
    frontiers = {(f["workload"], f["metric"]): f for f in inputs["comparison"]["frontiers"]}
    assert len(report.scatters) == 4
    for scatter in report.scatters:
        frontier = frontiers[(scatter.workload, scatter.metric.name)]
        assert scatter.frontier == frontier["frontier"]
        assert {(p.config_id, p.monthly_usd, p.value, p.on_frontier) for p in scatter.points} == {
            (p["config_id"], p["monthly_usd"], p["value"], p["on_frontier"]) for p in frontier["points"]
        }


def test_header_run_cost_and_prices(report: Report, inputs: dict[str, Any]) -> None:
    h = report.header
    assert (h.run_id, h.suite, h.status, h.region, h.baseline) == (
        fx.RUN_ID,
        "nightly-ebs",
        "PARTIAL",
        "us-east-1",
        "gp3",
    )
    assert h.duration_s == 42 * 60 + 10
    assert h.price_source == "snapshot" and h.price_date == "2026-11-21"
    assert h.run_cost_usd == pytest.approx(inputs["run_cost"]["total_usd"])
    by_config: dict[str, float] = {}
    for c in inputs["run_cost"]["components"]:
        if c["config_id"]:
            by_config[c["config_id"]] = by_config.get(c["config_id"], 0.0) + c["usd"]
    for row in report.configs:
        assert row.run_cost_usd == pytest.approx(by_config[row.config_id])
    assert {r.config_id: r.storage_option for r in report.configs} == {
        "gp2": "gp2 100 GiB · 300 IOPS (burst 3,000) · xfs",
        "gp3": "gp3 1,000 GiB · 3,000 IOPS · 125 MiB/s · xfs",
        "io1": "io1 100 GiB · 4,000 IOPS · xfs",
        "st1": "st1 500 GiB · 19.5 MiB/s (burst 122) · xfs",
    }


# --------------------------------------------------------------------------- missing inputs


def test_one_repetition_has_no_interval_and_says_1_run() -> None:
    records = fx.records(repetitions=1)
    report = build_report(fx.stored(records), request=fx.request(), comparison=fx.comparison(records))
    cell = {r.config_id: r for r in report.configs}["gp2"].cells[0]
    assert cell.value is not None and cell.value.n == 1 and cell.value.ci_low is None
    assert cell.delta is not None and cell.delta.noise == "unknown"
    html, markdown = render_html(report), render_markdown(report)
    metric = METRIC_INFO["iops"]
    assert md(value_text(metric, cell.value)) in markdown and value_text(metric, cell.value).endswith(
        "(1 run: no spread, no interval)"
    )
    assert "1 run: no spread, no interval" in html and "(1 run)" in delta_text(cell.delta)
    assert "[" not in value_text(metric, cell.value)
    assert 'class="ci"' not in html  # no whisker without an interval
    rows = list(csv.DictReader(io.StringIO(render_csv(report))))
    assert rows and all(r["ci_low"] == "" and r["ci_high"] == "" and r["n"] == "1" for r in rows)


def test_without_a_comparison_one_is_priced_from_the_bundled_snapshot(inputs: dict[str, Any]) -> None:
    report = build_report(inputs["stored"], request=fx.request())
    compared = {c["config_id"]: c for c in inputs["comparison"]["configs"]}
    for row in report.configs:
        assert row.monthly_usd == compared[row.config_id]["monthly_usd"]
        assert row.verdict == compared[row.config_id]["verdict"]
    assert any("bundled price snapshot" in note for note in report.notes)
    assert report.series == [] and report.regressions == [] and report.header.run_cost_usd is None
    html = render_html(report)
    assert "No comparison with earlier runs" in html and "No time series were stored" in html


def test_the_request_stored_with_the_run_is_used_when_none_is_given(inputs: dict[str, Any]) -> None:
    report = build_report(inputs["stored"], comparison=inputs["comparison"])
    assert report.header.name == "nightly-ebs" and report.configs[0].instance_type == "c5.4xlarge"


def test_without_request_or_comparison_the_results_still_report() -> None:
    stored = fx.stored(request_document=False)
    report = build_report(stored)
    assert [r.config_id for r in report.configs] == ["gp2", "gp3", "io1", "st1"]
    assert all(r.monthly_usd is None and r.verdict in ("-", "baseline") for r in report.configs)
    assert report.configs[0].storage_option == fx.storage_option("gp2")  # the stored label
    assert [w.id for w in report.workloads] == list(HEADLINE)
    assert report.scatters == []
    assert any("not priced" in n for n in report.notes) and any("no comparison" in n for n in report.notes)
    for text in (render_html(report), render_markdown(report), render_csv(report)):
        assert fx.RUN_ID in text


def test_results_stored_flat_with_extra_attributes_are_read_too(inputs: dict[str, Any]) -> None:
    """A record's fields beside the store's own attributes (storage_option, suite, run_id, ...)."""
    stored = fx.stored()
    stored["results"] = [
        {
            **item["record"],
            "storage_option": item["labels"]["storage_option"],
            "suite": "nightly-ebs",
            "run_id": fx.RUN_ID,
            "type": "result",
            "record_key": item["record_key"],
        }
        for item in stored["results"]
    ]
    flat = build_report(stored, request=fx.request(), comparison=inputs["comparison"])
    nested = build_report(inputs["stored"], request=fx.request(), comparison=inputs["comparison"])
    assert flat.configs == nested.configs and flat.measurements == nested.measurements
    assert flat.notes == nested.notes


def test_a_run_cost_with_its_own_split_by_config_is_used(inputs: dict[str, Any]) -> None:
    run_cost = {"total_usd": 3.0, "by_config": {"gp2": 1.0, "gp3": 2.0}, "components": []}
    report = build_report(
        inputs["stored"], request=fx.request(), comparison=inputs["comparison"], run_cost=run_cost
    )
    assert {r.config_id: r.run_cost_usd for r in report.configs} == {
        "gp2": 1.0,
        "gp3": 2.0,
        "io1": None,
        "st1": None,
    }
    assert report.header.run_cost_usd == 3.0


def test_empty_run_renders() -> None:
    report = build_report({"run": {"run_id": "r-empty", "status": "FAILED"}, "configs": [], "results": []})
    assert report.configs == [] and report.measurements == []
    assert "r-empty" in render_html(report) and "r-empty" in render_markdown(report)
    assert render_csv(report).startswith("run_id,config_id,storage_option,workload")


def test_unreadable_results_are_left_out_and_said() -> None:
    stored = fx.stored()
    stored["results"].append({"config_id": "gp2", "record_key": "broken", "record": {"iops": "fast"}})
    stored["results"].append("not a result")
    report = build_report(stored, request=fx.request(), comparison=fx.comparison())
    (note,) = [n for n in report.notes if "could not be read" in n]
    assert note.startswith("2 stored result(s)") and "broken" in note
    assert report.header.records == len(fx.records())


# --------------------------------------------------------------------------- hostile text

HOSTILE_ID = '<script>alert("id")</script>|**x**'
HOSTILE_CAUSE = "<img src=x onerror=alert(1)> | `rm -rf /` ![t](http://evil.example/p.png)"
FORMULA_ID = '=HYPERLINK("http://evil.example")'


def hostile_report() -> Report:
    records = [
        r.model_copy(
            update={
                "config_id": {"gp2": HOSTILE_ID, "gp3": "gp3", "io1": FORMULA_ID}[r.config_id],
                "labels": ["<b>label</b>"],
            }
        )
        for r in fx.records()
    ]
    stored = fx.stored(records, request_document=False)
    stored["run"]["configs"] = [HOSTILE_ID, "gp3", FORMULA_ID, "st1"]
    stored["configs"] = []
    stored["run"]["config_results"] = [
        {
            "config_id": "st1",
            "status": "failed",
            "errors": [{"step": "agent", "error": "X", "cause": HOSTILE_CAUSE}],
        }
    ]
    series = {HOSTILE_ID: fx.series_document("gp2")}
    return build_report(stored, regressions=fx.regressions(), series=series)


def test_text_from_the_data_is_escaped_in_html() -> None:
    html = render_html(hostile_report())
    assert "<script" not in html.lower() and "<img" not in html.lower() and "<b>label" not in html
    assert "&lt;script&gt;alert(&quot;id&quot;)&lt;/script&gt;" in html
    assert "&lt;img src=x onerror=alert(1)&gt;" in html
    assert 'data-config="&lt;script&gt;' in html  # attributes too
    assert "evil.example" in html and 'src="http' not in html and 'href="http' not in html


def test_text_from_the_data_is_escaped_in_markdown() -> None:
    markdown = render_markdown(hostile_report())
    assert "<script" not in markdown and "<img" not in markdown and "<b>" not in markdown
    assert r"\*\*x\*\*" in markdown and "&lt;script&gt;" in markdown
    assert r"!\[t\](http://evil.example/p.png)" in markdown  # not an image any more
    table = [line for line in markdown.splitlines() if line.startswith("| **")]  # the comparison's rows
    assert len(table) == 4
    header = next(line for line in markdown.splitlines() if line.startswith("| Config |"))
    columns = header.count(" | ")
    for line in table:  # an escaped pipe does not split a cell
        assert line.replace(r"\|", "").count(" | ") == columns


def test_csv_neutralises_formulas() -> None:
    rows = list(csv.DictReader(io.StringIO(render_csv(hostile_report()))))
    ids = {r["config_id"] for r in rows}
    assert "'" + FORMULA_ID in ids and FORMULA_ID not in ids and HOSTILE_ID in ids
    negative = [r for r in rows if r["delta_pct_vs_baseline"].startswith("-")]
    assert negative and all(math.isfinite(float(r["delta_pct_vs_baseline"])) for r in negative)

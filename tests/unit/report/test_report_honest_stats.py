"""Honest statistics in every rendering: no interval below zero, few repetitions said, one repetition
without an interval, and emulated (or directory) results announced first and marked where graded."""

from __future__ import annotations

import csv
import io
import re
from typing import Any

import pytest
from rich.console import Console
from tests.support import report_runs as fx

from storagebench.analysis.stats import aggregate, summarize
from storagebench.costs.measures import with_totals
from storagebench.report import METRIC_INFO, Report, build_report, render_csv, render_html, render_markdown
from storagebench.report.fmt import delta_text, grade_text, value_text
from storagebench.report.markdown import md
from storagebench.report.model import MetricInfo, Value
from storagebench.results.records import ResultRecord

LATENCY = MetricInfo(
    name="latency", label="latency", unit="ms", scale=1e-3, stored_unit="us", higher_is_better=False
)
# "[low–high]" as printed (Markdown escapes the brackets), and any "mean ± half" at all.
BRACKETS = re.compile(r"\\?\[\s*(-?[\d.,]+)\s*[–-]\s*(-?[\d.,]+)\s*\\?\]")
PLUS_MINUS = re.compile(r"(-?[\d.,]+)\s*(?:<[^>]*>\s*)*±\s*([\d.,]+)")
NUMBER_PLUS_MINUS = re.compile(r"\d\s*(?:<[^>]*>\s*)*±")  # a value's interval; not a formula's "median ±"


def number(text: str) -> float:
    return float(text.replace(",", ""))


def widened(records: list[ResultRecord], factor: float = 12.0) -> list[ResultRecord]:
    """Repetition 2 is ``factor`` times repetition 1: the t interval of two runs then reaches below 0."""
    out = []
    for original in records:
        rec = original
        if rec.repetition == 2:
            update: dict[str, Any] = {
                "iops": None if rec.iops is None else rec.iops * factor,
                "bw_mibps": None if rec.bw_mibps is None else rec.bw_mibps * factor,
            }
            if rec.latency is not None:
                latency = rec.latency.model_dump()
                latency.update(
                    {k: v * factor for k, v in latency.items() if k.endswith("_us") and isinstance(v, float)}
                )
                update["latency"] = rec.latency.model_validate(latency)
            rec = rec.model_copy(update=update)
        out.append(rec)
    return out


def relabel(records: list[ResultRecord], label: str | None) -> list[ResultRecord]:
    """The records with their emulated:... label replaced by ``label`` (None: no environment label)."""
    extra = [label] if label else []
    return [
        r.model_copy(update={"labels": [x for x in r.labels if not x.startswith("emulated:")] + extra})
        for r in records
    ]


def report_of(records: list[ResultRecord]) -> Report:
    return build_report(fx.stored(records), request=fx.request(), comparison=fx.comparison(records))


@pytest.fixture(scope="module")
def two_runs() -> list[ResultRecord]:
    return widened(fx.records(repetitions=2))


@pytest.fixture(scope="module")
def wide(two_runs: list[ResultRecord]) -> Report:
    return report_of(two_runs)


# --------------------------------------------------------------------------- intervals


def cli_text(records: list[ResultRecord]) -> str:
    from storagebench.cli import render

    console = Console(record=True, width=400)
    render.aggregates(console, aggregate(with_totals(records)))
    return console.export_text()


def test_no_rendering_shows_an_interval_below_zero(wide: Report, two_runs: list[ResultRecord]) -> None:
    unclipped = [
        summarize(s.values).ci95_low for a in aggregate(with_totals(two_runs)) for s in a.metrics.values()
    ]
    assert any(low is not None and low < 0 for low in unclipped), "the data must reach below 0 unclipped"
    renderings = {
        "html": render_html(wide),
        "markdown": render_markdown(wide),
        "cli": cli_text(two_runs),
    }
    for name, text in renderings.items():
        for mean, half in PLUS_MINUS.findall(text):
            assert number(mean) - number(half) >= 0, f"{name}: {mean} ± {half} runs below 0"
        intervals = BRACKETS.findall(text)
        assert intervals, f"{name} shows no interval at all"
        for low, high in intervals:
            assert 0 <= number(low) <= number(high), f"{name}: [{low}–{high}]"
        assert any(number(low) == 0 for low, _ in intervals), f"{name}: no clipped interval shown"
    rows = list(csv.DictReader(io.StringIO(render_csv(wide))))
    lows = [float(r["ci_low"]) for r in rows if r["ci_low"]]
    assert lows and min(lows) == 0.0


def test_no_value_is_followed_by_plus_minus_in_any_rendering(
    wide: Report, two_runs: list[ResultRecord]
) -> None:
    for text in (render_html(wide), render_markdown(wide), render_csv(wide), cli_text(two_runs)):
        assert not NUMBER_PLUS_MINUS.search(text)


def test_value_text_forms() -> None:
    iops = METRIC_INFO["iops"]
    assert value_text(iops, Value(mean=12345.0, ci_low=12100.0, ci_high=12600.0, n=5)) == (
        "12,345 [12,100–12,600] IOPS (n=5)"
    )
    assert value_text(LATENCY, Value(mean=2121.0, ci_low=-19022.0, ci_high=23264.0, n=2)) == (
        "2.12 [0–23.26] ms (n=2, few repetitions)"
    )
    assert value_text(iops, Value(mean=12345.0, n=1)) == "12,345 IOPS (1 run: no spread, no interval)"
    assert grade_text("A", emulated=True) == "A (emulated)" and grade_text("B", emulated=False) == "B"


# --------------------------------------------------------------------------- repetitions


def test_percentiles_from_two_repetitions_are_labelled(wide: Report) -> None:
    markdown, html = render_markdown(wide), render_html(wide)
    p99s = [row.p99_us for row in wide.latency if row.p99_us is not None]
    assert p99s and all(v.n == 2 for v in p99s)
    for value in p99s:
        text = value_text(LATENCY, value, unit=False)
        assert text.endswith("(n=2, few repetitions)")
        assert md(text) in markdown
    assert html.count("n=2, few repetitions") >= len(p99s)


def test_one_repetition_shows_no_interval_and_says_why() -> None:
    report = report_of(fx.records(repetitions=1))
    markdown = render_markdown(report)
    for row in report.latency:
        for value in (row.p50_us, row.p95_us, row.p99_us):
            if value is None:
                continue
            text = value_text(LATENCY, value, unit=False)
            assert "[" not in text and text.endswith("(1 run: no spread, no interval)")
            assert md(text) in markdown
    assert not BRACKETS.search(markdown)


# --------------------------------------------------------------------------- emulation first


def test_markdown_opens_with_the_emulated_caveat(wide: Report) -> None:
    lines = [line for line in render_markdown(wide).splitlines() if line.strip()]
    assert lines[0].startswith("# ")
    # Records from before the EBS twin carry no emulator label: the throttle measured them.
    assert lines[1].startswith("> **Caveat: throttled emulated volumes (gp2, gp3, io1): ")
    assert "not EBS latency" in lines[1]


def test_html_opens_with_the_emulated_caveat(wide: Report) -> None:
    html = render_html(wide)
    caveat = html.index('<ul class="findings caveats" id="caveats">')
    assert html.index("</h1>") < caveat < html.index('<dl class="meta">')
    assert caveat < html.index('<div class="summary">') < html.index("<section")
    assert "throttled emulated volumes (gp2, gp3, io1): " in html[caveat : html.index('<dl class="meta">')]


def test_grades_verdicts_and_frontier_on_emulated_volumes_are_marked(wide: Report) -> None:
    markdown, html = render_markdown(wide), render_html(wide)
    letters = {row.grade.letter for row in wide.latency if row.grade is not None}
    assert letters
    for letter in letters:
        assert f"**{letter} (emulated)**" in markdown and f">{letter} (emulated)</span>" in html
        assert f"**{letter}** " not in markdown and f'grade-{letter}" ' in html
        assert not re.search(rf'class="grade grade-{letter}"[^>]*>{letter}</span>', html)
    for row in wide.configs:
        if not row.is_baseline and any(label.startswith("emulated:") for label in row.environment):
            assert md(f"{row.verdict} (emulated)") in markdown
    claims: set[bool] = set()
    for report in (wide, build_report(**fx.full_report_inputs())):  # within noise; clear differences
        shown = render_markdown(report)
        for delta in (c.delta for row in report.configs for c in row.cells if c.delta is not None):
            claimed = md(f"{delta_text(delta)} (emulated)")
            assert (claimed in shown) == (delta.better is not None), delta_text(delta)
            claims.add(delta.better is not None)
    assert claims == {True, False}
    if wide.scatters:
        assert "Pareto frontier (emulated)" in markdown and "Pareto frontier (emulated)" in html


def test_real_volumes_get_no_caveat_and_no_marks(two_runs: list[ResultRecord]) -> None:
    report = report_of(relabel(two_runs, None))
    for text in (render_markdown(report), render_html(report)):
        assert "Caveat" not in text and 'id="caveats"' not in text
        assert "(emulated)" not in text


def test_directory_targets_get_the_page_cache_caveat_first(two_runs: list[ResultRecord]) -> None:
    report = report_of(relabel(two_runs, "directory:unthrottled"))
    lines = [line for line in render_markdown(report).splitlines() if line.strip()]
    assert lines[1].startswith("> **Caveat: directory target (gp2, gp3, io1): ")
    assert "page cache" in lines[1]
    html = render_html(report)
    assert html.index("directory target (gp2, gp3, io1)") < html.index('<dl class="meta">')

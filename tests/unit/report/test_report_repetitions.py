"""How repetitions stopped, in the report: the "Adaptive repetitions" section (HTML and Markdown: each
series' spent, allowed, precision reached and why it stopped; fio's steady-state verdicts), the
findings for series short of their precision and jobs that never settled, and nothing of it when
the run has neither. The series are the agent's own records (``agent.adaptive.decide``) stored in
the configs' collect summaries as Collect stores them."""

from __future__ import annotations

import copy
import re
from typing import Any

import pytest
from tests.support import report_runs as fx

from storagebench.report import Report, build_report, render_html, render_markdown
from storagebench.store.models import decode_run


@pytest.fixture(scope="module")
def inputs() -> dict[str, Any]:
    return {**fx.full_report_inputs(), "stored": fx.with_repetition_stops(fx.stored())}


@pytest.fixture(scope="module")
def report(inputs: dict[str, Any]) -> Report:
    return build_report(**inputs)


def _section(text: str, start: str, end: str) -> str:
    assert text.count(start) == 1, f"{start!r} appears {text.count(start)} times"
    return text.split(start)[1].split(end, maxsplit=1)[0]


def test_the_stops_are_read_even_from_a_state_that_does_not_validate(
    report: Report, inputs: dict[str, Any]
) -> None:
    # the fixture's config states are partial (no work item): read leniently, like the rest of a config
    assert all(c.state is None for c in decode_run(inputs["stored"]).configs)
    assert [s.config_id for s in report.repetition_stops] == ["gp2", "gp3"]  # the request's order
    gp2, gp3 = report.repetition_stops
    assert [(s.series, s.spent, s.stopped) for s in gp2.series] == [("std-randread-4k.ebs0", 3, "max")]
    assert [(s.series, s.spent, s.stopped) for s in gp3.series] == [("std-randread-4k.ebs0", 3, "precision")]
    assert [v.attained for v in gp2.steady_state + gp3.steady_state] == [False, True]


def test_the_markdown_section_tables_series_and_verdicts(report: Report) -> None:
    markdown = render_markdown(report)
    section = _section(markdown, "## Adaptive repetitions and steady state\n", "\n## ")
    assert (
        "| config | series | headline metric | spent | allowed, asked | ±95 % reached | stopped |\n"
        "| --- | --- | --- | ---: | --- | ---: | --- |\n"
        "| gp2 | std-randread-4k.ebs0 | IOPS | 3 | 2..3, &lt; 2 % | ±71.5 % | "
        "max reached (±71.5 % after 3) |\n"
        "| gp3 | std-randread-4k.ebs0 | IOPS | 3 | 2..3, &lt; 2 % | ±0.6 % | "
        "precision reached (±0.6 % &lt; 2 % after 3) |"
    ) in section
    assert (
        "| gp2 | std-seqread-1m-r1 | run | std-seqread-1m | iops\\_slope:0.3% | 60 s | "
        "not attained | 300 s |\n"
        "| gp3 | std-seqread-1m-r1 | run | std-seqread-1m | iops\\_slope:0.3% | 60 s | attained | 95 s |"
    ) in section
    # each table after the paragraph that says how to read it
    assert section.index("Adaptive repetitions repeat") < section.index("| config | series")
    assert section.index("| config | series") < section.index("fio's steady-state detection ends")
    assert section.index("fio's steady-state detection ends") < section.index("| config | step")
    # right after the comparison, before the sections that read single measurements
    assert markdown.index("## Configs against the baseline") < markdown.index("## Adaptive repetitions")
    assert markdown.index("## Adaptive repetitions") < markdown.index("## Latency\n")


def test_the_html_section_scrolls_inside_its_own_box_and_escapes_the_data(inputs: dict[str, Any]) -> None:
    stored = copy.deepcopy(inputs["stored"])
    (gp3,) = [c for c in stored["configs"] if c["config_id"] == "gp3"]
    gp3["state"]["collected"]["series"][0]["series"] = "<b>std-randread-4k</b>.ebs0"
    html = render_html(build_report(**{**inputs, "stored": stored}))
    assert '<a href="#repetitions">Adaptive repetitions and steady state</a>' in html
    section = _section(html, '<section id="repetitions">', "</section>")
    tables = re.findall(r'<div class="scroll"><table>.*?</table></div>', section)
    assert len(tables) == 2 and section.count("<table>") == 2  # every table in a scrolling box
    assert "&lt;b&gt;std-randread-4k&lt;/b&gt;.ebs0" in section and "<b>" not in section
    assert '<th class="num">spent</th>' in tables[0] and '<td class="num">±71.5 %</td>' in tables[0]
    assert "<td>max reached (±71.5 % after 3)</td>" in tables[0]
    assert "<td>not attained</td>" in tables[1] and '<td class="num">300 s</td>' in tables[1]
    assert html.index('<section id="headline">') < html.index('<section id="repetitions">')


def test_series_short_of_their_precision_and_unsettled_jobs_are_findings(report: Report) -> None:
    found = [(f.severity, f.config_id, f.text) for f in report.warnings if f.category == "repetitions"]
    assert found == [  # warnings first, as the report sorts its findings
        (
            "warning",
            "gp2",
            "gp2: std-seqread-1m-r1 run std-seqread-1m: steady state not attained "
            "(iops_slope:0.3% over 60 s after 300 s): the figures may still drift",
        ),
        (
            "info",
            "gp2",
            "gp2: series std-randread-4k.ebs0 spent its 3 repetitions at ±71.5 %, short of the < 2 % asked: "
            "its IOPS is less precise than asked",
        ),
    ]


def test_a_series_the_run_cut_short_is_a_warning(inputs: dict[str, Any]) -> None:
    stored = copy.deepcopy(inputs["stored"])
    (gp3,) = [c for c in stored["configs"] if c["config_id"] == "gp3"]
    gp3["state"]["collected"]["series"] = [
        fx.adaptive_series("std-randread-4k.ebs0", [3010.0, 2400.0], bounds=(3, 6))
    ]
    gp3["state"]["collected"]["steady_state"] = []
    report = build_report(**{**inputs, "stored": stored})
    (cut,) = [f for f in report.warnings if f.config_id == "gp3" and f.category == "repetitions"]
    assert cut.severity == "warning"
    assert cut.text.startswith(
        "gp3: series std-randread-4k.ebs0 is undecided after 2 of 3..6 repetitions: "
        "the run ended first (running ("
    )
    assert "undecided: the run ended first" in render_markdown(report)


def test_an_unreadable_entry_is_a_note_and_the_others_still_show(inputs: dict[str, Any]) -> None:
    stored = copy.deepcopy(inputs["stored"])
    (gp2,) = [c for c in stored["configs"] if c["config_id"] == "gp2"]
    gp2["state"]["collected"]["series"].append({"series": "broken.ebs0", "spent": "many"})
    report = build_report(**{**inputs, "stored": stored})
    assert "gp2: series[1]: workload: Field required" in report.notes
    assert [s.series for s in report.repetition_stops[0].series] == ["std-randread-4k.ebs0"]


@pytest.mark.parametrize(
    ("keep", "title"),
    [("series", "Adaptive repetitions"), ("steady_state", "Steady state")],
)
def test_the_title_names_what_the_run_recorded(inputs: dict[str, Any], keep: str, title: str) -> None:
    stored = copy.deepcopy(inputs["stored"])
    for config in stored["configs"]:
        collected = config["state"]["collected"]
        if collected is not None:
            collected.pop("steady_state" if keep == "series" else "series", None)
    report = build_report(**{**inputs, "stored": stored})
    html, markdown = render_html(report), render_markdown(report)
    assert f'<a href="#repetitions">{title}</a>' in html
    assert f"\n## {title}\n" in markdown
    section = _section(markdown, f"\n## {title}\n", "\n## ")
    assert section.count("| config |") == 1


def test_nothing_of_it_when_the_run_recorded_neither() -> None:
    report = build_report(**fx.full_report_inputs())
    assert report.repetition_stops == []
    assert not any(f.category == "repetitions" for f in report.warnings)
    for text in (render_html(report), render_markdown(report)):
        assert 'id="repetitions"' not in text
        assert "Adaptive repetitions" not in text and "Steady state" not in text


def test_a_run_of_adaptive_repetitions_has_a_header_that_says_its_policy() -> None:
    """The header of a run whose request asked for {min, max, ci_pct} (the demo's): built, and read
    as the policy (it failed validation as an int before, so `storagebench report` exited 1)."""
    document = copy.deepcopy(fx.REQUEST)
    document["repetitions"] = {"min": 2, "max": 4, "ci_pct": 5}
    stored = fx.stored()
    stored["run"]["request"] = document
    built = build_report(
        **{**fx.full_report_inputs(), "stored": stored, "request": fx.parse_request(document)}
    )
    assert built.header.repetitions == 4
    shown = "2-4, until the 95 % interval's half-width is under 5 % of the mean"
    assert built.header.repetitions_shown == shown
    assert shown in render_markdown(built) and shown.replace("'", "&#x27;") in render_html(built)


def test_a_fixed_count_reads_as_the_count(report: Report) -> None:
    assert report.header.repetitions == 3 and report.header.repetitions_shown == "3"

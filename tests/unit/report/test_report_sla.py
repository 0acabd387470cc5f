"""Latency-SLA searches answered in words: the report's "Limits under a latency SLA" section (model,
HTML with its chart, Markdown), from searches ``protocol.sla.search`` ran against model volumes and
stored as Collect stores them."""

from __future__ import annotations

import re
from typing import Any

import pytest
from tests.support import report_runs as fx

from storagebench.report import Report, build_report, render_html, render_markdown
from storagebench.report.model import SlaLimit
from storagebench.report.sla_searches import build_sla_limits, limit_line, probe_rows
from storagebench.report.svg import LOG_SLACK, log_ticks
from storagebench.results.records import ResultRecord, SlaSearch


@pytest.fixture(scope="module")
def report() -> Report:
    return build_report(**fx.everything_inputs())


def one(config_id: str, repetitions: int = 1) -> SlaLimit:
    limits = [x for x in build_sla_limits(fx.sla_records(repetitions)) if x.config_id == config_id]
    assert len(limits) == 1
    return limits[0]


def with_search(record: ResultRecord, sla: SlaSearch, **update: Any) -> ResultRecord:
    return record.model_copy(update={"sla": sla, **update})


# --------------------------------------------------------------------------- the answer in words


def test_a_met_sla_is_the_achieved_iops_at_the_highest_rate_met_within_the_tolerance() -> None:
    limit = one("gp3")
    (repetition,) = limit.repetitions
    search = fx.sla_search("gp3")
    answer = next(p for p in search.probes if p.probe == search.answer_probe)
    assert limit.sla == "p99 <= 1 ms" and limit.workload == fx.SLA
    assert limit.name == fx.SLA  # no request here: the id is the name
    assert repetition.met and repetition.sustained_iops == answer.iops == 1791.0
    assert limit.answer == "sustains 1,791 IOPS at p99 0.993 ms (asked 1,791 IOPS)"
    assert repetition.bracket_iops == search.bracket == [1791, 1845]
    assert repetition.bracket == (
        "between 1,791 IOPS (met) and 1,845 IOPS (missed), as rates asked of fio: 2.9 % apart"
    )
    assert repetition.stop == "within-tolerance"
    assert (
        repetition.stopped == "tolerance reached: the bracket narrowed to 2.9 % (tolerance 5.0 %) in 9 probes"
    )
    # the model volume's knee: p99 = 400 us / (1 - rate / 3,000) reaches 1 ms at 1,800 IOPS
    assert 1800 * 0.95 <= repetition.sustained_iops <= 1800


def test_not_met_even_at_the_lowest_rate_says_so_with_the_latency_it_measured() -> None:
    limit = one("gp2")
    (repetition,) = limit.repetitions
    assert not repetition.met and repetition.sustained_iops is None and repetition.answer_probe is None
    assert limit.answer == "SLA not met even at the lowest rate, 100 IOPS: p99 was 1.24 ms"
    assert repetition.bracket == (
        "below 100 IOPS, the lowest rate probed (lower min_iops or relax the SLA to find it)"
    )
    assert repetition.stopped == "the lowest rate missed the SLA, so no higher rate was tried (1 probe)"


def test_a_lowest_rate_fio_could_not_deliver_names_the_delivery_too() -> None:
    (record,) = [r for r in fx.sla_records(1) if r.config_id == "gp2"]
    assert record.sla is not None
    lowest = record.sla.probes[0].model_copy(update={"iops": 60.0, "delivered": 0.6, "latency_us": 800.0})
    sla = record.sla.model_copy(update={"probes": [lowest]})
    (limit,) = build_sla_limits([with_search(record, sla)])
    assert limit.answer == (
        "SLA not met even at the lowest rate, 100 IOPS: p99 was 0.800 ms and fio delivered 60% of the "
        "rate (needs 95%)"
    )


def test_a_search_out_of_probes_says_the_bracket_is_still_wide() -> None:
    limit = one("io1")
    (repetition,) = limit.repetitions
    assert repetition.stop == "max-probes" and len(repetition.probes) == 4
    assert limit.answer == "sustains 2,156 IOPS at p99 0.651 ms (asked 2,156 IOPS)"
    assert repetition.bracket.startswith("between 2,156 IOPS (met) and 6,000 IOPS (missed)")
    assert repetition.stopped == (
        "max probes reached: 4 probes of at most 4, the bracket still 64.1 % wide (tolerance 5.0 %)"
    )


def test_a_highest_rate_that_met_the_sla_is_a_lower_bound() -> None:
    fx.SLA_VOLUMES["fast"] = (100_000.0, 200.0, 4500, 12)
    try:
        search = fx.sla_search("fast")
    finally:
        del fx.SLA_VOLUMES["fast"]
    (base,) = [r for r in fx.sla_records(1) if r.config_id == "gp3"]
    (limit,) = build_sla_limits([with_search(base, search, config_id="fast")])
    (repetition,) = limit.repetitions
    assert search.stopped == "highest-rate-met" and repetition.above_range
    assert limit.answer == (
        "sustains at least 4,500 IOPS at p99 0.209 ms: even the highest rate probed, 4,500 IOPS, met the SLA"
    )
    assert repetition.bracket == "above 4,500 IOPS, the highest rate probed (raise max_iops to find it)"


# --------------------------------------------------------------------------- repetitions, directions


def test_repetitions_are_answered_as_their_range_each_keeping_its_own_search() -> None:
    limit = one("gp3", repetitions=2)
    assert [r.repetition for r in limit.repetitions] == [1, 2]
    assert [r.sustained_iops for r in limit.repetitions] == [1791.0, 1738.0]
    assert limit.answer == "sustains 1,738–1,791 IOPS at p99 0.993 ms over 2 repetitions"
    head, rows = probe_rows(limit)
    assert head == ["repetition", "probe", "rate asked, IOPS", "achieved IOPS", "delivered", "p99 ms", "SLA"]
    assert len(rows) == sum(len(r.probes) for r in limit.repetitions) == 18
    answers = [row for row in rows if row[-1].endswith("(the answer)")]
    assert [(row[0], row[2]) for row in answers] == [("1", "1,791"), ("2", "1,738")]
    missed = next(row for row in rows if row[:2] == ["1", "2"])
    assert missed == [
        "1",
        "2",
        "4,500",
        "3,000",
        "67 %",
        "40.0",
        "missed: p99 40 ms > 1 ms; delivered 67% of the rate (needs 95%)",
    ]


def test_repetitions_that_disagree_on_meeting_the_sla_say_which() -> None:
    met = [r for r in fx.sla_records(2) if r.config_id == "gp3"]
    (missed,) = [r for r in fx.sla_records(1) if r.config_id == "gp2"]
    assert missed.sla is not None
    third = with_search(met[0], missed.sla, repetition=3, iops=None)
    (limit,) = build_sla_limits([*met, third])
    assert limit.answer == (
        "SLA met in 2 of 3 repetitions: sustains 1,738–1,791 IOPS at p99 0.993 ms; not met even at "
        "the lowest rate, 100 IOPS, in repetition 3"
    )


def test_each_direction_of_a_search_carries_it_and_it_is_counted_once() -> None:
    (read,) = [r for r in fx.sla_records(1) if r.config_id == "gp3"]
    write = read.model_copy(update={"direction": "write"})
    (limit,) = build_sla_limits([read, write])
    assert len(limit.repetitions) == 1


def test_no_search_no_limits_and_the_order_follows_workloads_then_configs() -> None:
    assert build_sla_limits(fx.records(repetitions=1)) == []
    limits = build_sla_limits(fx.sla_records(1), config_ids=["io1", "gp3", "gp2"], names={fx.SLA: "SLA read"})
    assert [x.config_id for x in limits] == ["io1", "gp3", "gp2"]
    assert {x.name for x in limits} == {"SLA read"}


def test_the_cli_line_has_the_answer_the_bracket_and_why_it_stopped() -> None:
    assert limit_line(one("gp3")) == (
        "gp3 sla-randread-4k, p99 <= 1 ms: sustains 1,791 IOPS at p99 0.993 ms (asked 1,791 IOPS); the "
        "limit lies between 1,791 IOPS (met) and 1,845 IOPS (missed), as rates asked of fio: 2.9 % apart; "
        "tolerance reached: the bracket narrowed to 2.9 % (tolerance 5.0 %) in 9 probes"
    )
    assert limit_line(one("io1", repetitions=2)).endswith(
        "over 2 repetitions; the limit per repetition, in IOPS asked of fio: 2,156–6,000 (max probes "
        "reached), 2,156–6,000 (max probes reached)"
    )


# --------------------------------------------------------------------------- the report


def test_the_report_has_one_limit_per_config_in_request_order(report: Report) -> None:
    assert [(x.config_id, x.workload) for x in report.sla_limits] == [
        ("gp2", fx.SLA),
        ("gp3", fx.SLA),
        ("io1", fx.SLA),
    ]
    assert report.sla_limits[0].name == "4k random read: IOPS under a latency SLA"
    assert all(len(x.repetitions) == 2 for x in report.sla_limits)


def test_the_section_appears_only_when_the_run_has_searches(report: Report) -> None:
    without = build_report(**fx.full_report_inputs())
    assert without.sla_limits == []
    for text in (render_html(without), render_markdown(without)):
        assert "Limits under a latency SLA" not in text and 'id="sla"' not in text
    markdown = render_markdown(report)
    assert markdown.count("## Limits under a latency SLA") == 1
    section = markdown.split("## Limits under a latency SLA")[1].split("\n## ")[0]
    assert (
        "**gp3**, 4k random read: IOPS under a latency SLA, target `p99 <= 1 ms`: sustains 1,738–1,791 "
        "IOPS at p99 0.993 ms over 2 repetitions (emulated)." in section
    )
    assert "SLA not met even at the lowest rate, 100 IOPS, in any of the 2 repetitions" in section
    assert "- repetition 2: stopped: max probes reached: 4 probes of at most 4" in section
    assert "| 1 | 9 | 1,791 | 1,791 | 100 % | 0.993 | met (the answer) |" in section
    assert "p99 40 ms &gt; 1 ms" in section  # escaped like every text from the data


def test_the_html_section_answers_and_draws_the_probes_against_the_sla_line(report: Report) -> None:
    html = render_html(report)
    section = html.split('<section id="sla">')[1].split("</section>")[0]
    assert '<a href="#sla">Limits under a latency SLA</a>' in html
    assert section.count('data-chart="sla-search"') == 3
    assert section.count('class="sla-line"') == 3
    for svg in re.findall(r"<svg.*?</svg>", section):
        assert re.search(r'class="axis axis-x">.*?class="axis-title">achieved IOPS', svg)
        assert re.search(r'class="axis axis-y">.*?class="axis-title"[^>]*>p99 latency, ms', svg)
    assert section.count('class="xy-point missed"') == sum(
        1 for x in report.sla_limits for r in x.repetitions for p in r.probes if not p.met
    )
    assert (
        '<div class="sla-limit met"><p class="answer"><b>gp3</b>, target <code>p99 &lt;= 1 ms</code>: '
        "sustains 1,738–1,791 IOPS at p99 0.993 ms over 2 repetitions (emulated).</p>" in section
    )
    assert '<div class="sla-limit unmet"><p class="answer"><b>gp2</b>' in section
    assert "repetition 1: stopped: tolerance reached" in section
    # the probes span 100 to 4,500 IOPS and 0.4 to 40 ms: both axes logarithmic, and said so
    assert "achieved IOPS (log scale)" in section and "p99 latency, ms (log scale)" in section


def test_one_repetition_marks_its_answer_on_the_chart() -> None:
    inputs = fx.everything_inputs()
    stored = inputs["stored"]
    stored["results"] = [
        item
        for item in stored["results"]
        if not (item["record"]["workload"] == fx.SLA and item["record"]["repetition"] == 2)
    ]
    html = render_html(build_report(**inputs))
    section = html.split('<section id="sla">')[1].split("</section>")[0]
    answers = re.findall(r'<circle class="answer"[^>]*><title>([^<]*)</title>', section)
    assert answers == ["1,791 IOPS", "2,156 IOPS"]  # gp3 and io1; gp2 has no answer


def test_a_log_axis_does_not_open_a_decade_for_a_hair_past_a_power_of_ten() -> None:
    # a real search: the lowest probe achieved 99.967 IOPS, an overloaded one 100.1 ms
    assert log_ticks(99.967, 2999.0, slack=LOG_SLACK) == [100.0, 1000.0, 10000.0]
    assert log_ticks(0.194, 100.139, slack=LOG_SLACK) == pytest.approx([0.1, 1.0, 10.0, 100.0])
    assert log_ticks(99.967, 2999.0) == [10.0, 100.0, 1000.0, 10000.0]  # without slack, as before

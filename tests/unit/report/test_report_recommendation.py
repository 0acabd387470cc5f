"""The report opens with the recommendation when the request has requirements (HTML and Markdown)."""

from __future__ import annotations

import copy
from typing import Any

from tests.support import report_runs as fx

from storagebench.report import Report, build_report, render_html, render_markdown
from storagebench.request import parse_request

REQUIREMENTS = ["std-randread-4k:iops>=30000", "std-randread-4k:read:p95_ms<5"]


def report_with(requirements: list[str]) -> Report:
    inputs: dict[str, Any] = fx.full_report_inputs()
    document = copy.deepcopy(fx.REQUEST)
    document["requirements"] = requirements
    inputs["request"] = parse_request(document)
    return build_report(**inputs)


def test_the_requests_requirements_are_judged_at_the_comparisons_costs() -> None:
    answer = report_with(REQUIREMENTS).recommendation
    assert answer is not None and answer.requirements == REQUIREMENTS
    assert answer.recommended is not None and answer.recommended.config_id == "gp3"
    compared = {c["config_id"]: c["monthly_usd"] for c in fx.comparison()["configs"]}
    assert answer.recommended.monthly_usd == compared["gp3"]
    assert [v.config_id for v in answer.runners_up] == ["io1"]
    failed = {v.config_id: v for v in answer.failed}
    assert set(failed) == {"gp2", "st1"}
    assert failed["st1"].checks[0].reason == "no result for workload std-randread-4k"
    assert "not >= 30,000" in failed["gp2"].checks[0].reason
    assert answer.emulated  # the fixture's records carry emulated:<config>:100GiB


def test_the_html_opens_with_the_recommendation_emulation_first() -> None:
    html = render_html(report_with(REQUIREMENTS))
    section = html.index('<section id="recommendation"')
    assert section < html.index('<div class="summary">') < html.index('<section id="comparison">')
    body = html[section : html.index("</section>", section)]
    assert body.index('<span class="sev">emulated</span>') < body.index('<p class="answer">')
    assert "gp3 at $" in body and "is the cheapest config meeting all 2 requirements" in body
    assert "<code>std-randread-4k:read:p95_ms&lt;5</code>" in body
    assert "no result for workload std-randread-4k" in body


def test_the_markdown_opens_with_the_recommendation() -> None:
    text = render_markdown(report_with(REQUIREMENTS))
    assert text.index("## Recommendation") < text.index("## Configs against the baseline")
    section = text[text.index("## Recommendation") : text.index("## Configs against the baseline")]
    assert "> **Emulated**:" in section
    assert "| **gp3** |" in section and "cheapest" in section
    assert "`std-randread-4k:iops>=30000`" in section


def test_none_meeting_is_said_at_the_top_too() -> None:
    report = report_with(["std-randread-4k:iops>=100000"])
    assert report.recommendation is not None and report.recommendation.recommended is None
    html = render_html(report)
    assert (
        'class="recommendation unmet"' in html and "no config meets std-randread-4k:iops&gt;=100000" in html
    )


def test_a_request_without_requirements_has_no_recommendation_section() -> None:
    report = build_report(**fx.full_report_inputs())
    assert report.recommendation is None
    assert 'id="recommendation"' not in render_html(report)
    assert "## Recommendation" not in render_markdown(report)

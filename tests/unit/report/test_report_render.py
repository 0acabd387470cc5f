"""The HTML is self-contained and accessible, and a large run renders fast and stays small."""

from __future__ import annotations

import re
from html.parser import HTMLParser

import pytest
from tests.support import report_runs as fx

from storagebench.report import Report, build_report, render_csv, render_html, render_markdown
from storagebench.report.fmt import like, num, pct
from storagebench.report.svg import nice_ticks


@pytest.fixture(scope="module")
def report() -> Report:
    return build_report(**fx.full_report_inputs())


class _Elements(HTMLParser):
    """Every start tag with its attributes, and which tags sit inside an <svg>."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.svgs: list[list[str]] = []
        self._open: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))
        if tag == "svg":
            self.svgs.append([])
        elif self.svgs and "svg" in self._open:
            self.svgs[-1].append(tag)
        self._open.append(tag)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))
        if self.svgs and "svg" in self._open:
            self.svgs[-1].append(tag)

    def handle_endtag(self, tag: str) -> None:
        while self._open:
            if self._open.pop() == tag:
                break


def parse(html: str) -> _Elements:
    parser = _Elements()
    parser.feed(html)
    return parser


def test_the_html_fetches_nothing_and_runs_nothing(report: Report) -> None:
    html = render_html(report)
    elements = parse(html)
    names = {tag for tag, _ in elements.tags}
    assert not names & {"script", "img", "link", "iframe", "object", "embed", "image", "use", "foreignobject"}
    for _, attrs in elements.tags:
        for name, value in attrs.items():
            assert not name.startswith("on"), name
            if name in ("src", "href", "xlink:href"):
                assert value is not None and value.startswith("#"), (name, value)
    # the only URL is the SVG namespace (an identifier, never fetched)
    assert set(re.findall(r"https?://[^\"'\s<>)]+", html)) == {"http://www.w3.org/2000/svg"}
    assert re.findall(r"url\(([^)]*)\)", html) and all(
        u.startswith("#") for u in re.findall(r"url\(([^)]*)\)", html)
    )
    assert "@import" not in html and "@font-face" not in html
    csp = next(
        a for t, a in elements.tags if t == "meta" and a.get("http-equiv") == "Content-Security-Policy"
    )
    assert csp["content"] == "default-src 'none'; style-src 'unsafe-inline'"


def test_every_chart_is_labelled_for_screen_readers(report: Report) -> None:
    html = render_html(report)
    elements = parse(html)
    svgs = [a for t, a in elements.tags if t == "svg"]
    # per workload a bar chart and a scatter; per config and workload a histogram and a time series
    assert (len(report.bars), len(report.scatters), len(report.histograms), len(report.series)) == (
        4,
        4,
        12,
        12,
    )
    assert len(svgs) == 32
    ids = [a["id"] for a in svgs]
    assert len(set(ids)) == len(ids)
    for attrs, inner in zip(svgs, elements.svgs, strict=True):
        assert attrs["role"] == "img"
        assert attrs["aria-labelledby"] == f"{attrs['id']}-title {attrs['id']}-desc"
        assert inner[:2] == ["title", "desc"]
        assert "text" in inner  # axis labels
    for chart_id in ids:
        desc = re.search(rf'<desc id="{chart_id}-desc">([^<]+)</desc>', html)
        assert desc is not None and len(desc.group(1)) > 20


def test_axes_carry_units(report: Report) -> None:
    html = render_html(report)
    titles = re.findall(r'class="axis-title"[^>]*>([^<]+)<', html)
    assert "IOPS (higher is better)" in titles
    assert "throughput, MiB/s (higher is better)" in titles
    assert "p95 latency, ms (lower is better)" in titles
    assert "latency (log scale)" in titles and "share of I/O" in titles
    assert "monthly cost, USD" in titles and "time into the phase" in titles


def test_number_formats() -> None:
    assert [num(v) for v in (0, 0.012345, 0.1, 1.23456, 12.345, 123.45, 999.4, 999.96, 12345.6, -2.5)] == [
        "0",
        "0.0123",
        "0.100",
        "1.23",
        "12.3",
        "123",
        "999",
        "1,000",
        "12,346",
        "-2.50",
    ]
    assert [pct(v) for v in (12.4, -0.44, 0.04, -150.0, None)] == ["+12 %", "-0.4 %", "0 %", "-150 %", "-"]
    assert like(0.0825, "1.02") == "0.08" and like(71.3, "884") == "71" and like(0.001, "1.02") == "0.00100"
    assert nice_ticks(0, 51638) == [0, 20000, 40000, 60000]
    assert nice_ticks(0, 1.02) == [0, 0.25, 0.5, 0.75, 1.0, 1.25]


# --------------------------------------------------------------------------- a large run


def test_20_configs_by_10_workloads_render_and_stay_small() -> None:
    # How fast is measured by `make bench-report`, not here: timings do not belong in tests.
    report = build_report(**fx.large_inputs())
    html, markdown, table = render_html(report), render_markdown(report), render_csv(report)
    assert len(report.configs) == 20 and len(report.workloads) == 10
    assert len(report.series) == 200 and len(report.bars) == 10
    assert len(html.encode()) < 4_000_000, len(html) / 1e6
    assert len(markdown) < 1_000_000 and len(table) < 2_000_000

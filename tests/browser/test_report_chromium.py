"""The HTML report in a real browser: headless Chromium draws every chart, fetches nothing, logs no
error, and prints; at 1400 px (a desktop) and 412 px (a phone) the page never scrolls sideways
(wide tables scroll inside their own box) and every chart names both its axes. Full-page
screenshots land in bench-results/report-screenshot.png, report-1400.png and report-412.png (the
page itself in bench-results/report-sample.html).

The report is the unit tier's realistic run with a queue-depth sweep, latency-SLA searches and eleven
earlier runs of its suite, so the trend, latency-vs-load and SLA-search charts are drawn too.

Needs the Debian packages ``chromium`` and ``chromium-driver`` (scripts/ensure-system-deps.sh
installs them) and the ``selenium`` package of the dev extra; skipped, saying which is missing,
when they are not there.
"""

from __future__ import annotations

import shutil
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from tests.support import report_runs

from storagebench.report import Report, build_report, render_html

pytestmark = pytest.mark.browser

REPO = Path(__file__).resolve().parents[2]
SCREENSHOT = REPO / "bench-results" / "report-screenshot.png"
WIDTHS = (1400, 412)
SAMPLE = REPO / "bench-results" / "report-sample.html"  # the page the screenshot shows, to open by hand
FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking")


def _binaries() -> tuple[str, str]:
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    driver = shutil.which("chromedriver")
    missing = [
        what
        for what, found in (
            ("chromium (apt-get install chromium)", browser),
            ("chromedriver (apt-get install chromium-driver)", driver),
        )
        if not found
    ]
    if missing:
        pytest.skip(
            f"{' and '.join(missing)} not installed; scripts/ensure-system-deps.sh installs them as root"
        )
    assert browser is not None and driver is not None
    return browser, driver


@pytest.fixture(scope="module")
def report() -> Report:
    return build_report(**report_runs.everything_inputs())


@pytest.fixture(scope="module")
def browser(report: Report, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    browser_path, driver_path = _binaries()
    webdriver = pytest.importorskip(
        "selenium.webdriver", reason="selenium is not installed (pip install -e '.[dev]')"
    )
    from selenium.webdriver.chrome.options import Options
    from selenium.webdriver.chrome.service import Service

    page = tmp_path_factory.mktemp("report") / "report.html"
    page.write_text(render_html(report), encoding="utf-8")
    SAMPLE.parent.mkdir(parents=True, exist_ok=True)
    SAMPLE.write_text(page.read_text(encoding="utf-8"), encoding="utf-8")
    options = Options()
    options.binary_location = browser_path
    for flag in (*FLAGS, "--window-size=1280,1000", "--hide-scrollbars"):
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    started = time.perf_counter()
    driver = webdriver.Chrome(options=options, service=Service(driver_path))
    try:
        driver.get(page.as_uri())
        driver.timings = {"start_and_load_s": time.perf_counter() - started}
        yield driver
    finally:
        driver.quit()


def js(driver: Any, script: str) -> Any:
    return driver.execute_script(script)


def test_every_chart_is_drawn_with_its_marks(browser: Any, report: Report) -> None:
    boxes = js(
        browser,
        "return [...document.querySelectorAll('svg.chart')].map(s => {"
        " const r = s.getBoundingClientRect(); return [s.dataset.chart, r.width, r.height]; });",
    )
    kinds = [kind for kind, _, _ in boxes]
    assert kinds.count("bars") == len(report.bars) == 6
    assert kinds.count("histogram") == len(report.histograms) == 12
    assert kinds.count("timeseries") == len(report.series) == 12
    assert kinds.count("scatter") == len(report.scatters) == 6
    assert kinds.count("trend") == sum(1 for t in report.trends if t.has_history) == 12
    assert kinds.count("curve-iops") == kinds.count("curve-latency") == len(report.curves) == 3
    assert kinds.count("sla-search") == len(report.sla_limits) == 3
    assert all(width > 200 and height > 100 for _, width, height in boxes), boxes

    def count(selector: str) -> int:
        return int(js(browser, f"return document.querySelectorAll({selector!r}).length;"))

    assert count("svg.chart rect.bar") == sum(len(c.bars) for c in report.bars) == 17  # gp2 missed the SLA
    assert count("svg.chart rect.bar.baseline") == 6
    assert count("svg.chart path.ci") == sum(1 for c in report.bars for b in c.bars if b.value.n > 1) == 17
    assert count("svg.chart path.hist") == len(report.histograms)
    assert count("svg.chart path.series-line") == sum(len(c.lines) for c in report.series) == 36
    assert count("svg.chart line.knee") == 1
    assert count("svg.chart .point") == sum(len(s.points) for s in report.scatters) == 17
    assert count("svg.chart .point.frontier") == sum(
        1 for s in report.scatters for p in s.points if p.on_frontier
    )
    assert count("svg.chart path.frontier-line") == 6
    # a trend line each; IOPS and p50/p95/p99 of each curve; a line per repetition of each SLA search
    assert count("svg.chart path.xy-line") == 12 + 3 * (1 + 3) + 2 * 2  # gp2 missed at its 1st probe
    probes = [p for limit in report.sla_limits for r in limit.repetitions for p in r.probes]
    assert count("svg.chart .sla-line") == 3
    assert count("svg.chart circle.xy-point.missed") == sum(1 for p in probes if not p.met) == 15
    assert count("svg.chart line.change") == sum(len(t.changes) for t in report.trends) == 3
    assert count("svg.chart line.load-knee") == 2 * sum(1 for c in report.curves if c.knee is not None) == 6
    assert count("svg.chart rect.band") == count("svg.chart circle.current") == 12
    # every mark has a real size on the page
    empty = js(
        browser,
        "return [...document.querySelectorAll('svg.chart .bar, svg.chart .hist, svg.chart .series-line,"
        " svg.chart .point, svg.chart .knee, svg.chart .xy-line, svg.chart .xy-point, svg.chart .change,"
        " svg.chart .load-knee, svg.chart .sla-line')].filter(e => { const b = e.getBBox();"
        " return !(b.width > 0 || b.height > 0); }).length;",
    )
    assert empty == 0


def test_bar_lengths_follow_the_numbers(browser: Any, report: Report) -> None:
    chart = report.bars[0]
    widths = js(
        browser,
        "return [...document.querySelectorAll('svg.chart')[0].querySelectorAll('rect.bar')]"
        ".map(r => [r.dataset.config, r.getBBox().width]);",
    )
    drawn = dict(widths)
    values = {b.config_id: b.value.mean for b in chart.bars}
    ratio = drawn["io1"] / drawn["gp3"]
    assert ratio == pytest.approx(values["io1"] / values["gp3"], rel=0.01)


def test_text_is_visible(browser: Any, report: Report) -> None:
    assert browser.find_element("css selector", "h1").text.startswith("nightly-ebs")
    hidden = js(
        browser,
        "return [...document.querySelectorAll('svg.chart text')].filter(t => {"
        " const s = getComputedStyle(t); const b = t.getBBox();"
        " return s.visibility !== 'visible' || s.display === 'none' || s.opacity === '0' || b.width === 0; })"
        ".map(t => t.textContent);",
    )
    assert hidden == []
    texts = js(browser, "return document.querySelectorAll('svg.chart text').length;")
    assert texts > 200
    table = browser.find_element("css selector", "table.compare")
    assert table.is_displayed() and "22,721" in table.text and "InsufficientInstanceCapacity" in table.text
    title = js(browser, "return document.querySelector('svg.chart title').textContent;")
    assert title == f"{report.bars[0].name}: IOPS by config"


def test_nothing_was_fetched_and_nothing_went_wrong(browser: Any) -> None:
    assert js(browser, "return performance.getEntriesByType('resource').length;") == 0
    navigation = js(browser, "return performance.getEntriesByType('navigation').map(e => e.name);")
    assert len(navigation) == 1 and navigation[0].startswith("file://")
    errors = [entry for entry in browser.get_log("browser") if entry["level"] in ("SEVERE", "WARNING")]
    assert errors == []


def test_it_prints_and_the_screenshot_is_saved(browser: Any) -> None:
    height = js(browser, "return document.documentElement.scrollHeight;")
    browser.set_window_size(1280, min(int(height) + 40, 16_000))
    SCREENSHOT.parent.mkdir(parents=True, exist_ok=True)
    assert browser.save_screenshot(str(SCREENSHOT))
    assert SCREENSHOT.stat().st_size > 100_000
    browser.execute_cdp_cmd("Emulation.setEmulatedMedia", {"media": "print"})
    try:
        assert js(browser, "return getComputedStyle(document.querySelector('nav.toc')).display;") == "none"
        sizes = js(
            browser,
            "return [...document.querySelectorAll('svg.chart')].map(s => s.getBoundingClientRect().width);",
        )
        assert sizes and min(sizes) > 200
    finally:
        browser.execute_cdp_cmd("Emulation.setEmulatedMedia", {"media": ""})
    print(f"chromium: started and loaded the report in {browser.timings['start_and_load_s']:.2f} s")


def _at_width(driver: Any, width: int, height: int) -> None:
    """The page laid out for a viewport ``width`` px wide (a phone's at 412: mobile emulation)."""
    driver.execute_cdp_cmd(
        "Emulation.setDeviceMetricsOverride",
        {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": width < 600},
    )


@pytest.mark.parametrize("width", WIDTHS)
def test_no_sideways_scroll_every_chart_names_its_axes_and_a_screenshot(
    browser: Any, report: Report, width: int
) -> None:
    try:
        _at_width(browser, width, 1000)
        page = js(browser, "return [document.documentElement.scrollWidth, window.innerWidth];")
        assert page[1] == width
        assert page[0] <= page[1], f"the page scrolls sideways at {width} px: {page[0]} px wide"
        wider = js(
            browser,
            "return [...document.querySelectorAll('main *')].filter(e => !e.closest('.scroll'))"
            ".filter(e => e.getBoundingClientRect().right > window.innerWidth + 0.5)"
            ".map(e => e.tagName + '.' + e.className.baseVal + e.className).slice(0, 5);",
        )
        assert wider == [], f"wider than the {width} px viewport outside a scroll box: {wider}"
        charts = js(
            browser,
            "return [...document.querySelectorAll('svg.chart')].map(s => [s.id, s.dataset.chart,"
            " (s.querySelector('.axis-x .axis-title') || {}).textContent || '',"
            " (s.querySelector('.axis-y .axis-title') || {}).textContent || '',"
            " s.getBoundingClientRect().right]);",
        )
        drawn = [
            report.bars,
            report.histograms,
            report.series,
            report.scatters,
            report.curves,
            report.curves,
            report.sla_limits,
        ]
        assert len(charts) == sum(map(len, drawn)) + sum(1 for t in report.trends if t.has_history) == 57
        untitled = [
            (cid, kind)
            for cid, kind, x_title, y_title, _ in charts
            if not (x_title.strip() and y_title.strip())
        ]
        assert untitled == [], f"charts without an x and a y axis title: {untitled}"
        assert max(right for *_, right in charts) <= width
        height = min(int(js(browser, "return document.documentElement.scrollHeight;")), 16_000)
        _at_width(browser, width, height)
        shot = REPO / "bench-results" / f"report-{width}.png"
        shot.parent.mkdir(parents=True, exist_ok=True)
        assert browser.save_screenshot(str(shot))
        assert shot.stat().st_size > 100_000
    finally:
        browser.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})

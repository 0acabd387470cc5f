"""The report as one self-contained HTML file: opens offline, prints cleanly, runs no script.

Everything is inline (CSS in ``<style>``, charts as SVG drawn by ``report.svg``); a Content
Security Policy forbids the page any fetch or script, so a report mailed around cannot phone home
and text from the data (config ids, errors, commands) cannot run even if it slipped past escaping.
Every piece of text from the data goes through ``html.escape``.

The tables are ``report.html_tables``, the figures ``report.html_charts``; this module lays out
the page (style, header, summary, findings, recommendation, notes).
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import count

from storagebench.costs.recommend import ConfigVerdict
from storagebench.report.findings import caveats, emulated_configs
from storagebench.report.fmt import DASH, INTERVAL_NOTE, metric_value, pct, seconds, usd, verdict_counts
from storagebench.report.html_charts import bars_html, latency_html, scatters_html, series_html
from storagebench.report.html_history import curves_html, trends_html
from storagebench.report.html_repetitions import repetitions_html, repetitions_title
from storagebench.report.html_sla import sla_limits_html
from storagebench.report.html_surfaces import surfaces_html
from storagebench.report.html_tables import PARTLY_UNPRICED, comparison_table, status_class
from storagebench.report.model import Finding, Report
from storagebench.report.svg_kit import esc as _e

__all__ = ["render_html"]

CSS = """
:root { --ink:#1f2328; --muted:#57606a; --rule:#d0d7de; --soft:#f6f8fa; --accent:#0072B2;
  --error:#a40e26; --warn:#7d4e00; --good:#116329; }
* { box-sizing: border-box; }
html { -webkit-text-size-adjust: 100%; }
body { margin: 0; color: var(--ink); background: #fff;
  font: 14px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif;
  }
main { max-width: 1200px; margin: 0 auto; padding: 28px 32px 64px; }
h1 { font-size: 26px; line-height: 1.2; margin: 0; }
h2 { font-size: 19px; margin: 44px 0 12px; padding-bottom: 6px;
  border-bottom: 1px solid var(--rule); }
h3 { font-size: 15px; margin: 28px 0 8px; }
p { margin: 6px 0 10px; max-width: 80ch; }
small, .muted { color: var(--muted); font-size: 12px; }
code { font: 12px/1.4 ui-monospace, SFMono-Regular, Menlo, Consolas, monospace;
  background: var(--soft);
  padding: 1px 4px; border-radius: 4px; overflow-wrap: anywhere; }
.eyebrow { text-transform: uppercase; letter-spacing: .06em; font-size: 11px; color: var(--muted);
  margin: 0 0 4px; }
.description { color: var(--muted); margin-top: 6px; }
dl.meta { display: grid; grid-template-columns: repeat(auto-fill, minmax(220px, 1fr));
  gap: 8px 24px;
  margin: 18px 0 0; padding: 14px 16px; background: var(--soft); border-radius: 8px; }
dl.meta div { min-width: 0; }
dl.meta dt { font-size: 11px; text-transform: uppercase; letter-spacing: .05em;
  color: var(--muted); }
dl.meta dd { margin: 0; font-variant-numeric: tabular-nums; overflow-wrap: anywhere; }
.summary { display: flex; flex-wrap: wrap; gap: 12px; margin: 18px 0 0; }
.summary a { flex: 1 1 150px; display: block; padding: 10px 14px; border: 1px solid var(--rule);
  border-radius: 8px;
  color: inherit; text-decoration: none; }
.summary b { display: block; font-size: 22px; font-variant-numeric: tabular-nums; }
.summary .has-error { border-color: var(--error); } .summary .has-error b { color: var(--error); }
.summary .has-warning { border-color: #d4a72c; } .summary .has-warning b { color: var(--warn); }
nav.toc { margin: 20px 0 0; font-size: 13px; display: flex; flex-wrap: wrap; gap: 4px 14px; }
nav.toc a { color: var(--accent); text-decoration: none; white-space: nowrap; }
.scroll { overflow-x: auto; border: 1px solid var(--rule); border-radius: 8px; }
table { border-collapse: collapse; width: 100%; font-variant-numeric: tabular-nums; }
th, td { padding: 7px 10px; border-bottom: 1px solid var(--rule); text-align: left;
  vertical-align: top; }
thead th { background: var(--soft); font-size: 12px; font-weight: 600; position: sticky; top: 0; }
tbody tr:last-child td { border-bottom: 0; }
.num { text-align: right; white-space: nowrap; }
table.compare td.config, table.compare th.config { position: sticky; left: 0; background: #fff;
  box-shadow: 1px 0 0 var(--rule); }
table.compare thead th.config { background: var(--soft); }
table.compare tr.verdict td { border-bottom: 1px solid var(--rule); padding-top: 0; font-size: 13px; }
table.compare tr.has-verdict td { border-bottom: 0; }
.verdict-text { max-width: 860px; }
.verdict-label { font-size: 11px; text-transform: uppercase; letter-spacing: .05em; color: var(--muted);
  margin-right: 6px; }
table.compare td.storage { min-width: 200px; }
tr.is-baseline td { background: #f3f8fc; }
tr.is-baseline td.config { background: #f3f8fc; }
.v { font-weight: 600; }
.pm { font-weight: 400; color: var(--muted); }
.sub { font-size: 12px; color: var(--muted); }
.better { color: var(--good); } .worse { color: var(--error); } .noise { color: var(--muted); }
.tag { display: inline-block; font-size: 11px; line-height: 1.5; padding: 0 6px;
  border-radius: 10px;
  border: 1px solid var(--rule); color: var(--muted); margin: 2px 2px 0 0; white-space: nowrap; }
.tag.baseline { border-color: #6e7781; color: var(--ink); font-weight: 600; }
.tag.flag { border-color: #d4a72c; color: var(--warn); }
.tag.regression { border-color: var(--error); color: var(--error); }
.status { font-size: 12px; font-weight: 600; }
.status-succeeded, .status-SUCCEEDED { color: var(--good); }
.status-partial, .status-PARTIAL { color: var(--warn); }
.status-failed, .status-FAILED, .status-no-results { color: var(--error); }
.badge { display: inline-block; padding: 2px 10px; border-radius: 12px; font-size: 12px;
  font-weight: 700;
  letter-spacing: .04em; border: 1px solid currentColor; vertical-align: middle; margin-left: 8px; }
.grade { display: inline-block; min-width: 22px; text-align: center; font-weight: 700;
  border-radius: 4px;
  padding: 0 5px; color: #fff; }
.grade-A { background: #116329; } .grade-B { background: #0b5fa5; }
.grade-C { background: #7d4e00; } .grade-D { background: #a40e26; }
.charts { display: grid; grid-template-columns: repeat(auto-fill, minmax(min(340px, 100%), 1fr));
  gap: 18px 22px; }
.charts.wide { grid-template-columns: repeat(auto-fill, minmax(min(530px, 100%), 1fr)); }
.charts > * { min-width: 0; }
.fig-title { font-size: 13px; font-weight: 600; margin: 0 0 4px; }
.fig-title small { font-weight: 400; }
.scroll + .charts { margin-top: 16px; }
figure { margin: 0 0 14px; break-inside: avoid; page-break-inside: avoid; }
figcaption { font-size: 12px; color: var(--muted); margin-top: 4px; max-width: 90ch; }
figcaption b { color: var(--ink); }
svg.chart { display: block; max-width: 100%; height: auto; overflow: visible; }
svg.chart text { fill: var(--ink); font-family: inherit; }
svg.chart .tick, svg.chart .legend { fill: var(--muted); }
svg.chart .axis-title { font-weight: 600; }
svg.chart .baseline-label { font-weight: 700; }
svg.chart .marker-label, svg.chart .knee-label, svg.chart .point-label { paint-order: stroke;
  stroke: #fff; stroke-width: 3px; stroke-linejoin: round; }
ul.findings { list-style: none; padding: 0; margin: 0; }
ul.findings li { padding: 8px 12px; border-left: 4px solid var(--rule); background: var(--soft);
  margin: 6px 0;
  border-radius: 0 6px 6px 0; overflow-wrap: anywhere; }
ul.findings li.error { border-left-color: var(--error); background: #fff0f0; }
ul.findings li.warning { border-left-color: #d4a72c; background: #fff8e5; }
.sev { font-weight: 700; font-size: 11px; text-transform: uppercase; letter-spacing: .05em;
  margin-right: 6px; }
li.error .sev { color: var(--error); } li.warning .sev { color: var(--warn);
  } li.info .sev { color: var(--muted); }
.cat { font-size: 11px; color: var(--muted); margin-right: 6px; }
ul.notes li { margin: 4px 0; max-width: 90ch; }
section.recommendation { margin-top: 18px; padding: 14px 16px; border: 2px solid var(--rule);
  border-radius: 8px; }
section.recommendation.met { border-color: var(--good); }
section.recommendation.unmet { border-color: var(--error); }
section.recommendation h2 { margin-top: 0; }
p.answer { font-size: 17px; font-weight: 600; margin: 6px 0 12px; overflow-wrap: anywhere; }
.met p.answer { color: var(--good); } .unmet p.answer { color: var(--error); }
.sla-limit { margin: 0 0 32px; }
.sla-limit table { min-width: 720px; }
.sla-limit .charts { margin: 8px 0 12px; }
ul.checks { list-style: none; padding: 0; margin: 0; overflow-wrap: anywhere; }
ul.checks li { margin: 2px 0; }
footer { margin-top: 48px; font-size: 12px; color: var(--muted); border-top: 1px solid var(--rule);
  padding-top: 10px; }
@media print {
  @page { margin: 14mm; }
  body { font-size: 11px; }
  main { max-width: none; padding: 0; }
  nav.toc, .summary { display: none; }
  h2 { break-after: avoid; page-break-after: avoid; }
  .scroll { overflow: visible; border: 0; }
  thead th { position: static; }
  table.compare td.config { position: static; }
  a { color: inherit; text-decoration: none; }
  tr, figure { break-inside: avoid; page-break-inside: avoid; }
}
"""

CSP = "default-src 'none'; style-src 'unsafe-inline'"
"""Nothing may be fetched and no script may run; only the inline style applies."""
_SEVERITY_LABEL = {"error": "error", "warning": "warning", "info": "note"}


def _findings(findings: Sequence[Finding]) -> str:
    if not findings:
        return "<p>Nothing to warn about.</p>"
    items = [
        f'<li class="{f.severity}"><span class="sev">{_SEVERITY_LABEL[f.severity]}</span>'
        f'<span class="cat">{_e(f.category)}</span>{_e(f.text)}</li>'
        for f in findings
    ]
    return f'<ul class="findings">{"".join(items)}</ul>'


def _regressions(report: Report) -> str:
    counts = report.regression_counts
    names = {w.id: w.name for w in report.workloads}
    if not counts:
        return "<p class=muted>No comparison with earlier runs of the suite was recorded for this run.</p>"
    text = f"<p>{_e(verdict_counts(counts))}.</p>"
    if not report.regressions:
        return text + "<p>None left its noise band.</p>"
    body = []
    for row in report.regressions:
        metric = row.metric
        band = (
            DASH
            if row.band is None
            else f"{metric_value(metric, row.band[0])} to {metric_value(metric, row.band[1])}"
        )
        cls = "worse" if row.verdict == "regression" else "better"
        body.append(
            "<tr>"
            f'<td class="{cls}"><strong>{_e(row.verdict)}</strong></td>'
            f"<td>{_e(', '.join(row.config_ids) or DASH)}<div class=sub>{_e(row.storage_option)}</div></td>"
            f"<td>{_e(names.get(row.workload, row.workload))}<div class=sub>{_e(row.measurement)}</div></td>"
            f"<td>{_e(metric.label)}, {_e(metric.unit)}</td>"
            f'<td class="num">{_e(metric_value(metric, row.value))}</td>'
            f'<td class="num">{_e(metric_value(metric, row.baseline))}</td>'
            f'<td class="num {cls}">{_e(pct(row.delta_pct))}</td>'
            f'<td class="num">{_e(band)}</td>'
            f'<td class="num">{row.history_n}</td>'
            "</tr>"
        )
    return (
        text + '<div class="scroll"><table><thead><tr><th>Verdict</th><th>Config</th><th>Workload</th>'
        "<th>Metric</th>"
        '<th class="num">This run</th><th class="num">Median before</th><th class="num">Change</th>'
        '<th class="num">Noise band</th><th class="num">Runs</th></tr></thead><tbody>'
        + "".join(body)
        + "</tbody></table></div>"
    )


def _caveats_html(report: Report) -> str:
    """What the numbers cannot mean (emulated volumes, directories): the first thing under the title."""
    items = "".join(
        f'<li class="warning"><span class="sev">caveat</span>{_e(text)}</li>' for text in caveats(report)
    )
    return f'<ul class="findings caveats" id="caveats">{items}</ul>' if items else ""


def _header(report: Report) -> str:
    h = report.header
    title = h.name or h.suite or h.run_id
    status = f'<span class="badge {status_class(h.status)}">{_e(h.status)}</span>' if h.status else ""
    price = DASH
    if h.price_source:
        price = h.price_source + (f", as of {h.price_date}" if h.price_date else "")
    ended = h.ended_at or "not finished"
    if h.duration_s is not None:
        ended += f" ({seconds(h.duration_s)})"
    items = [
        ("run", h.run_id),
        ("suite", h.suite or DASH),
        ("started", h.started_at or DASH),
        ("ended", ended),
        ("region", h.region or DASH),
        ("baseline", h.baseline or DASH),
        ("prices", price),
        ("repetitions", h.repetitions_shown or (str(h.repetitions) if h.repetitions is not None else DASH)),
        ("records", f"{h.records:,}"),
        ("run cost", usd(h.run_cost_usd) + (f" ({h.run_cost_source})" if h.run_cost_source else "")),
    ]
    meta = "".join(f"<div><dt>{_e(k)}</dt><dd>{_e(v)}</dd></div>" for k, v in items)
    description = f'<p class="description">{_e(h.description)}</p>' if h.description else ""
    return (
        f'<header><p class="eyebrow">storagebench · run report</p><h1>{_e(title)}{status}</h1>'
        f'{_caveats_html(report)}{description}<dl class="meta">{meta}</dl></header>'
    )


def _checks(verdict: ConfigVerdict) -> str:
    items = []
    for check in verdict.checks:
        mark = '<b class="better">meets</b>' if check.met else '<b class="worse">fails</b>'
        where = f" ({_e(check.measurement)})" if check.measurement else ""
        items.append(f"<li>{mark} <code>{_e(check.requirement)}</code>{where}: {_e(check.reason)}</li>")
    return f'<ul class="checks">{"".join(items)}</ul>'


def _recommendation(report: Report) -> str:
    """The answer to the request's requirements, first thing under the header (emulation first)."""
    answer = report.recommendation
    if answer is None:
        return ""
    notes = list(answer.notes)
    emulated = ""
    if answer.emulated:
        emulated = (
            '<ul class="findings"><li class="warning"><span class="sev">emulated</span>'
            f"{_e(notes.pop(0))}</li></ul>"
        )
    rows = []
    ranked = [(answer.recommended, "cheapest")] if answer.recommended is not None else []
    ranked += [(v, "also meets") for v in answer.runners_up] + [(v, "fails") for v in answer.failed]
    for verdict, role in ranked:
        assert verdict is not None
        cost = usd(verdict.monthly_usd) + (f" {PARTLY_UNPRICED}" if verdict.cost_partial else "")
        cls = "better" if role == "cheapest" else ("worse" if role == "fails" else "")
        rows.append(
            f'<tr><td><strong>{_e(verdict.config_id)}</strong></td><td class="num">{cost}</td>'
            f'<td class="{cls}">{_e(role)}</td><td>{_checks(verdict)}</td></tr>'
        )
    table = (
        '<div class="scroll"><table><thead><tr><th>Config</th><th class="num">Monthly</th><th>Result</th>'
        "<th>Requirements (judged on the 95 % bound)</th></tr></thead>"
        f"<tbody>{''.join(rows)}</tbody></table></div>"
    )
    listed = "".join(f"<li>{_e(n)}</li>" for n in notes)
    state = "met" if answer.recommended is not None else "unmet"
    return (
        f'<section id="recommendation" class="recommendation {state}"><h2>Recommendation</h2>{emulated}'
        f'<p class="answer">{_e(answer.summary)}</p>{table}'
        + (f'<ul class="notes">{listed}</ul>' if listed else "")
        + "</section>"
    )


def _summary(report: Report) -> str:
    errors = sum(1 for f in report.warnings if f.severity == "error")
    warnings = sum(1 for f in report.warnings if f.severity == "warning")
    failed = sum(1 for c in report.configs if c.status == "failed")
    flagged = sum(1 for r in report.regressions if r.verdict == "regression")
    boxes = [
        (
            "#comparison",
            f"{len(report.configs):,}",
            "configs",
            f"{failed} failed" if failed else "",
            "has-error" if failed else "",
        ),
        ("#comparison", f"{len(report.workloads):,}", "workloads", "", ""),
        ("#warnings", f"{errors:,}", "errors", "", "has-error" if errors else ""),
        ("#warnings", f"{warnings:,}", "warnings", "", "has-warning" if warnings else ""),
        (
            "#regressions",
            f"{flagged:,}",
            "regressions",
            "vs the suite's last runs",
            "has-error" if flagged else "",
        ),
    ]
    return (
        '<div class="summary">'
        + "".join(
            f'<a href="{href}" class="{cls}"><b>{_e(big)}</b>{_e(label)}'
            + (f" <small>{_e(note)}</small>" if note else "")
            + "</a>"
            for href, big, label, note, cls in boxes
        )
        + "</div>"
    )


def _notes(report: Report) -> str:
    items = [
        INTERVAL_NOTE,
        "A difference from the baseline counts only when Welch's t-test finds it significant "
        "(two-sided, p < 0.05); otherwise it is “not significant”. With a single repetition there is "
        "no test and the difference is marked “1 run”.",
        "Grades come from p95 latency of the workload's headline measurement (its worst direction): "
        "A below 2 ms, B below 6 ms, C up to 14 ms, D above (field study 4: above 14 ms is a D).",
        "Each workload is compared on one headline measurement, the same for every config: the intent's "
        "metric (IOPS, MiB/s, p95 latency or run time), on read+write totals when recorded, at the point "
        "where the baseline did best. Every other measurement is in the CSV.",
        "Monthly cost is the config running for a month (730 h) at on-demand prices; run cost is what "
        "this run's resources cost for the time they existed.",
        *report.notes,
    ]
    return '<ul class="notes">' + "".join(f"<li>{_e(item)}</li>" for item in items) + "</ul>"


def render_html(report: Report) -> str:
    """The whole report as one HTML document (UTF-8 text)."""
    ids = count(1)
    h = report.header
    sections = [
        ("comparison", "Configs against the baseline", comparison_table(report)),
        ("headline", "Headline results", bars_html(report, ids)),
        *(
            [
                (
                    "repetitions",
                    repetitions_title(report.repetition_stops),
                    repetitions_html(report.repetition_stops),
                )
            ]
            if report.repetition_stops
            else []
        ),
        *(
            [
                (
                    "sla",
                    "Limits under a latency SLA",
                    sla_limits_html(report.sla_limits, ids, emulated_configs(report)),
                )
            ]
            if report.sla_limits
            else []
        ),
        *([("surfaces", "Matrix surfaces", surfaces_html(report.surfaces))] if report.surfaces else []),
        ("latency", "Latency", latency_html(report, ids)),
        ("curves", "Latency against load", curves_html(report, ids)),
        ("timeseries", "IOPS over time", series_html(report, ids)),
        ("cost", "Cost against performance", scatters_html(report, ids)),
        ("warnings", "Warnings", _findings(report.warnings)),
        ("regressions", "Against earlier runs", _regressions(report)),
        ("trends", "Trends and change points", trends_html(report, ids)),
        ("method", "How to read this report", _notes(report)),
    ]
    toc = "".join(f'<a href="#{key}">{_e(title)}</a>' for key, title, _ in sections)
    body = "".join(
        f'<section id="{key}"><h2>{_e(title)}</h2>{content}</section>' for key, title, content in sections
    )
    page_title = f"storagebench · {h.name or h.suite or ''} · {h.run_id}"
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f'<meta http-equiv="Content-Security-Policy" content="{CSP}">'
        '<meta name="generator" content="storagebench">'
        f"<title>{_e(page_title)}</title><style>{CSS}</style></head><body><main>"
        f"{_header(report)}{_recommendation(report)}{_summary(report)}"
        f'<nav class="toc" aria-label="sections">{toc}</nav>{body}'
        f"<footer>storagebench run report · run {_e(h.run_id)} · self-contained: no script, nothing fetched. "
        "The same numbers are in the Markdown and CSV renderings.</footer></main></body></html>\n"
    )

"""The HTML report's "Limits under a latency SLA" section: each search's answer in words, where the
limit lies and why the search stopped, a chart of the percentile against achieved IOPS with the SLA
as a line, and the probe table. Every piece of text from the data goes through ``html.escape``."""

from __future__ import annotations

from collections.abc import Collection, Iterator, Sequence
from html import escape

from storagebench.report.findings import mark_emulated
from storagebench.report.fmt import num
from storagebench.report.html_history import data_table
from storagebench.report.model import SlaLimit
from storagebench.report.sla_searches import SLA_INTRO, probe_rows
from storagebench.report.svg import LOG_SLACK, Level, XYLine, log_ticks, nice_ticks, tick, xy_chart

__all__ = ["sla_limits_html"]

LOG_SPAN = 10.0
"""Axes go logarithmic (powers of ten) when the largest value is this many times the smallest:
a search's bounds are often 100 and 10,000 IOPS, and an overloaded probe's p99 100x the target."""


def _e(value: object) -> str:
    return escape(str(value), quote=True)


def _line(limit: SlaLimit, index: int) -> XYLine:
    repetition = limit.repetitions[index]
    probes = sorted(
        repetition.probes, key=lambda p: p.rate_iops
    )  # load order, so the line reads left to right
    tips = [
        f"probe {p.probe}: asked {p.rate_iops:,} IOPS, achieved {num(p.iops)} IOPS, "
        f"p{limit.percentile:g} {num(p.latency_us / 1000)} ms: " + ("met" if p.met else f"missed ({p.why})")
        for p in probes
    ]
    label = f"repetition {repetition.repetition}" if len(limit.repetitions) > 1 else "probes"
    return XYLine(
        label,
        [(p.iops, p.latency_us / 1000) for p in probes],
        tips,
        hollow=[not p.met for p in probes],
    )


def _spans(values: Sequence[float]) -> bool:
    positive = [v for v in values if v > 0]
    return len(positive) == len(values) and max(positive) >= LOG_SPAN * min(positive)


def _chart(limit: SlaLimit, chart_id: str) -> str:
    lines = [_line(limit, i) for i in range(len(limit.repetitions))]
    xs = [x for line in lines for x, _ in line.points]
    ys = [y for line in lines for _, y in line.points] + [limit.target_us / 1000]
    log_x, log_y = _spans(xs), _spans(ys)
    x_ticks = log_ticks(min(xs), max(xs), slack=LOG_SLACK) if log_x else nice_ticks(0.0, max(xs) or 1.0, 5)
    answers = [r for r in limit.repetitions if r.met and r.sustained_iops is not None]
    highlight = None
    if len(limit.repetitions) == 1 and answers:
        (answer,) = answers
        assert answer.sustained_iops is not None
        highlight = (answer.sustained_iops, answer.latency_us / 1000, f"{num(answer.sustained_iops)} IOPS")
    sla = limit.sla
    return xy_chart(
        chart_id,
        "sla-search",
        f"{limit.config_id}: p{limit.percentile:g} latency against achieved IOPS, {limit.name}",
        f"Each probe of the search ({sum(len(r.probes) for r in limit.repetitions)} in all) at the IOPS fio "
        f"achieved; the dashed line is the SLA ({sla}); rings missed it. {limit.answer}.",
        lines,
        x_ticks=x_ticks,
        x_label=tick,
        x_title="achieved IOPS" + (" (log scale)" if log_x else ""),
        y_title=f"p{limit.percentile:g} latency, ms" + (" (log scale)" if log_y else ""),
        log2_x=log_x,
        log_y=log_y,
        y_from_zero=True,
        levels=[Level(limit.target_us / 1000, f"SLA {sla}", f"the target: {sla}", "sla-line")],
        highlight=highlight,
        highlight_cls="answer",
    )


def _table(head: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    return data_table(head, rows, [h != "SLA" for h in head])


def _facts(limit: SlaLimit) -> str:
    items = []
    for repetition in limit.repetitions:
        prefix = f"repetition {repetition.repetition}: " if len(limit.repetitions) > 1 else ""
        items.append(f"<li>{_e(prefix)}the limit lies {_e(repetition.bracket)}.</li>")
        items.append(f"<li>{_e(prefix)}stopped: {_e(repetition.stopped)}.</li>")
    return f'<ul class="notes">{"".join(items)}</ul>'


def sla_limits_html(limits: Sequence[SlaLimit], ids: Iterator[int], emulated: Collection[str] = ()) -> str:
    """The section's body (the caller leaves the section out when there is no search)."""
    out = [f"<p>{_e(SLA_INTRO)}</p>"]
    by_workload: dict[str, list[SlaLimit]] = {}
    for limit in limits:
        by_workload.setdefault(limit.workload, []).append(limit)
    for group in by_workload.values():
        out.append(f"<h3>{_e(group[0].name)}</h3>")
        for limit in group:
            where = f" ({limit.measurement})" if limit.measurement else ""
            answer = mark_emulated(limit.answer, limit.config_id in emulated)
            state = "met" if all(r.met for r in limit.repetitions) else "unmet"
            head, rows = probe_rows(limit)
            chart = _chart(limit, f"chart{next(ids)}")
            out.append(
                f'<div class="sla-limit {state}"><p class="answer"><b>{_e(limit.config_id)}</b>{_e(where)}, '
                f"target <code>{_e(limit.sla)}</code>: {_e(answer)}.</p>{_facts(limit)}"
                f'<div class="charts"><figure>{chart}</figure></div>{_table(head, rows)}</div>'
            )
    return "".join(out)

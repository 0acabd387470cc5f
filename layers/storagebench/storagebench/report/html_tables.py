"""The HTML report's tables: the comparison of every config with the baseline, cell by cell
(value, interval, delta, grade), and the latency percentiles of each config.
"""

from __future__ import annotations

from collections.abc import Sequence

from storagebench.report.findings import emulated_configs, mark_emulated
from storagebench.report.fmt import (
    DASH,
    ci_text,
    delta_text,
    grade_text,
    interval_text,
    metric_title,
    metric_value,
    pct,
    repetitions_text,
    usd,
)
from storagebench.report.model import (
    Cell,
    ConfigRow,
    GradeInfo,
    LatencyRow,
    MetricInfo,
    Report,
    Value,
    WorkloadInfo,
)
from storagebench.report.svg_kit import esc as _e

PARTLY_UNPRICED = '<span class="tag flag" title="unpriced parts or missing prices">partly unpriced</span>'


def grade_html(graded: GradeInfo | None, *, rule: bool = True, emulated: bool = False) -> str:
    if graded is None:
        return ""
    text = (
        f'<span class="grade grade-{graded.letter}" title="{_e(graded.rule)} ({_e(graded.measurement)})">'
        f"{_e(grade_text(graded.letter, emulated))}</span>"
    )
    if rule:
        text += f" <small>{_e(graded.rule.removesuffix(' -> ' + graded.letter))}</small>"
    return text


def _delta_html(cell: Cell, emulated: bool = False) -> str:
    delta = cell.delta
    if delta is None:
        return ""
    cls = (
        "noise"
        if delta.noise == "overlap"
        else ("better" if delta.better else "worse" if delta.better is False else "")
    )
    arrow = "" if delta.better is None else ("▲ " if (delta.pct or 0) > 0 else "▼ ")
    text = mark_emulated(delta_text(delta), emulated and delta.better is not None)  # a claim, not noise
    return f'<span class="{cls}">{_e(arrow + text)}</span> <small>vs baseline</small>'


def _value_html(metric: MetricInfo, value: Value | None) -> str:
    if value is None:
        return f'<span class="muted">{DASH}</span>'
    interval = interval_text(metric, value)
    main = f'<span class="v">{_e(metric_value(metric, value.mean))}</span>'
    if interval is not None:
        main += f' <span class="pm">{_e(interval)}</span>'
    runs = repetitions_text(value.n)  # the interval is in brackets above; how to read it, in the notes
    return f'{main} <small>{_e(metric.unit)}</small><div class="sub">{_e(runs)}</div>'


def _cell_html(info: WorkloadInfo, cell: Cell, emulated: bool = False) -> str:
    if info.metric is None:
        return f'<td class="num muted">{DASH}</td>'
    parts = [_value_html(info.metric, cell.value)]
    if cell.delta is not None:
        parts.append(f'<div class="sub">{_delta_html(cell, emulated)}</div>')
    if cell.grade is not None:
        parts.append(f"<div>{grade_html(cell.grade, emulated=emulated)}</div>")
    tags = [f'<span class="tag flag">{_e(flag)}</span>' for flag in cell.flags]
    tags += [
        f'<span class="tag regression" title="{_e(r)}">regression</span>'
        for r in cell.regressions
        if r.startswith("regression")
    ]
    tags += [
        f'<span class="tag" title="{_e(r)}">improved</span>'
        for r in cell.regressions
        if r.startswith("improvement")
    ]
    if tags:
        parts.append(f"<div>{''.join(tags)}</div>")
    return f'<td class="num">{"".join(parts)}</td>'


def status_class(status: str) -> str:
    return "status status-" + "".join(c if c.isalnum() else "-" for c in status)


def _config_cell(row: ConfigRow) -> str:
    parts = [f"<strong>{_e(row.config_id)}</strong>"]
    if row.is_baseline:
        parts.append(' <span class="tag baseline">baseline</span>')
    parts.append(f'<div><span class="{status_class(row.status)}">{_e(row.status)}</span></div>')
    parts.append(f"<div><small>{row.records:,} record{'s' if row.records != 1 else ''}</small></div>")
    return f'<td class="config">{"".join(parts)}</td>'


def comparison_table(report: Report) -> str:
    head = ['<th class="config" scope="col">Config</th>', '<th scope="col">Storage option · instance</th>']
    head += ['<th class="num" scope="col">Monthly cost</th>', '<th class="num" scope="col">Run cost</th>']
    for info in report.workloads:
        metric = metric_title(info.metric) if info.metric is not None else "nothing measured"
        where = f" · {info.measurement}" if info.measurement else ""
        head.append(
            f'<th class="num" scope="col">{_e(info.name)}<br><small>{_e(metric)}{_e(where)}</small></th>'
        )
    rows = []
    emulated = emulated_configs(report)
    for row in report.configs:
        cells = [_config_cell(row)]
        env = "".join(f'<span class="tag">{_e(label)}</span>' for label in row.environment)
        instance = f"<div><small>{_e(row.instance_type)}</small></div>" if row.instance_type else ""
        cells.append(
            f'<td class="storage"><span title="{_e(row.storage_detail)}">{_e(row.storage_option)}</span>'
            f"{instance}{f'<div>{env}</div>' if env else ''}</td>"
        )
        monthly = f'<span class="v">{_e(usd(row.monthly_usd))}</span>'
        if row.monthly_usd is not None:
            monthly += " <small>/ month</small>"
        if not row.is_baseline and row.delta_monthly_pct is not None:
            monthly += f'<div class="sub">{_e(pct(row.delta_monthly_pct))} vs baseline</div>'
        if row.storage_only_usd is not None:
            storage = f"storage only {usd(row.storage_only_usd)}"
            if not row.is_baseline and row.delta_storage_pct is not None:
                storage += f", {pct(row.delta_storage_pct)} vs baseline"
            alone = "the targets alone: no instances, no root volumes"
            monthly += f'<div class="sub" title="{alone}">{_e(storage)}</div>'
        if row.cost_partial:
            monthly += f"<div>{PARTLY_UNPRICED}</div>"
        cells.append(f'<td class="num">{monthly}</td>')
        cells.append(f'<td class="num">{_e(usd(row.run_cost_usd))}</td>')
        cells += [
            _cell_html(info, cell, row.config_id in emulated)
            for info, cell in zip(report.workloads, row.cells, strict=True)
        ]
        verdict_text = mark_emulated(row.verdict, row.config_id in emulated and not row.is_baseline)
        verdict = f'<div class="verdict-text"><span class="verdict-label">verdict</span>{_e(verdict_text)}'
        if row.errors:
            verdict += "".join(f'<div class="sub worse">{_e(error)}</div>' for error in row.errors[:3])
        verdict += "</div>"
        base = " is-baseline" if row.is_baseline else ""
        rows.append(f'<tr class="has-verdict{base}">{"".join(cells)}</tr>')
        # the verdict on its own full-width line: readable without scrolling a wide table sideways
        span = len(head) - 1
        rows.append(
            f'<tr class="verdict{base}"><td class="config"></td><td colspan="{span}">{verdict}</td></tr>'
        )
    return (
        '<div class="scroll"><table class="compare"><thead><tr>'
        + "".join(head)
        + "</tr></thead><tbody>"
        + "".join(rows)
        + "</tbody></table></div>"
    )


def _value_cell(metric: MetricInfo, value: Value | None) -> str:
    if value is None:
        return f'<td class="num muted">{DASH}</td>'
    interval = interval_text(metric, value)
    tip = ci_text(metric, value)
    text = metric_value(metric, value.mean) + (f" {interval}" if interval is not None else "")
    return f'<td class="num" title="{_e(tip)}">{_e(text)}</td>'


_PERCENTILES = (
    ("mean_us", "mean"),
    ("p50_us", "p50"),
    ("p90_us", "p90"),
    ("p95_us", "p95"),
    ("p99_us", "p99"),
    ("p999_us", "p99.9"),
)


_LATENCY = MetricInfo(
    name="latency", label="latency", unit="ms", scale=1e-3, stored_unit="us", higher_is_better=False
)


def latency_table(rows: Sequence[LatencyRow], emulated: frozenset[str] = frozenset()) -> str:
    head = "".join(f'<th class="num" scope="col">{label}, ms</th>' for _, label in _PERCENTILES)
    body = []
    for row in rows:
        cells = [
            f"<td><strong>{_e(row.config_id)}</strong></td>",
            f"<td>{_e(row.measurement)}</td>",
            f'<td class="num">{row.n}</td>',
        ]
        cells += [_value_cell(_LATENCY, getattr(row, field)) for field, _ in _PERCENTILES]
        cells.append(f"<td>{grade_html(row.grade, rule=False, emulated=row.config_id in emulated)}</td>")
        body.append(f"<tr>{''.join(cells)}</tr>")
    return (
        '<div class="scroll"><table class="latency"><thead><tr><th scope="col">Config</th>'
        '<th scope="col">Measurement</th><th class="num" scope="col">Runs</th>'
        f'{head}<th scope="col">Grade</th></tr></thead><tbody>{"".join(body)}</tbody></table></div>'
    )

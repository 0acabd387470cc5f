"""The report as CSV: one row per config x workload x measurement x metric, for spreadsheets and joins.

Numbers are the stored units (IOPS, MiB/s, us, s) at full precision (Python's shortest repr, so a
value reads back as exactly the float the report computed); empty cells mean "none" (no interval
from one repetition, no baseline to compare with). ``storage_option`` is the stable label the
results store keys its history on (``c5.4xlarge/ebs:gp3:1000GiB:xfs``) when the result carries
one. ``target_id`` and ``group`` come last and make each row's measurement unique. Text cells that
a spreadsheet would run as a formula (starting with = + - @) are prefixed with a quote.
"""

from __future__ import annotations

import csv
import io
import math

from storagebench.report.model import METRIC_INFO, Report

__all__ = ["CSV_COLUMNS", "render_csv"]

CSV_COLUMNS = (
    "run_id",
    "config_id",
    "storage_option",
    "workload",
    "variant",
    "phase",
    "direction",
    "metric",
    "unit",
    "mean",
    "ci_low",
    "ci_high",
    "n",
    "delta_pct_vs_baseline",
    "grade",
    "monthly_usd",
    "labels",
    "target_id",
    "group",
)
_FORMULA = ("=", "+", "-", "@", "\t", "\r")


def _number(value: float | int | None) -> str:
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return ""
    return repr(value) if isinstance(value, float) else str(value)


def _text(value: str | None) -> str:
    text = "" if value is None else str(value)
    return "'" + text if text.startswith(_FORMULA) else text


def render_csv(report: Report) -> str:
    """The CSV text (header first, CRLF line ends as RFC 4180 has them)."""
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    writer.writerow(CSV_COLUMNS)
    run_id = report.header.run_id
    for row in report.measurements:
        for metric, value in row.metrics.items():
            info = METRIC_INFO.get(metric)
            writer.writerow(
                [
                    _text(run_id),
                    _text(row.config_id),
                    _text(row.storage_option),
                    _text(row.workload),
                    _text(row.variant),
                    _text(row.phase),
                    _text(row.direction),
                    metric,
                    info.stored_unit if info is not None else "",
                    _number(value.mean),
                    _number(value.ci_low),
                    _number(value.ci_high),
                    _number(value.n),
                    _number(row.delta_pct.get(metric)),
                    row.grade or "",
                    _number(row.monthly_usd),
                    _text(";".join(row.labels)),
                    _text(row.target_id),
                    _number(row.group),
                ]
            )
    return buffer.getvalue()

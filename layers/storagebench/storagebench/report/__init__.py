"""The per-run report: what a storage engineer reads every morning, in HTML, Markdown and CSV.

``build_report`` computes everything (pure: the stored run, its comparison, run cost, regression
verdicts and time series in; a ``Report`` out); ``render_html`` (one self-contained file: inline
CSS, inline SVG charts, no script, nothing fetched), ``render_markdown`` and ``render_csv`` only lay
it out, so the three carry the same numbers.
"""

from storagebench.report.build import build_report
from storagebench.report.csv_export import CSV_COLUMNS, render_csv
from storagebench.report.html import render_html
from storagebench.report.markdown import render_markdown
from storagebench.report.model import METRIC_INFO, Report

__all__ = [
    "CSV_COLUMNS",
    "METRIC_INFO",
    "Report",
    "build_report",
    "render_csv",
    "render_html",
    "render_markdown",
]

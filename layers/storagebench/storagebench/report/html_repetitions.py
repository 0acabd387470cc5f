"""The HTML report's "Adaptive repetitions" section: each table of ``report.repetitions`` (the
adaptive series, fio's steady-state verdicts) after the paragraph that says how to read it, in a box
that scrolls sideways on a narrow screen. Every piece of text from the data goes through
``html.escape``."""

from __future__ import annotations

from collections.abc import Sequence
from html import escape

from storagebench.core.series import ConfigRepetitions
from storagebench.report.html_history import data_table
from storagebench.report.repetitions import repetition_tables, repetitions_title

__all__ = ["repetitions_html", "repetitions_title"]


def repetitions_html(stops: Sequence[ConfigRepetitions]) -> str:
    """The section's body (the caller leaves the section out when no config recorded any)."""
    return "".join(
        f"<p>{escape(table.intro)}</p>{data_table(table.head, table.rows, table.numeric)}"
        for table in repetition_tables(stops)
    )

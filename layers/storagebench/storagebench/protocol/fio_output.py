"""Split fio's combined ``--output-format=json+,normal`` output (stdlib: shared with the domain)."""

from __future__ import annotations

import json
from typing import Optional, Tuple


def split_fio_output(text: str) -> Optional[Tuple[str, str]]:
    """(JSON, normal text) from fio's combined output, or None when it holds no fio JSON.

    The combined output is a preamble (job descriptions, "Starting N processes", file layout),
    the JSON document, then the normal report. The JSON is the first line-initial ``{`` that
    decodes to an object with a ``jobs`` list; the normal text keeps the preamble and the report.
    """
    decoder = json.JSONDecoder()
    position = 0
    while True:
        start = text.find("{", position)
        if start < 0:
            return None
        position = start + 1
        if start > 0 and text[start - 1] != "\n":
            continue
        try:
            document, end = decoder.raw_decode(text, start)
        except json.JSONDecodeError:
            continue
        if isinstance(document, dict) and isinstance(document.get("jobs"), list):
            return text[start:end] + "\n", text[:start] + text[end:].lstrip("\r\n")

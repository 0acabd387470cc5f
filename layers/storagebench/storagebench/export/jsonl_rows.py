"""Rows read back from an export file Collect wrote (JSON Lines, ``formats.jsonl_text``).

The files hold what an instance measured, so they are read as untrusted: every line must be one
JSON object with exactly the schema's columns, each value of its column's type, naming the run and
the config the file is of. The first line that is not is an ExportError naming the file, the line
and the column: a row is never dropped or mended on the way to a CSV or Parquet file.
"""

from __future__ import annotations

import json
from typing import Any

from storagebench.export.errors import ExportError
from storagebench.export.formats import checked_value
from storagebench.export.schema import COLUMN_NAMES, COLUMNS

__all__ = ["jsonl_rows"]

_KNOWN = frozenset(COLUMN_NAMES)


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def _row(line: str, where: str) -> dict[str, Any]:
    try:
        document = json.loads(line, parse_constant=_no_constant)
    except ValueError as exc:
        raise ExportError(f"{where}: not a JSON object: {exc}") from None
    if not isinstance(document, dict):
        raise ExportError(f"{where}: a JSON object (one row) is required, not {type(document).__name__}")
    unknown = sorted(set(document) - _KNOWN)
    if unknown:
        raise ExportError(
            f"{where}: column(s) {', '.join(map(repr, unknown))} not in the export schema "
            "(storagebench.export.schema.COLUMNS)"
        )
    missing = [name for name in COLUMN_NAMES if name not in document]
    if missing:
        raise ExportError(
            f"{where}: column(s) {', '.join(map(repr, missing))} missing: Collect writes every column"
        )
    return {c.name: checked_value(document[c.name], c, where) for c in COLUMNS}


def _expect(row: dict[str, Any], name: str, wanted: str | None, where: str) -> None:
    if wanted is not None and row[name] != wanted:
        raise ExportError(f"{where}: {name}={row[name]!r}: this file holds {name} {wanted!r} only")


def jsonl_rows(
    data: bytes, source: str, *, run_id: str | None = None, config_id: str | None = None
) -> list[dict[str, Any]]:
    """The rows of one export file, checked against the schema (``source`` names the file in errors);
    ``run_id`` and ``config_id``: what every row must name."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        at = data[: exc.start].count(b"\n") + 1
        raise ExportError(f"{source} line {at}: not UTF-8 text ({exc.reason})") from None
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()  # the newline that ends the last row
    rows: list[dict[str, Any]] = []
    for number, line in enumerate(lines, start=1):
        where = f"{source} line {number}"
        if not line.strip():
            raise ExportError(f"{where}: an empty line; every line is one row")
        row = _row(line, where)
        _expect(row, "run_id", run_id, where)
        _expect(row, "config_id", config_id, where)
        rows.append(row)
    return rows

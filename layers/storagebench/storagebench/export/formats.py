"""Rows to bytes: CSV, JSON Lines and Parquet, every format with the schema's columns in its order.

Rows are checked against ``schema.COLUMNS`` before a byte is written: a column the schema lacks,
or a value of another type, is an ExportError naming the row, the column, the value and the type
allowed. A column a row leaves out is empty (CSV), null (JSON) or null (Parquet).
"""

from __future__ import annotations

import csv
import io
import json
import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any, BinaryIO

from storagebench.export.errors import ExportError
from storagebench.export.schema import COLUMN_NAMES, COLUMNS, Column

__all__ = ["EXPORT_FORMATS", "checked_rows", "checked_value", "csv_text", "jsonl_text", "write_rows"]

EXPORT_FORMATS: tuple[str, ...] = ("csv", "jsonl", "parquet")

_KNOWN = frozenset(COLUMN_NAMES)


def checked_value(value: Any, column: Column, where: str) -> Any:
    """``value`` as ``column`` holds it (an int double as a float), or an ExportError that names
    ``where`` (``row 3``, a file's line), the column, the value and the type allowed."""
    if value is None:
        return None
    kind = column.type
    if kind == "string" and isinstance(value, str):
        return value
    if kind == "boolean" and isinstance(value, bool):
        return value
    if kind == "bigint" and isinstance(value, int) and not isinstance(value, bool):
        return value
    if kind == "double" and isinstance(value, int | float) and not isinstance(value, bool):
        if math.isfinite(value):
            return float(value)  # 3000 and 3000.0 are one double in every format
        raise ExportError(f"{where}: {column.name}={value!r}: a finite number or null is required")
    raise ExportError(
        f"{where}: {column.name}={value!r} ({type(value).__name__}): a {kind} or null is required"
    )


def checked_rows(rows: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Every row with every column in schema order, values checked against the column's type."""
    checked: list[dict[str, Any]] = []
    for index, row in enumerate(rows):
        unknown = sorted(set(row) - _KNOWN)
        if unknown:
            raise ExportError(
                f"row {index}: column(s) {', '.join(map(repr, unknown))} not in the export schema "
                f"(storagebench.export.schema.COLUMNS)"
            )
        checked.append({c.name: checked_value(row.get(c.name), c, f"row {index}") for c in COLUMNS})
    return checked


def jsonl_text(rows: Sequence[Mapping[str, Any]]) -> str:
    """One JSON object per line (the Athena table's JSON SerDe reads these, one row a line)."""
    return "".join(
        json.dumps(row, allow_nan=False, ensure_ascii=False, separators=(",", ":")) + "\n"
        for row in checked_rows(rows)
    )


def _cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    return repr(value) if isinstance(value, float) else str(value)


def csv_text(rows: Sequence[Mapping[str, Any]]) -> str:
    """A header of the schema's column names, then one line per row (RFC 4180 quoting)."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(COLUMN_NAMES)
    for row in checked_rows(rows):
        writer.writerow([_cell(row[name]) for name in COLUMN_NAMES])
    return buffer.getvalue()


def _write_text(render: Callable[[Sequence[Mapping[str, Any]]], str]) -> Callable[..., None]:
    def write(rows: Sequence[Mapping[str, Any]], stream: BinaryIO) -> None:
        stream.write(render(rows).encode("utf-8"))

    return write


def _write_parquet(rows: Sequence[Mapping[str, Any]], stream: BinaryIO) -> None:
    from storagebench.export.parquet import write_parquet  # pyarrow is an optional extra

    write_parquet(checked_rows(rows), stream)


_WRITERS: dict[str, Callable[[Sequence[Mapping[str, Any]], BinaryIO], None]] = {
    "csv": _write_text(csv_text),
    "jsonl": _write_text(jsonl_text),
    "parquet": _write_parquet,
}


def write_rows(rows: Sequence[Mapping[str, Any]], fmt: str, stream: BinaryIO) -> None:
    """Write ``rows`` to a binary stream in ``fmt`` (one of ``EXPORT_FORMATS``)."""
    writer = _WRITERS.get(fmt)
    if writer is None:
        raise ExportError(f"export format {fmt!r}: not one of {', '.join(EXPORT_FORMATS)}")
    writer(rows, stream)

"""Rows to Parquet with the schema's types. pyarrow is the optional extra ``storagebench[parquet]``:
it is imported here, when a Parquet file is asked for, and its absence is an ExportError saying how
to install it."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, BinaryIO

from storagebench.export.errors import ExportError
from storagebench.export.schema import COLUMNS, ColumnType

__all__ = ["INSTALL_HINT", "arrow_schema", "write_parquet"]

INSTALL_HINT = "pip install 'storagebench[parquet]'"


def _pyarrow() -> Any:
    try:
        import pyarrow  # type: ignore[import-untyped]
        import pyarrow.parquet  # type: ignore[import-untyped]  # the submodule write_table lives in
    except ImportError as exc:
        raise ExportError(
            f"export format 'parquet' needs pyarrow, which is not installed: {INSTALL_HINT}"
        ) from exc
    return pyarrow


def arrow_schema() -> Any:
    """The Parquet schema: ``schema.COLUMNS`` in order, each nullable, with units in the field metadata."""
    pa = _pyarrow()
    types: dict[ColumnType, Any] = {
        "string": pa.string(),
        "bigint": pa.int64(),
        "double": pa.float64(),
        "boolean": pa.bool_(),
    }
    return pa.schema(
        [
            pa.field(
                c.name, types[c.type], nullable=True, metadata={"unit": c.unit, "description": c.description}
            )
            for c in COLUMNS
        ]
    )


def write_parquet(rows: Sequence[dict[str, Any]], stream: BinaryIO) -> None:
    """Rows already checked against the schema (``formats.checked_rows``) as one Parquet file."""
    pa = _pyarrow()
    table = pa.Table.from_pylist(list(rows), schema=arrow_schema())
    pa.parquet.write_table(table, stream)

"""write_rows: the same rows as CSV, JSON Lines and Parquet, every format in the schema's column
order and types; pandas reads Parquet back with the numbers JSON Lines holds."""

from __future__ import annotations

import csv
import io
import json
import sys
from datetime import date
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow.parquet as pq
import pytest
from export_nightly import nightly_rows

from storagebench.export import EXPORT_FORMATS, ExportError, run_rows, write_rows
from storagebench.export.schema import COLUMN_NAMES, COLUMNS

DEMO_RUN = Path(__file__).resolve().parents[2] / "data" / "runs" / "local-demo.json"
NUMERIC = [c.name for c in COLUMNS if c.type in ("double", "bigint")]


def demo_rows() -> list[dict[str, Any]]:
    return run_rows(json.loads(DEMO_RUN.read_text(encoding="utf-8")))


def all_rows() -> list[dict[str, Any]]:
    """A stored local run (prewarm and fio records, emulated volumes) and realistic EBS nights."""
    nights = [row for rows in nightly_rows(date(2026, 11, 25)).values() for row in rows]
    return demo_rows() + nights


def written(rows: list[dict[str, Any]], fmt: str) -> bytes:
    stream = io.BytesIO()
    write_rows(rows, fmt, stream)
    return stream.getvalue()


def test_the_formats_are_the_three_the_cli_offers() -> None:
    assert EXPORT_FORMATS == ("csv", "jsonl", "parquet")


def test_parquet_read_back_with_pandas_holds_the_numbers_json_lines_holds() -> None:
    rows = all_rows()
    from_parquet = pd.read_parquet(io.BytesIO(written(rows, "parquet")))
    lines = written(rows, "jsonl").decode("utf-8").splitlines()
    from_jsonl = pd.DataFrame.from_records([json.loads(line) for line in lines], columns=list(COLUMN_NAMES))
    assert list(from_parquet.columns) == list(COLUMN_NAMES) and len(from_parquet) == len(rows) == 21 + 72
    for name in NUMERIC:
        parquet = pd.to_numeric(from_parquet[name]).astype("float64")
        jsonl = pd.to_numeric(from_jsonl[name]).astype("float64")
        pd.testing.assert_series_equal(parquet, jsonl, check_names=False, rtol=0, atol=0)
    for name in ("run_id", "storage_option", "variant", "date", "labels"):
        assert from_parquet[name].tolist() == from_jsonl[name].tolist()
    assert from_parquet["emulated"].tolist() == [row["emulated"] for row in rows]
    # and a number as run_rows made it: the demo's first fio record on gp2
    fio = from_parquet[(from_parquet.engine == "fio") & (from_parquet.config_id == "gp2")].iloc[0]
    assert fio["p95_us"] == next(r for r in rows if r["engine"] == "fio")["p95_us"] > 0


def test_parquet_carries_the_schemas_types_and_units() -> None:
    table = pq.read_table(io.BytesIO(written(demo_rows(), "parquet")))
    arrow = {"string": "string", "bigint": "int64", "double": "double", "boolean": "bool"}
    assert [(f.name, str(f.type)) for f in table.schema] == [(c.name, arrow[c.type]) for c in COLUMNS]
    assert table.schema.field("p95_us").metadata[b"unit"] == b"us"
    assert table.schema.field("bw_mibps").metadata[b"unit"] == b"MiB/s"


def test_csv_has_the_schemas_header_and_one_line_per_row() -> None:
    rows = demo_rows()
    text = written(rows, "csv").decode("utf-8")
    read = list(csv.reader(io.StringIO(text)))
    assert read[0] == list(COLUMN_NAMES) and len(read) == len(rows) + 1
    first = dict(zip(read[0], read[1], strict=True))
    assert first["emulated"] == "true" and first["fio_version"] == ""  # null is an empty cell
    assert float(first["bw_mibps"]) == rows[0]["bw_mibps"]  # floats round-trip exactly (repr)
    assert pd.read_csv(io.StringIO(text))["io_bytes"].tolist() == [r["io_bytes"] for r in rows]


def test_json_lines_is_one_object_per_row_in_column_order() -> None:
    rows = demo_rows()
    lines = written(rows, "jsonl").decode("utf-8").splitlines()
    assert len(lines) == len(rows)
    assert all(list(json.loads(line)) == list(COLUMN_NAMES) for line in lines)


def test_an_unknown_format_is_refused_naming_it_and_the_choices() -> None:
    with pytest.raises(ExportError, match=r"export format 'xlsx': not one of csv, jsonl, parquet"):
        write_rows([], "xlsx", io.BytesIO())


def test_a_column_outside_the_schema_is_refused_before_anything_is_written() -> None:
    stream = io.BytesIO()
    with pytest.raises(ExportError, match=r"row 1: column\(s\) 'p95_ms' not in the export schema"):
        write_rows([{"iops": 1.0}, {"p95_ms": 2.0}], "csv", stream)
    assert stream.getvalue() == b""


@pytest.mark.parametrize(
    ("column", "value", "message"),
    [
        ("iops", "fast", r"iops='fast' \(str\): a double or null is required"),
        ("repetition", 1.5, r"repetition=1.5 \(float\): a bigint or null is required"),
        ("emulated", 1, r"emulated=1 \(int\): a boolean or null is required"),
        ("iops", float("nan"), r"iops=nan: a finite number or null is required"),
        ("run_id", 7, r"run_id=7 \(int\): a string or null is required"),
    ],
)
def test_a_value_of_the_wrong_type_is_refused_naming_row_column_and_type(
    column: str, value: Any, message: str
) -> None:
    with pytest.raises(ExportError, match=r"row 0: " + message):
        write_rows([{column: value}], "jsonl", io.BytesIO())


def test_an_integer_in_a_double_column_is_written_as_a_double() -> None:
    line = written([{"iops": 3000, "repetition": 2}], "jsonl").decode("utf-8")
    document = json.loads(line)
    assert document["iops"] == 3000.0 and isinstance(document["iops"], float)
    assert document["repetition"] == 2 and isinstance(document["repetition"], int)


def test_parquet_without_pyarrow_says_how_to_install_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "pyarrow", None)  # import pyarrow now raises ImportError
    monkeypatch.setitem(sys.modules, "pyarrow.parquet", None)
    with pytest.raises(ExportError, match=r"'parquet' needs pyarrow.*pip install 'storagebench\[parquet\]'"):
        write_rows(demo_rows(), "parquet", io.BytesIO())
    assert written(demo_rows(), "csv")  # the other formats need nothing more

"""jsonl_rows: a file Collect wrote reads back as the rows it holds; anything else is an error naming
the file, the line and the column, and no row is dropped or mended."""

from __future__ import annotations

import json
from datetime import date
from typing import Any

import pytest
from export_nightly import nightly_rows

from storagebench.export import ExportError, jsonl_rows
from storagebench.export.formats import checked_rows, jsonl_text
from storagebench.export.schema import COLUMN_NAMES

SOURCE = "s3 object exports/suite=nightly/date=2026-11-24/run=r1/gp3-12k.jsonl"


def one_file() -> tuple[str, str, list[dict[str, Any]]]:
    """(run id, config id, rows) of one config's file, as Collect writes it."""
    files = nightly_rows(date(2026, 11, 25))
    (_, _, config), rows = next(iter(files.items()))
    return str(rows[0]["run_id"]), config, rows


def test_a_file_collect_wrote_reads_back_as_its_rows() -> None:
    run_id, config, rows = one_file()
    read = jsonl_rows(jsonl_text(rows).encode(), SOURCE, run_id=run_id, config_id=config)
    assert read == checked_rows(rows) and len(read) == len(rows) >= 3
    assert all(list(row) == list(COLUMN_NAMES) for row in read)
    assert jsonl_rows(b"", SOURCE) == []


def lines_with(line_2: str) -> bytes:
    _, _, rows = one_file()
    first, _, *rest = jsonl_text(rows).splitlines()
    return "\n".join([first, line_2, *rest]).encode() + b"\n"


def row_text(**changes: Any) -> str:
    _, _, rows = one_file()
    row = {**checked_rows(rows)[1], **changes}
    return json.dumps(row)


@pytest.mark.parametrize(
    ("line", "problem"),
    [
        (row_text(iops="fast"), "iops='fast' (str): a double or null is required"),
        (row_text(repetition=1.5), "repetition=1.5 (float): a bigint or null is required"),
        (row_text(emulated="no"), "emulated='no' (str): a boolean or null is required"),
        (row_text(gremlin=1), "column(s) 'gremlin' not in the export schema"),
        (row_text(run_id="another-run"), "run_id='another-run': this file holds run_id"),
        (row_text(config_id="gp2"), "config_id='gp2': this file holds config_id 'gp3-12k' only"),
        (row_text().replace('"p95_us": ', '"p95_us": NaN, "x": '), "NaN is not a JSON number"),
        ("[1, 2]", "a JSON object (one row) is required, not list"),
        ("{not json", "not a JSON object"),
        ("", "an empty line; every line is one row"),
    ],
)
def test_a_bad_line_is_an_error_naming_the_file_the_line_and_the_column(line: str, problem: str) -> None:
    run_id, config, _ = one_file()
    with pytest.raises(ExportError) as raised:
        jsonl_rows(lines_with(line), SOURCE, run_id=run_id, config_id=config)
    assert str(raised.value).startswith(f"{SOURCE} line 2: ")
    assert problem in str(raised.value)


def test_a_missing_column_is_named() -> None:
    _, _, rows = one_file()
    row = checked_rows(rows)[1]
    del row["p99_9_us"]
    with pytest.raises(ExportError, match=r"line 2: column\(s\) 'p99_9_us' missing"):
        jsonl_rows(lines_with(json.dumps(row)), SOURCE)


def test_bytes_that_are_not_utf8_name_their_line() -> None:
    with pytest.raises(ExportError, match=r"line 2: not UTF-8 text"):
        jsonl_rows(lines_with("").replace(b"\n\n", b"\n\xff\n"), SOURCE)

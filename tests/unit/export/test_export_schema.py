"""The export schema: unique names Athena accepts, units spelled in the names of measured columns."""

from __future__ import annotations

import re

import pytest

from storagebench.export.schema import COLUMN_NAMES, COLUMNS, PARTITION_KEYS, column, table_columns

# A measured column's unit and the suffix its name must end with.
UNIT_SUFFIX = {
    "us": "_us",
    "s": "_s",
    "MiB/s": "_mibps",
    "%": "_pct",
    "USD/month": "_usd",
    "GiB": "_gib",
}


def test_names_are_unique_lowercase_identifiers() -> None:
    assert len(set(COLUMN_NAMES)) == len(COLUMN_NAMES)
    for name in COLUMN_NAMES:
        assert re.fullmatch(r"[a-z][a-z0-9_]*", name), name  # Athena: lowercase, digits, underscores


def test_every_measured_unit_is_spelled_in_its_columns_name() -> None:
    for c in COLUMNS:
        suffix = UNIT_SUFFIX.get(c.unit)
        if suffix is not None:
            assert c.name.endswith(suffix), f"{c.name} ({c.unit}) should end with {suffix}"
        assert c.description, c.name
    # and the metrics the issue names are there
    for name in (
        "iops",
        "bw_mibps",
        "lat_mean_us",
        "p50_us",
        "p95_us",
        "p99_us",
        "p99_9_us",
        "runtime_s",
        "io_bytes",
    ):
        assert name in COLUMN_NAMES


def test_the_partition_keys_are_string_columns_of_the_files_but_not_of_the_table() -> None:
    assert PARTITION_KEYS == ("suite", "date")
    assert all(column(key).type == "string" for key in PARTITION_KEYS)
    assert [c.name for c in table_columns()] == [n for n in COLUMN_NAMES if n not in PARTITION_KEYS]


def test_an_unknown_column_is_named_with_the_choices() -> None:
    with pytest.raises(KeyError, match=r"export column 'p95_ms': not in the schema \(run_id, suite"):
        column("p95_ms")

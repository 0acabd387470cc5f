"""The two queries of docs/results.md, run as Athena would run them: over the files Collect writes, laid out
as artifact_keys lays them out, in an embedded SQL engine (DuckDB) where ``storagebench.results`` is
a view over those files with the Glue table's columns. The SQL is the shipped files', unchanged."""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

import duckdb
import pytest
from export_nightly import GP2, GP3_10K, GP3_12K, IO2, export_key_of, nightly_rows

from storagebench.export import write_rows
from storagebench.export.queries import QUERY_NAMES, TABLE, query_text
from storagebench.export.schema import PARTITION_KEYS, table_columns

ROOT = Path(__file__).resolve().parents[3]
DUCKDB_TYPES = {"string": "VARCHAR", "bigint": "BIGINT", "double": "DOUBLE", "boolean": "BOOLEAN"}
HIVE_TYPES = "{" + ", ".join(f"'{key}': 'VARCHAR'" for key in PARTITION_KEYS) + "}"


def today() -> date:
    return datetime.now(UTC).date()


def write_exports(root: Path, fmt: str) -> None:
    for (suite, night, config_id), rows in nightly_rows(today()).items():
        path = root / export_key_of(suite, night, config_id)
        if fmt == "parquet":
            path = path.with_suffix(".parquet")
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("wb") as stream:
            write_rows(rows, fmt, stream)


def source(root: Path, fmt: str) -> str:
    """What the view reads: the files under exports/, partitions from their keys as Athena takes them."""
    files = f"'{root}/exports/**/*.{'jsonl' if fmt == 'jsonl' else 'parquet'}'"
    if fmt == "parquet":
        return f"read_parquet({files}, hive_partitioning = true, hive_types = {HIVE_TYPES})"
    columns = "{" + ", ".join(f"'{c.name}': '{DUCKDB_TYPES[c.type]}'" for c in table_columns()) + "}"
    return (
        f"read_json({files}, format = 'newline_delimited', columns = {columns}, "
        f"hive_partitioning = true, hive_types = {HIVE_TYPES})"
    )


@pytest.fixture(params=["jsonl", "parquet"])
def engine(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[duckdb.DuckDBPyConnection]:
    write_exports(tmp_path, request.param)
    connection = duckdb.connect()
    connection.execute("SET TimeZone = 'UTC'")  # current_date as Athena's: the UTC day
    schema, table = TABLE.split(".")
    connection.execute(f"CREATE SCHEMA {schema}")
    # run= is a key segment, not a partition of the Glue table: the view leaves it out as Athena does
    connection.execute(
        f"CREATE VIEW {schema}.{table} AS SELECT * EXCLUDE (run) FROM {source(tmp_path, request.param)}"
    )
    yield connection
    connection.close()


def answer(connection: duckdb.DuckDBPyConnection, name: str) -> list[dict[str, Any]]:
    result = connection.execute(query_text(name))
    names = [d[0] for d in result.description]
    return [dict(zip(names, row, strict=True)) for row in result.fetchall()]


def test_the_view_has_the_tables_columns_and_partitions(engine: duckdb.DuckDBPyConnection) -> None:
    described = {row[0]: row[1] for row in engine.execute(f"DESCRIBE {TABLE}").fetchall()}
    expected = {c.name: DUCKDB_TYPES[c.type] for c in table_columns()} | dict.fromkeys(
        PARTITION_KEYS, "VARCHAR"
    )
    assert described == expected


def test_cheapest_option_meeting_p95_under_2ms_at_10000_iops_over_the_last_7_days(
    engine: duckdb.DuckDBPyConnection,
) -> None:
    """gp3 at 12,000 IOPS: gp3 at 10,000 IOPS is cheaper but one repetition took 2.3 ms three nights
    ago; gp2 is cheaper but slow; the emulated volume, the other suite and the write workload are
    cheaper still and left out; io2 meets and costs more."""
    (row,) = answer(engine, "cheapest_option")
    assert row == {
        "storage_option": GP3_12K.option,
        "monthly_usd": 190.0,
        "repetitions": 9,
        "worst_iops": 11950.5,
        "worst_p95_ms": 1.51,
    }


def test_the_cheapest_answer_moves_when_the_failing_night_leaves_the_window(
    engine: duckdb.DuckDBPyConnection,
) -> None:
    """The same query over the last 2 days: the 2.3 ms night falls outside the window, and the
    cheaper gp3 at 10,000 IOPS becomes the answer (the data in the window decides)."""
    sql = query_text("cheapest_option").replace("INTERVAL '7' DAY", "INTERVAL '2' DAY")
    (row,) = engine.execute(sql).fetchall()
    assert row[0] == GP3_10K.option and row[1] == 170.0  # nights 1 and 2 only: 1.9 ms at worst


def test_nightly_p95_trend_per_storage_option(engine: duckdb.DuckDBPyConnection) -> None:
    rows = answer(engine, "p95_trend")
    options = {row["storage_option"] for row in rows}
    assert {GP3_12K.option, GP3_10K.option, GP2.option, IO2.option} <= options
    trend = [r for r in rows if r["storage_option"] == GP3_12K.option]
    nights = [(today() - timedelta(days=d)).isoformat() for d in (12, 3, 2, 1)]  # not 40 days ago
    assert [r["date"] for r in trend] == nights
    assert [r["repetitions"] for r in trend] == [3, 3, 3, 3]
    means = [round((4050 + 31 * d) / 3 / 1000, 3) for d in (3, 2, 1)]
    assert [r["mean_p95_ms"] for r in trend] == [1.6, *means]
    assert [r["worst_p95_ms"] for r in trend] == [1.7, 1.51, 1.49, 1.47]


def test_a_query_without_its_suite_would_read_every_suite() -> None:
    """Athena needs the injected suite partition equal to a literal: both queries name one."""
    for name in QUERY_NAMES:
        assert re.search(r"WHERE suite = '[a-z0-9-]+'", query_text(name)), name
        assert f"FROM {TABLE}\n" in query_text(name), name


def _sql_blocks(section: str) -> list[str]:
    return [block.strip() for block in re.findall(r"```sql\n(.*?)```", section, flags=re.DOTALL)]


def test_the_docs_show_exactly_the_shipped_queries() -> None:
    page = (ROOT / "docs" / "results.md").read_text(encoding="utf-8")
    match = re.search(r"^### Exports and SQL\n(.*?)(?=^##)", page + "\n## ", flags=re.DOTALL | re.MULTILINE)
    assert match is not None, "docs/results.md has no '### Exports and SQL' section"
    assert _sql_blocks(match.group(1)) == [query_text(name).strip() for name in QUERY_NAMES]

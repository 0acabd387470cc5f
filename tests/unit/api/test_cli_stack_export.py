"""``storagebench results --stack --run ID --format csv|jsonl|parquet``: the rows Collect wrote, through
the signed API (GET /runs/{id}/export) and the presigned links it answers.

The API is the real handler on moto behind the SigV4-checking server of tests.support.api_cli; the links
point at moto's S3 served on 127.0.0.1 (a ThreadedMotoServer shares the in-process moto's
buckets), so the CLI downloads them over plain HTTP as it downloads from S3.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import boto3
import pyarrow.parquet as pq  # type: ignore[import-untyped]
import pytest
from export_files import record_demo_run, write_config_export
from moto.server import ThreadedMotoServer
from tests.support import api_cli
from tests.support.api_cli import Signed, cli
from tests.support.api_stack import BUCKET, REGION, Stack

from storagebench.adapters.aws.report_links import S3ReportLinks
from storagebench.export.schema import COLUMN_NAMES

PREFIX = "exports/suite=local-demo/date=2030-01-02/run=demo-1/"
served = api_cli.served  # the signed API server and its hooks, as fixtures of this module too
hooks = api_cli.hooks


@pytest.fixture
def s3_served(stack: Stack) -> Iterator[str]:
    """The API presigns links to moto's S3 on 127.0.0.1 (an HTTP endpoint the CLI can download from)."""
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    endpoint = f"http://{host}:{port}"
    stack.service.links = S3ReportLinks(boto3.client("s3", region_name=REGION, endpoint_url=endpoint), BUCKET)
    try:
        yield endpoint
    finally:
        server.stop()


def export_args(url: str, fmt: str, *more: str) -> list[str]:
    return ["results", "--run", "demo-1", "--format", fmt, "--api-url", url, "--region", REGION, *more]


def collected(stack: Stack) -> None:
    """gp2 interrupted once (repetition 1, then 2 on its relaunch), gp3 measured, io1 not collected."""
    record_demo_run(stack.store, "demo-1")
    write_config_export(stack.s3, "demo-1", "gp3", [3100.0, 3090.0])
    write_config_export(stack.s3, "demo-1", "gp2", [1510.0])
    write_config_export(stack.s3, "demo-1", "gp2", [1500.0], attempt=2, first_repetition=2)


def written_rows(stack: Stack) -> list[dict[str, Any]]:
    """The files' rows as Collect wrote them, by config and attempt."""
    rows = []
    for name in ("gp2.jsonl", "gp2.attempt2.jsonl", "gp3.jsonl"):
        body = stack.s3.get_object(Bucket=BUCKET, Key=PREFIX + name)["Body"].read().decode()
        rows.extend(json.loads(line) for line in body.splitlines())
    return rows


def test_csv_holds_every_row_collect_wrote_by_config_and_attempt(
    stack: Stack, served: tuple[str, Signed], s3_served: str
) -> None:
    url, signed = served
    collected(stack)
    result = cli(*export_args(url, "csv"))
    assert result.exit_code == 0, result.output
    table = list(csv.reader(io.StringIO(result.stdout)))
    assert tuple(table[0]) == COLUMN_NAMES and len(table) == 1 + 4
    by_name = [dict(zip(COLUMN_NAMES, line, strict=True)) for line in table[1:]]
    assert [(r["config_id"], r["repetition"], r["iops"]) for r in by_name] == [
        ("gp2", "1", "1510.0"),
        ("gp2", "2", "1500.0"),
        ("gp3", "1", "3100.0"),
        ("gp3", "2", "3090.0"),
    ]
    assert {r["run_id"] for r in by_name} == {"demo-1"} and {r["date"] for r in by_name} == {"2030-01-02"}
    assert by_name[0]["p95_us"] == "1250.5" and by_name[0]["price_source"]  # Collect's snapshot price
    notes = " ".join(result.stderr.split())
    assert "1 config(s) of the run (RUNNING) have no exported rows: io1" in notes
    assert signed.checked == ["GET /runs/demo-1/export"] and signed.problems == []


def test_jsonl_and_parquet_files_hold_the_same_rows(
    stack: Stack, served: tuple[str, Signed], s3_served: str, tmp_path: Path
) -> None:
    url, _ = served
    collected(stack)
    lines = tmp_path / "demo-1.jsonl"
    result = cli(*export_args(url, "jsonl", "--out", str(lines)))
    assert result.exit_code == 0, result.output
    assert "4 row(s) of run demo-1 written to" in " ".join(result.stderr.split())
    from_jsonl = [json.loads(line) for line in lines.read_text(encoding="utf-8").splitlines()]
    assert from_jsonl == written_rows(stack)  # byte for byte the rows, every column, in order
    table = tmp_path / "demo-1.parquet"
    result = cli(*export_args(url, "parquet", "--out", str(table)))
    assert result.exit_code == 0, result.output
    from_parquet = pq.read_table(table).to_pylist()
    assert from_parquet == from_jsonl and list(from_parquet[0]) == list(COLUMN_NAMES)


@pytest.mark.parametrize(
    ("column", "raw", "names"),
    [
        ("iops", '"fast"', ["iops='fast'", "a double or null is required"]),
        ("iops", "NaN", ["NaN is not a JSON number"]),
        ("config_id", '"gp2"', ["config_id='gp2'", "holds config_id 'gp3' only"]),
        ("gremlin", "1", ["'gremlin' not in the export schema"]),
    ],
)
def test_a_bad_row_is_an_error_naming_the_object_line_and_column(
    stack: Stack,
    served: tuple[str, Signed],
    s3_served: str,
    tmp_path: Path,
    column: str,
    raw: str,
    names: list[str],
) -> None:
    url, _ = served
    collected(stack)
    key = PREFIX + "gp3.jsonl"
    first, second = stack.s3.get_object(Bucket=BUCKET, Key=key)["Body"].read().decode().splitlines()
    row = json.loads(second)
    if column in row:  # the value as Collect wrote it, replaced in the text
        bad = second.replace(f'"{column}":{json.dumps(row[column])}', f'"{column}":{raw}')
    else:
        bad = f'{second[:-1]},"{column}":{raw}}}'
    assert bad != second
    stack.s3.put_object(Bucket=BUCKET, Key=key, Body=f"{first}\n{bad}\n".encode())
    target = tmp_path / "out.csv"
    result = cli(*export_args(url, "csv", "--out", str(target)))
    assert result.exit_code == 1, result.output
    message = " ".join(result.stderr.split())
    assert f"the export of run demo-1 cannot be read: s3 object {key} line 2:" in message
    for name in names:
        assert name in message
    assert not target.exists()  # nothing written, not the rows before the bad one


def test_a_run_without_files_exits_1_saying_why(
    stack: Stack, served: tuple[str, Signed], s3_served: str
) -> None:
    url, _ = served
    record_demo_run(stack.store, "demo-1")
    result = cli(*export_args(url, "jsonl"))
    assert result.exit_code == 1 and result.stdout == ""
    message = " ".join(result.stderr.split())
    assert "run demo-1 (RUNNING) has no exported rows yet" in message and "gp2, gp3, io1" in message
    missing = cli("results", "--run", "nope", "--format", "csv", "--api-url", url, "--region", REGION)
    assert missing.exit_code == 2 and "404 run_not_found" in missing.stderr


def test_a_link_that_cannot_be_fetched_names_the_object(
    stack: Stack, served: tuple[str, Signed], s3_served: str
) -> None:
    url, _ = served
    collected(stack)

    class Expired(S3ReportLinks):
        def _presigned(self, key: str, expires_s: int) -> str:
            return super()._presigned(key + ".gone", expires_s)

    stack.service.links = Expired(stack.service.links.s3, BUCKET)  # type: ignore[attr-defined]
    result = cli(*export_args(url, "csv"))
    assert result.exit_code == 1
    message = " ".join(result.stderr.split())
    assert f"downloading s3 object {PREFIX}gp2.jsonl (the export of run demo-1) failed: HTTP 404" in message

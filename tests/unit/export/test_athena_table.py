"""template.yaml's Athena table reads what Collect writes: its columns are the export schema's, its
location and partition projection are artifact_keys' layout, Collect may write exactly that layout,
and the queries name the table the template creates."""

from __future__ import annotations

from datetime import date
from fnmatch import fnmatchcase
from pathlib import Path
from typing import Any

from export_nightly import export_key_of

from storagebench.export.queries import TABLE
from storagebench.export.schema import PARTITION_KEYS, column, table_columns
from storagebench.workflow.artifact_keys import EXPORT_LOCATION_TEMPLATE, EXPORTS_PREFIX, export_prefix
from storagebench_local.template import Template

ROOT = Path(__file__).resolve().parents[3]
BUCKET = "sb-artifacts-123"
TEMPLATE = Template(ROOT / "template.yaml")
NAMES = {
    "ArtifactsBucket": BUCKET,
    "ArtifactsBucket.Arn": f"arn:aws:s3:::{BUCKET}",
    "ExportsDatabase": TEMPLATE.resolve({"Ref": "ExportsDatabaseName"}),
}


def resource(logical_id: str, kind: str) -> dict[str, Any]:
    declaration = TEMPLATE.resource(logical_id, (kind,))
    properties: dict[str, Any] = TEMPLATE.resolve(declaration["Properties"], NAMES)
    return properties


TABLE_INPUT = resource("ExportsTable", "AWS::Glue::Table")["TableInput"]
STORAGE = TABLE_INPUT["StorageDescriptor"]


def test_the_table_columns_are_the_export_schema_in_order_with_its_types() -> None:
    columns = [(c["Name"], c["Type"]) for c in STORAGE["Columns"]]
    assert columns == [(c.name, c.type) for c in table_columns()]
    comments = {c["Name"]: c["Comment"] for c in STORAGE["Columns"]}
    assert comments["p95_us"] == f"{column('p95_us').description} (us)"  # units travel with the columns


def test_the_partition_keys_are_suite_and_date_as_strings() -> None:
    keys = [(k["Name"], k["Type"]) for k in TABLE_INPUT["PartitionKeys"]]
    assert (
        keys
        == [(name, column(name).type) for name in PARTITION_KEYS]
        == [("suite", "string"), ("date", "string")]
    )


def test_the_table_reads_json_lines_from_the_exports_prefix() -> None:
    assert TABLE_INPUT["TableType"] == "EXTERNAL_TABLE"
    assert STORAGE["SerdeInfo"]["SerializationLibrary"] == "org.openx.data.jsonserde.JsonSerDe"
    assert STORAGE["InputFormat"] == "org.apache.hadoop.mapred.TextInputFormat"
    assert STORAGE["Location"] == f"s3://{BUCKET}/{EXPORTS_PREFIX}"


def test_partition_projection_finds_the_keys_collect_writes() -> None:
    parameters = TABLE_INPUT["Parameters"]
    assert parameters["projection.enabled"] == "true"
    assert parameters["projection.suite.type"] == "injected"
    assert parameters["projection.date.type"] == "date"
    assert parameters["projection.date.format"] == "yyyy-MM-dd"
    assert parameters["projection.date.range"] == "2024-01-01,NOW"
    template = parameters["storage.location.template"]
    assert template == f"s3://{BUCKET}/{EXPORT_LOCATION_TEMPLATE}"
    # the template, filled in, is the prefix of the key Collect writes for that suite and night
    partition = template.replace("${suite}", "nightly").replace("${date}", "2026-11-25")
    key = export_key_of("nightly", "2026-11-25", "gp3")
    assert partition == f"s3://{BUCKET}/{export_prefix('nightly', '2026-11-25')}"
    assert f"s3://{BUCKET}/{key}".startswith(partition)
    assert date.fromisoformat(parameters["projection.date.range"].split(",")[0]) <= date(2026, 11, 25)


def test_collect_may_write_exactly_the_export_keys() -> None:
    declared = TEMPLATE.resource("CollectFunction", ("AWS::Serverless::Function",))["Properties"]["Policies"]
    statements = [s for p in declared if isinstance(p, dict) and "Statement" in p for s in p["Statement"]]
    puts = [
        resource_arn
        for statement in TEMPLATE.resolve(statements, NAMES)
        if statement["Effect"] == "Allow" and statement["Action"] == "s3:PutObject"
        for resource_arn in (
            [statement["Resource"]] if isinstance(statement["Resource"], str) else statement["Resource"]
        )
    ]
    exports = [arn for arn in puts if "/exports/" in arn]
    assert exports == [f"arn:aws:s3:::{BUCKET}/exports/suite=*/date=*/run=*/*.jsonl"]
    assert fnmatchcase(f"arn:aws:s3:::{BUCKET}/{export_key_of('nightly', '2026-11-25', 'gp3')}", exports[0])


def test_the_queries_name_the_table_the_template_creates() -> None:
    database = resource("ExportsDatabase", "AWS::Glue::Database")["DatabaseInput"]["Name"]
    table = resource("ExportsTable", "AWS::Glue::Table")
    assert TABLE == f"{database}.{table['TableInput']['Name']}" == "storagebench.results"
    assert table["DatabaseName"] == database


def test_athena_results_stay_in_the_bucket_and_expire() -> None:
    workgroup = resource("ExportsWorkGroup", "AWS::Athena::WorkGroup")["WorkGroupConfiguration"]
    assert workgroup["EnforceWorkGroupConfiguration"] is True
    assert workgroup["ResultConfiguration"]["OutputLocation"] == f"s3://{BUCKET}/athena-results/"
    rules = resource("ArtifactsBucket", "AWS::S3::Bucket")["LifecycleConfiguration"]["Rules"]
    assert {rule["Prefix"] for rule in rules} >= {"runs/", "athena-results/"}
    assert not any(EXPORTS_PREFIX.startswith(rule["Prefix"]) for rule in rules)  # exports are the history

"""S3Artifacts on moto: JSON round trip, absent keys, paginated fetch of an output prefix."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import boto3
import pytest

from storagebench.adapters.aws.s3 import S3Artifacts
from storagebench.adapters.aws.settings import AwsSettings
from storagebench.core.errors import CollectError

REGION = "us-east-1"


@pytest.fixture
def artifacts(bucket: str) -> S3Artifacts:
    return S3Artifacts(boto3.client("s3", region_name=REGION), bucket, page_size=3)


def test_json_round_trip_and_uri(artifacts: S3Artifacts, bucket: str) -> None:
    document = {"run_id": "r1", "values": [1, 2.5, None], "nested": {"ok": True}}
    uri = artifacts.put_json("runs/r1/request.json", document)
    assert uri == f"s3://{bucket}/runs/r1/request.json"
    assert artifacts.uri("runs/r1/c1/agent/") == f"s3://{bucket}/runs/r1/c1/agent/"
    assert artifacts.get_json("runs/r1/request.json") == document
    head = artifacts.s3.head_object(Bucket=bucket, Key="runs/r1/request.json")
    assert head["ContentType"] == "application/json"


def test_absent_key_is_a_key_error(artifacts: S3Artifacts) -> None:
    with pytest.raises(KeyError, match=r"runs/none\.json"):
        artifacts.get_json("runs/none.json")


def test_fetch_downloads_every_object_under_the_prefix(
    artifacts: S3Artifacts, bucket: str, call_log: Any, tmp_path: Path
) -> None:
    s3 = artifacts.s3
    files = {f"step-{i:02d}/fio.json": json.dumps({"i": i}) for i in range(7)}
    files["manifest.json"] = '{"status": "ok"}'
    for name, body in files.items():
        s3.put_object(Bucket=bucket, Key=f"runs/r1/c1/agent/{name}", Body=body.encode())
    s3.put_object(Bucket=bucket, Key="runs/r1/c1/agent-other/x.json", Body=b"{}")  # a sibling prefix
    s3.put_object(Bucket=bucket, Key="runs/r1/c1/agent/../escape.json", Body=b"{}")
    # '//' after the prefix would make an absolute path of the rest (issue 27, 2)
    planted = tmp_path / "planted.json"
    s3.put_object(Bucket=bucket, Key=f"runs/r1/c1/agent/{planted}", Body=b"{}")
    s3.put_object(Bucket=bucket, Key="runs/r1/c1/agent/./dot.json", Body=b"{}")
    s3.put_object(Bucket=bucket, Key="runs/r1/c1/agent/folder/", Body=b"")
    log = call_log(s3)

    directory = artifacts.fetch("runs/r1/c1/agent")  # with or without the trailing slash

    fetched = {
        p.relative_to(directory).as_posix(): p.read_text() for p in directory.rglob("*") if p.is_file()
    }
    assert fetched == files
    assert log.count("ListObjectsV2") == 4  # 12 keys in pages of 3
    assert not (directory.parent / "escape.json").exists()
    assert not planted.exists()


@pytest.mark.parametrize(
    ("caps", "files", "size", "named"),
    [
        ({"max_objects": 5}, 6, 10, "more than 5 objects"),
        ({"max_bytes": 1 << 20}, 3, 400 << 10, "or 1 MiB (at least 3 objects, 1 MiB)"),
    ],
)
def test_fetch_refuses_a_flooded_prefix_before_downloading(
    bucket: str, call_log: Any, caps: dict[str, int], files: int, size: int, named: str
) -> None:
    artifacts = S3Artifacts(boto3.client("s3", region_name=REGION), bucket, **caps)
    for i in range(files):
        artifacts.s3.put_object(Bucket=bucket, Key=f"runs/r1/c1/agent/f{i}", Body=b"x" * size)
    log = call_log(artifacts.s3)
    with pytest.raises(CollectError, match=re.escape(named)) as caught:
        artifacts.fetch("runs/r1/c1/agent/")
    assert "stay in the bucket" in str(caught.value)
    assert log.count("GetObject") == 0  # nothing downloaded


def test_fetch_of_an_empty_prefix_is_an_empty_directory(artifacts: S3Artifacts) -> None:
    directory = artifacts.fetch("runs/r1/none/")
    assert directory.is_dir()
    assert list(directory.iterdir()) == []


def test_a_fetched_download_is_removed_when_its_block_ends(artifacts: S3Artifacts, bucket: str) -> None:
    # Collect runs in a Lambda whose /tmp (512 MiB by default) outlives one invocation when warm.
    artifacts.s3.put_object(Bucket=bucket, Key="runs/r1/c1/agent/manifest.json", Body=b"{}")
    with artifacts.fetched("runs/r1/c1/agent/") as directory:
        assert (directory / "manifest.json").read_text() == "{}"
    assert not directory.exists()
    with pytest.raises(RuntimeError, match="parse failed"), artifacts.fetched("runs/r1/c1/agent/") as again:
        raise RuntimeError("parse failed")
    assert not again.exists()


def test_from_settings_uses_the_stack_bucket(settings: AwsSettings, bucket: str) -> None:
    artifacts = S3Artifacts.from_settings(settings)
    artifacts.put_json("runs/x.json", {"a": 1})
    assert artifacts.get_json("runs/x.json") == {"a": 1}
    assert artifacts.bucket == bucket

"""Artifacts in the stack's S3 bucket: request and plan documents, the agent's raw output."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path, PurePosixPath
from typing import Any

from storagebench.adapters.aws.errors import ClientError, aws_call, error_code, workflow_error
from storagebench.adapters.aws.settings import AwsSettings
from storagebench.core.errors import CollectError, ProvisioningError

MISSING = frozenset({"NoSuchKey", "404", "NotFound"})


def json_body(document: Any) -> bytes:
    """The bytes ``put_json`` stores (so a caller can state their SHA-256)."""
    return json.dumps(document, indent=1, sort_keys=True).encode("utf-8")


class S3Artifacts:
    """``Artifacts`` on S3: keys are relative to the bucket, URIs are ``s3://bucket/key``."""

    def __init__(self, s3: Any, bucket: str, page_size: int | None = None) -> None:
        self.s3 = s3
        self.bucket = bucket
        self.page_size = page_size

    @classmethod
    def from_settings(cls, settings: AwsSettings) -> S3Artifacts:
        return cls(settings.client("s3"), settings.artifacts_bucket)

    def uri(self, key: str) -> str:
        return f"s3://{self.bucket}/{key}"

    def put_json(self, key: str, document: Any) -> str:
        body = json_body(document)
        with aws_call(f"s3 put {self.uri(key)}", ProvisioningError):
            self.s3.put_object(Bucket=self.bucket, Key=key, Body=body, ContentType="application/json")
        return self.uri(key)

    def put_text(self, key: str, text: str, content_type: str) -> str:
        with aws_call(f"s3 put {self.uri(key)}", ProvisioningError):
            self.s3.put_object(
                Bucket=self.bucket,
                Key=key,
                Body=text.encode("utf-8"),
                ContentType=f"{content_type}; charset=utf-8",
            )
        return self.uri(key)

    def get_json(self, key: str) -> Any:
        try:
            response = self.s3.get_object(Bucket=self.bucket, Key=key)
        except ClientError as exc:
            if error_code(exc) in MISSING:
                raise KeyError(key) from exc
            raise workflow_error(exc, f"s3 get {self.uri(key)}", CollectError) from exc
        return json.loads(response["Body"].read().decode("utf-8"))

    def fetch(self, prefix: str) -> Path:
        """Download every object under ``prefix`` into a new temporary directory (paginated).

        Paths below the prefix are kept; a key that would escape the directory (``..``) or
        names a "folder" placeholder is skipped. An empty prefix gives an empty directory:
        the collector reports missing output, not this adapter.
        """
        directory = Path(tempfile.mkdtemp(prefix="storagebench-artifacts-"))
        base = prefix if prefix.endswith("/") or not prefix else prefix + "/"
        pagination: dict[str, Any] = {"PageSize": self.page_size} if self.page_size else {}
        with aws_call(f"s3 fetch {self.uri(prefix)}", CollectError):
            pages = self.s3.get_paginator("list_objects_v2").paginate(
                Bucket=self.bucket, Prefix=base, PaginationConfig=pagination
            )
            for page in pages:
                for entry in page.get("Contents", []):
                    key = str(entry["Key"])
                    relative = PurePosixPath(key[len(base) :])
                    if key.endswith("/") or not relative.parts or ".." in relative.parts:
                        continue
                    local = directory.joinpath(*relative.parts)
                    local.parent.mkdir(parents=True, exist_ok=True)
                    self.s3.download_file(self.bucket, key, str(local))
        return directory

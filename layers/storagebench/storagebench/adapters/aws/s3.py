"""Artifacts in the stack's S3 bucket: request and plan documents, the agent's raw output."""

from __future__ import annotations

import json
import logging
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path, PurePosixPath
from typing import Any

from storagebench.adapters.aws.errors import ClientError, aws_call, error_code, workflow_error
from storagebench.adapters.aws.settings import AwsSettings
from storagebench.core.errors import CollectError, ProvisioningError

MISSING = frozenset({"NoSuchKey", "404", "NotFound"})
# What one instance's prefix may hold for Collect to download it: an agent writes about 30 files
# a step, and Collect's /tmp (Lambda's default 512 MB) receives them.
MAX_FETCH_OBJECTS = 20_000
MAX_FETCH_BYTES = 400 << 20
LOG = logging.getLogger(__name__)


def json_body(document: Any) -> bytes:
    """The bytes ``put_json`` stores (so a caller can state their SHA-256)."""
    return json.dumps(document, indent=1, sort_keys=True).encode("utf-8")


class S3Artifacts:
    """``Artifacts`` on S3: keys are relative to the bucket, URIs are ``s3://bucket/key``."""

    def __init__(
        self,
        s3: Any,
        bucket: str,
        page_size: int | None = None,
        max_objects: int = MAX_FETCH_OBJECTS,
        max_bytes: int = MAX_FETCH_BYTES,
    ) -> None:
        self.s3 = s3
        self.bucket = bucket
        self.page_size = page_size
        self.max_objects = max_objects
        self.max_bytes = max_bytes

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

    @contextmanager
    def fetched(self, prefix: str) -> Iterator[Path]:
        """``fetch`` for the ``with`` block: the download is removed when it ends (a warm Lambda
        keeps its /tmp, 512 MiB by default, across invocations)."""
        directory = self.fetch(prefix)
        try:
            yield directory
        finally:
            shutil.rmtree(directory, ignore_errors=True)

    def fetch(self, prefix: str) -> Path:
        """Download every object under ``prefix`` into a new temporary directory (paginated).

        What lies under an instance's prefix was written by the instance, so it is bounded before
        anything is downloaded: at most ``max_objects`` objects and ``max_bytes`` in all, else
        ``CollectError`` naming the figures (the objects stay in the bucket). Paths below the prefix
        are kept; a key whose path is not plainly relative (``..``, ``.``, an empty segment, as
        ``//`` would make an absolute path) or that names a "folder" placeholder is skipped, with
        a warning naming it. An empty prefix gives an empty directory: the collector reports
        missing output, not this adapter.
        """
        base = prefix if prefix.endswith("/") or not prefix else prefix + "/"
        wanted: list[tuple[str, PurePosixPath]] = []
        total = 0
        pagination: dict[str, Any] = {"PageSize": self.page_size} if self.page_size else {}
        with aws_call(f"s3 fetch {self.uri(prefix)}", CollectError):
            pages = self.s3.get_paginator("list_objects_v2").paginate(
                Bucket=self.bucket, Prefix=base, PaginationConfig=pagination
            )
            for page in pages:
                for entry in page.get("Contents", []):
                    key = str(entry["Key"])
                    relative = plain_relative(key[len(base) :])
                    if relative is None:
                        if not key.endswith("/"):
                            LOG.warning("skipped %s: not a plain path below %s", self.uri(key), base)
                        continue
                    wanted.append((key, relative))
                    total += int(entry.get("Size") or 0)
                    if len(wanted) > self.max_objects or total > self.max_bytes:
                        raise CollectError(
                            f"{self.uri(base)} holds more than {self.max_objects:,} objects or "
                            f"{self.max_bytes >> 20:,} MiB (at least {len(wanted):,} objects, "
                            f"{total >> 20:,} MiB): not downloaded; an agent writes about 30 files "
                            "a step, so this prefix was flooded; its objects stay in the bucket"
                        )
            directory = Path(tempfile.mkdtemp(prefix="storagebench-artifacts-"))
            for key, relative in wanted:
                local = directory.joinpath(*relative.parts)
                local.parent.mkdir(parents=True, exist_ok=True)
                self.s3.download_file(self.bucket, key, str(local))
        return directory


def plain_relative(path: str) -> PurePosixPath | None:
    """``path`` as a relative path whose every segment is a name, else None."""
    segments = path.split("/")
    if not path or any(segment in ("", ".", "..") for segment in segments):
        return None
    return PurePosixPath(*segments)

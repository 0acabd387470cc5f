"""The API's ``ReportLinks`` on S3: a presigned GET for an artifact that exists, or for each
artifact under a prefix (a run's exports)."""

from __future__ import annotations

from typing import Any

from storagebench.adapters.aws.errors import ClientError, aws_call, error_code, workflow_error
from storagebench.adapters.aws.s3 import MISSING
from storagebench.api.ports import ArtifactLink
from storagebench.core.errors import WorkflowError


class S3ReportLinks:
    def __init__(self, s3: Any, bucket: str) -> None:
        self.s3 = s3
        self.bucket = bucket

    def link(self, key: str, expires_s: int) -> str | None:
        try:
            self.s3.head_object(Bucket=self.bucket, Key=key)
        except ClientError as exc:
            if error_code(exc) in MISSING:
                return None
            raise workflow_error(exc, f"s3 head s3://{self.bucket}/{key}", WorkflowError) from exc
        return self._presigned(key, expires_s)

    def links_under(self, prefix: str, expires_s: int) -> list[ArtifactLink]:
        with aws_call(f"s3 list s3://{self.bucket}/{prefix}", WorkflowError):
            pages = self.s3.get_paginator("list_objects_v2").paginate(Bucket=self.bucket, Prefix=prefix)
            keys = sorted(str(o["Key"]) for page in pages for o in page.get("Contents") or [])
        return [ArtifactLink(key=key, url=self._presigned(key, expires_s)) for key in keys]

    def _presigned(self, key: str, expires_s: int) -> str:
        with aws_call(f"presign s3://{self.bucket}/{key}", WorkflowError):
            url: str = self.s3.generate_presigned_url(
                "get_object", Params={"Bucket": self.bucket, "Key": key}, ExpiresIn=expires_s
            )
        return url

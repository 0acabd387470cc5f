"""The API's ``ReportLinks`` on S3: a presigned GET for an artifact that exists."""

from __future__ import annotations

from typing import Any

from storagebench.adapters.aws.errors import ClientError, aws_call, error_code, workflow_error
from storagebench.adapters.aws.s3 import MISSING
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
        with aws_call(f"presign s3://{self.bucket}/{key}", WorkflowError):
            url: str = self.s3.generate_presigned_url(
                "get_object", Params={"Bucket": self.bucket, "Key": key}, ExpiresIn=expires_s
            )
        return url

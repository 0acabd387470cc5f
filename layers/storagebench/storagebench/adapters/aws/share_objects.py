"""``ShareObjects`` on S3: what a run's share wrote, found and deleted under its prefix."""

from __future__ import annotations

from typing import Any

from storagebench.adapters.aws.errors import aws_call
from storagebench.core.errors import ProvisioningError

DELETE_BATCH = 1000  # DeleteObjects' limit


class S3ShareObjects:
    def __init__(self, s3: Any) -> None:
        self.s3 = s3

    def _keys(self, bucket: str, prefix: str) -> list[str]:
        with aws_call(f"list s3://{bucket}/{prefix}", ProvisioningError):
            pages = self.s3.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix)
            return [str(o["Key"]) for page in pages for o in page.get("Contents", [])]

    def delete_prefix(self, bucket: str, prefix: str) -> int:
        if not prefix.endswith("/"):
            raise ValueError(f"prefix {prefix!r} must end with / (only a run's own folder is deleted)")
        keys = self._keys(bucket, prefix)
        for start in range(0, len(keys), DELETE_BATCH):
            batch = [{"Key": k} for k in keys[start : start + DELETE_BATCH]]
            with aws_call(f"delete objects under s3://{bucket}/{prefix}", ProvisioningError):
                answer = self.s3.delete_objects(Bucket=bucket, Delete={"Objects": batch, "Quiet": True})
            if answer.get("Errors"):
                first = answer["Errors"][0]
                raise ProvisioningError(
                    f"delete s3://{bucket}/{first.get('Key')}: {first.get('Code')}: {first.get('Message')}"
                )
        return len(keys)

    def count(self, bucket: str, prefix: str) -> int:
        return len(self._keys(bucket, prefix))

"""``QuotaReader`` on the Service Quotas API: an EC2 vCPU quota of the stack's account and Region.

GetServiceQuota answers the account's applied value; a quota the account never had applied answers
NoSuchResourceException, and GetAWSDefaultServiceQuota then gives AWS's default. What cannot be read
(throttled past botocore's retries, access denied, no endpoint) becomes ``QuotaNotReadError`` naming the
code, the Region and AWS's error: the dry run and Plan warn "quota not read: ..." and go on.
Each value is kept for the container's life (``CACHE_S``): Plan and the dry run read the same few
codes on every run, and a quota changes only when an increase is granted.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from botocore.exceptions import BotoCoreError, ClientError  # type: ignore[import-untyped, unused-ignore]

from storagebench.adapters.aws.errors import THROTTLING, error_code
from storagebench.adapters.aws.settings import AwsSettings
from storagebench.quotas.models import (
    QuotaAnswerError,
    QuotaNotReadError,
    QuotaOrigin,
    ServiceQuota,
    decode_quota,
)

__all__ = ["CACHE_S", "ServiceQuotasReader"]

SERVICE_CODE = "ec2"
CACHE_S = 300.0
NO_SUCH_QUOTA = "NoSuchResourceException"
DENIED = frozenset({"AccessDeniedException", "AccessDenied"})


def _why(exc: ClientError) -> str:
    code = error_code(exc)
    message = str(exc.response.get("Error", {}).get("Message", "")).strip()
    if code in THROTTLING:
        kind = "throttled"
    elif code in DENIED:
        kind = "access denied"
    else:
        kind = "no such quota" if code == NO_SUCH_QUOTA else "refused"
    return f"{kind}: {code}: {message}" if message else f"{kind}: {code}"


class ServiceQuotasReader:
    def __init__(self, client: Any, region: str, clock: Callable[[], float] = time.monotonic) -> None:
        self.client = client
        self.region = region
        self.clock = clock
        self._cache: dict[str, tuple[float, ServiceQuota]] = {}

    @classmethod
    def from_settings(cls, settings: AwsSettings) -> ServiceQuotasReader:
        return cls(settings.client("service-quotas"), settings.region)

    @property
    def source(self) -> str:
        return f"Service Quotas API, {self.region}"

    def vcpu_quota(self, code: str) -> ServiceQuota:
        kept = self._cache.get(code)
        if kept is not None and self.clock() - kept[0] < CACHE_S:
            return kept[1]
        answer, origin = self._read(code)
        try:
            quota = decode_quota(answer, code, origin, "the Service Quotas answer")
        except QuotaAnswerError as exc:
            raise QuotaNotReadError(code, self.region, str(exc)) from exc
        self._cache[code] = (self.clock(), quota)
        return quota

    def _read(self, code: str) -> tuple[Any, QuotaOrigin]:
        try:
            return self.client.get_service_quota(ServiceCode=SERVICE_CODE, QuotaCode=code), "applied"
        except ClientError as exc:
            if error_code(exc) != NO_SUCH_QUOTA:
                raise QuotaNotReadError(code, self.region, f"GetServiceQuota {_why(exc)}") from exc
        except BotoCoreError as exc:
            raise QuotaNotReadError(code, self.region, f"GetServiceQuota: {exc}") from exc
        try:
            answer = self.client.get_aws_default_service_quota(ServiceCode=SERVICE_CODE, QuotaCode=code)
        except ClientError as exc:
            raise QuotaNotReadError(code, self.region, f"GetAWSDefaultServiceQuota {_why(exc)}") from exc
        except BotoCoreError as exc:
            raise QuotaNotReadError(code, self.region, f"GetAWSDefaultServiceQuota: {exc}") from exc
        return answer, "aws-default"

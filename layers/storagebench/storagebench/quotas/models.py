"""A quota as Service Quotas answers it, decoded once, and the errors of reading one."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from storagebench.catalog.quota_models import QUOTA_CODE_PATTERN

QuotaOrigin = Literal["applied", "aws-default", "recorded"]


class ServiceQuota(BaseModel):
    """The ``Quota`` of a GetServiceQuota (or GetAWSDefaultServiceQuota) answer: what the checks read."""

    model_config = ConfigDict(frozen=True, extra="ignore", populate_by_name=True)

    service_code: Literal["ec2"] = Field(alias="ServiceCode")
    quota_code: str = Field(alias="QuotaCode", pattern=QUOTA_CODE_PATTERN)
    quota_name: str = Field(alias="QuotaName", min_length=1)
    value: float = Field(alias="Value", ge=0, allow_inf_nan=False)
    unit: str | None = Field(default=None, alias="Unit")
    origin: QuotaOrigin = Field(
        default="applied",
        description="applied: the account's value (GetServiceQuota); aws-default: AWS's default, the "
        "account has none of its own (GetAWSDefaultServiceQuota); recorded: a recorded answer",
    )


class QuotaNotReadError(Exception):
    """A quota the reader could not read (throttled, access denied, no answer): a warning, not a crash."""

    def __init__(self, code: str, where: str, reason: str) -> None:
        super().__init__(f"{code} in {where}: {reason}")
        self.code = code
        self.where = where
        self.reason = reason


class QuotaAnswerError(ValueError):
    """An answer that is not a GetServiceQuota answer; the message names the field, the value and
    what is allowed."""


def decode_quota(answer: Any, code: str, origin: QuotaOrigin, where: str) -> ServiceQuota:
    """The ``Quota`` of ``answer`` for quota ``code``; ``QuotaAnswerError`` naming the field
    (``<where>.Quota.Value``), its value and what is allowed."""
    if not isinstance(answer, Mapping) or not isinstance(answer.get("Quota"), Mapping):
        got = sorted(answer) if isinstance(answer, Mapping) else type(answer).__name__
        raise QuotaAnswerError(
            f'{where}.Quota: missing (got {got}); a GetServiceQuota answer {{"Quota": {{...}}}} expected'
        )
    try:
        quota = ServiceQuota.model_validate({**answer["Quota"], "origin": origin})
    except ValidationError as exc:
        first = exc.errors()[0]
        field = ".".join(str(part) for part in first["loc"])
        value = first.get("input") if first["type"] != "missing" else "missing"
        raise QuotaAnswerError(f"{where}.Quota.{field}: {value!r}: {first['msg']}") from None
    if quota.quota_code != code:
        raise QuotaAnswerError(
            f"{where}.Quota.QuotaCode: {quota.quota_code!r} answers another quota; {code!r} expected"
        )
    return quota

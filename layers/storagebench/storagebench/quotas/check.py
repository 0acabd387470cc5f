"""Each quota's need at once against the value a ``QuotaReader`` answers: ok, near (80 %), over."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from storagebench.catalog.quota_models import QuotaMarket
from storagebench.quotas.models import QuotaNotReadError
from storagebench.quotas.needs import QuotaNeed
from storagebench.quotas.ports import QuotaReader

NEAR_SHARE = 0.8  # a need of 80 % of its quota or more is warned about: other instances share it

QuotaStatus = Literal["ok", "near", "over", "not-read"]


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class QuotaLine(_Frozen):
    """One quota: the request's vCPUs at once against the account's quota."""

    code: str = Field(description="the Service Quotas code, e.g. L-1216C47A")
    name: str = Field(description="the quota's name, e.g. Running On-Demand Standard (...) instances")
    group: str = Field(description="the instance-family group, e.g. Standard")
    market: QuotaMarket
    needed_vcpus: int = Field(description="vCPUs the run needs at once under this quota")
    configs_at_once: int
    per_config: dict[str, int] = Field(description="config id -> its vCPUs under this quota")
    quota_vcpus: float | None = Field(default=None, description="the quota's value (None: not read)")
    origin: str | None = Field(
        default=None, description="applied (the account's), aws-default or recorded (None: not read)"
    )
    status: QuotaStatus = Field(
        description="ok; near: at least 80 % of the quota; over: more than the quota; not-read"
    )
    fitting_configs: int | None = Field(
        default=None, description="over: how many configs at once would fit (0: not even the largest)"
    )
    reason: str | None = Field(default=None, description="not-read: why")

    @property
    def share(self) -> float | None:
        if self.quota_vcpus is None:
            return None
        return self.needed_vcpus / self.quota_vcpus if self.quota_vcpus else float("inf")

    def describe(self) -> str:
        """The line for people: ``Running On-Demand Standard (...) instances (L-1216C47A): 1,536 vCPUs
        needed at once (3 configs), quota 5``."""
        configs = f"{self.configs_at_once} config{'s' if self.configs_at_once != 1 else ''}"
        head = f"{self.name} ({self.code}): {self.needed_vcpus:,} vCPUs needed at once ({configs})"
        if self.quota_vcpus is None:
            return f"{head}, quota not read: {self.reason}"
        origin = {"aws-default": ", AWS default", "recorded": ", recorded"}.get(self.origin or "", "")
        return f"{head}, quota {self.quota_vcpus:,.0f}{origin} ({_percent(self.share)})"


def _percent(share: float | None) -> str:
    if share is None or share == float("inf"):
        return "no quota"
    return f"{share * 100:,.0f} %"


class QuotaCheck(_Frozen):
    """The request's vCPU needs against the account's quotas, and where the quotas were read."""

    source: str = Field(description="where the quota values come from")
    refuses: bool = Field(description="true: a need over its quota refuses the run (false: local mode)")
    lines: list[QuotaLine]
    notes: list[str] = Field(default_factory=list, description="machines not counted, and why")


def check_quotas(needs: list[QuotaNeed], reader: QuotaReader, refuses: bool, notes: list[str]) -> QuotaCheck:
    """Read each needed quota once and judge its need; a quota that cannot be read is ``not-read``."""
    lines: list[QuotaLine] = []
    for need in needs:
        common = {
            "code": need.code,
            "name": need.name,
            "group": need.group,
            "market": need.market,
            "needed_vcpus": need.vcpus_at_once,
            "configs_at_once": need.configs_at_once,
            "per_config": need.per_config,
        }
        try:
            quota = reader.vcpu_quota(need.code)
        except QuotaNotReadError as exc:
            lines.append(QuotaLine(**common, status="not-read", reason=str(exc)))
            continue
        value = quota.value
        if need.vcpus_at_once > value:
            status: QuotaStatus = "over"
        elif need.vcpus_at_once >= NEAR_SHARE * value:
            status = "near"
        else:
            status = "ok"
        lines.append(
            QuotaLine(
                **{**common, "name": quota.quota_name},
                quota_vcpus=value,
                origin=quota.origin,
                status=status,
                fitting_configs=need.fitting(value) if status == "over" else None,
            )
        )
    return QuotaCheck(source=reader.source, refuses=refuses, lines=lines, notes=notes)

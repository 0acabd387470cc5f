"""The catalog's EC2 vCPU quota groups: which Service Quotas code bounds an instance type's vCPUs.

EC2 bounds running On-Demand instances, and open or running Spot requests, by the vCPUs of an
instance-family group (Standard A, C, D, H, I, M, R, T, Z; F; G and VT; ...), per account and Region.
The groups, their quota codes and their names are data (``catalog.json`` ``vcpu_quotas``), each
citing the AWS page that lists them; ``quotas`` reads the account's values through a port.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

QuotaMarket = Literal["on-demand", "spot"]
QUOTA_CODE_PATTERN = r"^L-[0-9A-F]{8}$"


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class QuotaRef(_Frozen):
    """One Service Quotas quota: its code, its name as AWS lists it, the default of a new account."""

    code: str = Field(pattern=QUOTA_CODE_PATTERN, description="the Service Quotas QuotaCode, e.g. L-1216C47A")
    name: str = Field(min_length=1, description="the QuotaName, as the Service Quotas console shows it")
    default_vcpus: float = Field(ge=0, description="a new account's value, as the source's table gives it")
    source: str


class VcpuQuotaGroup(_Frozen):
    """An instance-family group: the families it holds and its On-Demand and Spot quotas."""

    group: str = Field(min_length=1, description="the group's name, e.g. Standard")
    prefixes: list[str] = Field(
        min_length=1,
        description="instance family prefixes (the type's name before the dot starts with one); the "
        "longest prefix of any group wins, so inf2 is Inf, not Standard's i",
    )
    on_demand: QuotaRef
    spot: QuotaRef | None = Field(default=None, description="None: AWS lists no Spot quota for the group")
    source: str = Field(description="source of the family letters in the group")

    def quota(self, market: QuotaMarket) -> QuotaRef | None:
        return self.on_demand if market == "on-demand" else self.spot


class VcpuQuotas(_Frozen):
    service_code: Literal["ec2"] = "ec2"
    groups: list[VcpuQuotaGroup] = Field(min_length=1)

    @model_validator(mode="after")
    def _prefixes_unique(self) -> VcpuQuotas:
        seen: dict[str, str] = {}
        for group in self.groups:
            for prefix in group.prefixes:
                if prefix in seen:
                    raise ValueError(
                        f"vcpu_quotas: prefix {prefix!r} is in both {seen[prefix]} and {group.group}; "
                        "each family prefix belongs to one group"
                    )
                seen[prefix] = group.group
        return self

    def group_of(self, instance_type: str) -> VcpuQuotaGroup | None:
        """The group whose longest prefix starts the type's family (``u7i-12tb.224xlarge`` -> High
        Memory, ``im4gn.large`` -> Standard, ``inf2.xlarge`` -> Inf); None when no prefix does."""
        family = instance_type.partition(".")[0].lower()
        best: tuple[int, VcpuQuotaGroup] | None = None
        for group in self.groups:
            for prefix in group.prefixes:
                if family.startswith(prefix) and (best is None or len(prefix) > best[0]):
                    best = (len(prefix), group)
        return None if best is None else best[1]

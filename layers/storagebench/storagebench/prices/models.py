"""Prices as the cost model needs them: each one with its unit, source and date.

A ``PriceBook`` answers in USD for one region. Implementations: the AWS Price List API
(``adapters.aws.pricing``, cached at most a day) and the bundled dated snapshot
(``prices/snapshot.json``, for offline and local use). Every cost computed from a price carries
that price's source and date, so a figure can always be traced and re-checked.
"""

from __future__ import annotations

from typing import Literal, Protocol

from pydantic import BaseModel, ConfigDict, Field

PriceSource = Literal["price-list-api", "snapshot"]
HOURS_PER_MONTH = 730  # as AWS's pricing calculator converts hourly to monthly


class Price(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    usd: float = Field(ge=0)
    unit: str = Field(description="Hrs, GB-Mo, IOPS-Mo, MiBps-Mo, GB, Request, GB-Second, Transition")
    region: str
    source: PriceSource
    as_of: str = Field(description="ISO date the price was read (API) or published (snapshot)")
    sku: str | None = None
    description: str | None = None


class PriceTier(BaseModel):
    """A price that applies from ``begin`` (inclusive) to ``end`` (exclusive, None = no end) units."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    begin: float = Field(ge=0)
    end: float | None = None
    price: Price


class PriceNotFound(LookupError):  # noqa: N818 - reads as what happened: no price was found
    """No price for this product in this region (the message names what was asked)."""


class PriceBook(Protocol):
    region: str

    def instance_hour(self, instance_type: str) -> Price:
        """On-demand Linux, shared tenancy, per hour."""

    def ebs_storage(self, volume_type: str) -> Price:
        """Per GB-month of provisioned size."""

    def ebs_iops(self, volume_type: str) -> list[PriceTier]:
        """Per provisioned IOPS-month, by tier of the IOPS count: io1 one tier; io2 three
        (to 32,000, to 64,000, above); gp3 one tier starting at its 3,000 included IOPS."""

    def ebs_throughput(self, volume_type: str) -> list[PriceTier]:
        """gp3: per MiB/s-month above the 125 MiB/s included (one tier starting at 125)."""

    def efs_storage(self, one_zone: bool) -> Price:
        """EFS Standard (or One Zone) per GB-month."""

    def efs_provisioned_throughput(self) -> Price:
        """Per MiB/s-month of provisioned throughput above what the stored data includes."""

    def efs_elastic_transfer(self, direction: Literal["read", "write"]) -> Price:
        """Elastic throughput, per GB transferred."""

    def fsx_lustre_storage(self, deployment_type: str, per_unit_throughput: int | None) -> Price:
        """FSx for Lustre per GB-month, by deployment type and (persistent) throughput tier."""

    def stepfunctions_transition(self) -> Price:
        """Standard workflow, per state transition."""

    def lambda_gb_second(self, architecture: Literal["x86_64", "arm64"]) -> Price:
        """Lambda compute per GB-second."""

    def lambda_request(self) -> Price:
        """Lambda per request."""

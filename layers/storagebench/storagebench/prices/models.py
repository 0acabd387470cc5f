"""Prices as the cost model needs them: each one with its unit, source and date.

A ``PriceBook`` answers in USD for one region. Implementations: the AWS Price List API
(``adapters.aws.pricing``, cached at most a day) and the bundled dated snapshot
(``prices/snapshot.json``, for offline and local use). Every cost computed from a price carries
that price's source and date, so a figure can always be traced and re-checked.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

PriceSource = Literal["price-list-api", "snapshot", "spot-price-history", "spot-snapshot"]
"""price-list-api and snapshot: on-demand prices; spot-price-history: the Spot price an instance paid
(DescribeSpotPriceHistory, its zone, its lifetime); spot-snapshot: the bundled dated Spot estimate."""
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
    unverified: str | None = Field(
        default=None, description="why the figure has no primary source (the snapshot's note); None: verified"
    )


class PriceTier(BaseModel):
    """A price that applies from ``begin`` (inclusive) to ``end`` (exclusive, None = no end) units."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    begin: float = Field(ge=0)
    end: float | None = None
    price: Price


class PriceNotFound(LookupError):  # noqa: N818 - reads as what happened: no price was found
    """No price for this product in this region (the message names what was asked)."""

"""What the cost model asks of prices: one region's answer to a product key.

Implementations: the AWS Price List API (``adapters.aws.pricing``, cached at most a day), the
bundled dated snapshot (``prices.snapshot``) and the fallback of the one to the other.
"""

from __future__ import annotations

from typing import Protocol, overload

from storagebench.prices.models import Price, PriceTier
from storagebench.prices.products import PriceKey, TierKey


class PriceBook(Protocol):
    """Prices of one region. What each product is (and its dimensions) is ``prices.products``."""

    region: str

    @overload
    def price(self, key: TierKey) -> list[PriceTier]: ...

    @overload
    def price(self, key: PriceKey) -> Price: ...

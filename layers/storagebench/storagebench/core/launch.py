"""EC2 launch conventions every launcher shares: device names, the idempotency token, the markets."""

from __future__ import annotations

import hashlib
from typing import Literal, get_args

ROOT_DEVICE = "/dev/xvda"  # Amazon Linux 2023's root device name
DATA_DEVICE_LETTERS = "fghijklmnopqrstuvwxyz"  # /dev/sdf../dev/sdz, the names AWS recommends for data volumes

Market = Literal["spot", "on-demand"]
"""How one instance is bought."""
Purchase = Literal["spot", "on-demand", "spot-then-on-demand"]
"""How a config's instances are bought over its attempts (``request.purchase.market_for``)."""
MARKETS: tuple[Market, ...] = get_args(Market)
PURCHASES: tuple[Purchase, ...] = get_args(Purchase)
DEFAULT_PURCHASE: Purchase = "on-demand"


def client_token(run_id: str, config_id: str) -> str:
    """Same run and config, same token: a retried RunInstances returns the first instance."""
    return hashlib.sha256(f"storagebench:{run_id}:{config_id}".encode()).hexdigest()[:64]

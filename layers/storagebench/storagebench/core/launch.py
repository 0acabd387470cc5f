"""EC2 launch conventions every launcher shares: device names and the idempotency token."""

from __future__ import annotations

import hashlib

ROOT_DEVICE = "/dev/xvda"  # Amazon Linux 2023's root device name
DATA_DEVICE_LETTERS = "fghijklmnopqrstuvwxyz"  # /dev/sdf../dev/sdz, the names AWS recommends for data volumes


def client_token(run_id: str, config_id: str) -> str:
    """Same run and config, same token: a retried RunInstances returns the first instance."""
    return hashlib.sha256(f"storagebench:{run_id}:{config_id}".encode()).hexdigest()[:64]

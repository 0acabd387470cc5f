"""Pieces of benchmark requests that several tiers write the same way."""

from __future__ import annotations

from typing import Any


def file_gateway(
    target_id: str = "share",
    *,
    instance_type: str = "m5.xlarge",
    disk_type: str = "gp3",
    cache_gib: int = 150,
    **fields: Any,
) -> dict[str, Any]:
    """A file gateway target: the appliance's instance type, its 80 GiB root disk and one cache disk."""
    return {
        "id": target_id,
        "kind": "file_gateway",
        "gateway_instance_type": instance_type,
        "root_volume": {"type": disk_type, "size_gib": 80},
        "cache_volumes": [{"type": disk_type, "size_gib": cache_gib}],
        **fields,
    }

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


def controllers(count: int, *, targets: list[dict[str, Any]] | None = None, **fields: Any) -> dict[str, Any]:
    """A node group of ``count`` r5b.4xlarge controllers, as the virtual SAN study's: each with one
    500 GiB io2 volume at 16,000 IOPS (``data``) unless ``targets`` says otherwise."""
    data = {"id": "data", "kind": "ebs", "type": "io2", "size_gib": 500, "iops": 16000}
    return {
        "role": "controller",
        "count": count,
        "instance_type": "r5b.4xlarge",
        "targets": [data] if targets is None else targets,
        **fields,
    }


def virtual_san(nodes: list[dict[str, Any]], **fields: Any) -> dict[str, Any]:
    """The virtual SAN config ``vsan``: a c5.4xlarge client measuring /mnt/vsan, served by ``nodes``."""
    return {
        "id": "vsan",
        "instance_type": "c5.4xlarge",
        "targets": [{"id": "vsan", "kind": "local", "path": "/mnt/vsan"}],
        "nodes": nodes,
        **fields,
    }

"""Storage and instance catalog: AWS rules, performance envelopes, each value sourced."""

from storagebench.catalog.loader import (
    architecture,
    closest_instance_types,
    ebs_volume_type,
    instance_type,
    load_catalog,
    unknown_instance_type,
)
from storagebench.catalog.models import Catalog, EbsVolumeType, InstanceType

__all__ = [
    "Catalog",
    "EbsVolumeType",
    "InstanceType",
    "architecture",
    "closest_instance_types",
    "ebs_volume_type",
    "instance_type",
    "load_catalog",
    "unknown_instance_type",
]

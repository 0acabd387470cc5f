"""Storage and instance catalog: AWS rules, performance envelopes, each value sourced."""

from storagebench.catalog.loader import architecture, ebs_volume_type, instance_type, load_catalog
from storagebench.catalog.models import Catalog, EbsVolumeType, InstanceType

__all__ = [
    "Catalog",
    "EbsVolumeType",
    "InstanceType",
    "architecture",
    "ebs_volume_type",
    "instance_type",
    "load_catalog",
]

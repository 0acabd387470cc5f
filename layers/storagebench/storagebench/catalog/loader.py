"""Load the bundled catalog once per process."""

from __future__ import annotations

from functools import cache
from importlib import resources

from storagebench.catalog.models import Catalog, EbsVolumeType, InstanceType


@cache
def load_catalog() -> Catalog:
    text = resources.files("storagebench.catalog").joinpath("catalog.json").read_text(encoding="utf-8")
    return Catalog.model_validate_json(text)


def ebs_volume_type(name: str) -> EbsVolumeType:
    """The catalog entry of an EBS volume type; KeyError names the allowed types."""
    types = load_catalog().ebs
    if name not in types:
        raise KeyError(f"unknown EBS volume type {name!r}; allowed: {', '.join(types)}")
    return types[name]


def instance_type(name: str) -> InstanceType | None:
    """The catalog entry of an instance type, or None when the catalog does not know it."""
    return load_catalog().instances.get(name)

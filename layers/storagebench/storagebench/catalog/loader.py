"""Load the bundled catalog once per process."""

from __future__ import annotations

import re
from functools import cache
from importlib import resources

from storagebench.catalog.models import Architecture, Catalog, EbsVolumeType, InstanceType

_GRAVITON = re.compile(r"^(a1|[a-z]+\d+[a-z]*g[a-z]*)\.")  # a1: first Graviton; c7g, m6gd, r8g, ...


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


def architecture(name: str) -> Architecture:
    """The instance type's architecture: the catalog's, else arm64 for Graviton names."""
    spec = instance_type(name)
    if spec is not None:
        return spec.arch
    return "arm64" if _GRAVITON.match(name) else "x86_64"

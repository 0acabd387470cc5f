"""Load the bundled catalog once per process."""

from __future__ import annotations

import difflib
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


def closest_instance_types(name: str, limit: int = 3) -> list[str]:
    """The catalog's instance types nearest to ``name``: its own family first (``c5.4xlarg`` ->
    c5.4xlarge, c5.2xlarge, ...), then the closest spellings of other families (``c5d.large`` -> c5.large)."""
    known = sorted(load_catalog().instances)
    family, _, size = name.partition(".")
    same_family = [t for t in known if t.partition(".")[0] == family]
    sizes = [t.partition(".")[2] for t in same_family]
    ranked = (
        [f"{family}.{s}" for s in difflib.get_close_matches(size, sizes, n=limit, cutoff=0.0)]
        if sizes
        else []
    )
    others = [t for t in known if t not in ranked]
    ranked += difflib.get_close_matches(name, others, n=limit, cutoff=0.6)
    return ranked[:limit]


def instance_families() -> list[str]:
    """The instance families the catalog knows (c5, m7g, ...), for messages that list them."""
    return sorted({t.partition(".")[0] for t in load_catalog().instances})


def unknown_instance_type(name: str) -> str | None:
    """Why ``name`` cannot be used (None when the catalog knows it): its EBS limits, architecture and
    price would be unknown. The message names the closest known types."""
    if name in load_catalog().instances:
        return None
    closest = closest_instance_types(name)
    hint = (
        f"did you mean {', '.join(closest)}?"
        if closest
        else f"the catalog knows the families {', '.join(instance_families())}"
    )
    return (
        f"not in the catalog (its EBS limits, architecture and price are unknown); {hint} "
        "(catalog/catalog.json lists every type)"
    )


def architecture(name: str) -> Architecture:
    """The instance type's architecture: the catalog's, else arm64 for Graviton names."""
    spec = instance_type(name)
    if spec is not None:
        return spec.arch
    return "arm64" if _GRAVITON.match(name) else "x86_64"

"""The catalog's images and what each can install agree with the agent's package table."""

from __future__ import annotations

import pytest

from storagebench.catalog.images import image_kind, image_problem, image_ref, missing_tool, operating_system
from storagebench.catalog.loader import architecture, load_catalog
from storagebench.protocol.packages import PACKAGES


def test_every_package_gap_of_the_agent_has_a_sourced_rule_and_nothing_else_does() -> None:
    catalog = load_catalog()
    families = {spec.family for spec in catalog.images.values()}
    gaps = {
        (tool, family)
        for tool, by_family in PACKAGES.items()
        for family, names in by_family.items()
        if names is None
    }
    rules = {(tool, family) for tool, by_family in catalog.package_rules.items() for family in by_family}
    assert gaps == rules
    assert families <= {family for by_family in PACKAGES.values() for family in by_family}


@pytest.mark.parametrize("name", sorted(load_catalog().images))
def test_every_catalog_image_resolves_for_both_architectures(name: str) -> None:
    for arch in ("x86_64", "arm64"):
        assert image_problem(name, arch) is None
        ref = image_ref(name, arch)
        assert ref.owners and (ref.ssm_parameter or ref.name_pattern)
        assert ("arm64" in (ref.ssm_parameter or ref.name_pattern or "")) == (arch == "arm64")


@pytest.mark.parametrize(
    ("value", "kind"),
    [
        ("al2023", "named"),
        ("ami-0123456789abcdef0", "ami"),
        ("/aws/service/debian/release/12/latest/amd64", "ssm"),
        ("ubuntu", "unknown"),
        ("ami-xyz", "unknown"),
        # a trailing newline is not part of an id or a path (issue 27, 10): Python's $ allowed it
        ("ami-0123456789abcdef0\n", "unknown"),
        ("/aws/service/debian/release/12/latest/amd64\n", "unknown"),
    ],
)
def test_image_kinds(value: str, kind: str) -> None:
    assert image_kind(value) == kind


def test_problems_name_the_rule_and_the_way_out() -> None:
    unknown = image_problem("centos-7", "x86_64")
    assert unknown is not None and "al2023" in unknown.allowed and "ami-" in unknown.allowed
    foreign = image_problem("/my/own/ami", "x86_64")
    assert foreign is not None and "/storagebench/" in foreign.allowed
    assert image_problem("/storagebench/images/base", "x86_64") is None
    btrfs = missing_tool("al2023", "btrfs")
    assert btrfs is not None and "compare-with-al2" in btrfs.reason and "debian-12" in btrfs.allowed
    lustre = missing_tool("debian-12", "lustre")
    assert lustre is not None and "install-lustre-client" in lustre.reason and "al2023" in lustre.allowed
    assert missing_tool("debian-12", "btrfs") is None
    assert missing_tool("ami-0123456789abcdef0", "btrfs") is None  # known only on the instance
    assert operating_system("rhel-9") == "RHEL" and operating_system("ubuntu-24.04") == "Linux"


def test_architecture_follows_the_catalog_then_the_graviton_naming() -> None:
    assert architecture("c7g.large") == "arm64"
    assert architecture("c5.2xlarge") == "x86_64"
    assert architecture("r8g.medium") == "arm64"  # not in the catalog: by name

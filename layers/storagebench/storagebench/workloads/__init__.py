"""Named, documented workload profiles and their expansion into agent phases."""

from storagebench.workloads.library import PROFILES, SUITES, get_profile
from storagebench.workloads.profile import (
    Profile,
    TargetContext,
    Variant,
    build_phases,
    check_params,
    variant_count,
    variants,
)

__all__ = [
    "PROFILES",
    "SUITES",
    "Profile",
    "TargetContext",
    "Variant",
    "build_phases",
    "check_params",
    "get_profile",
    "variant_count",
    "variants",
]

"""AWS's CreateVolume rules for one EBS volume (a data target, a root volume, a gateway's disk):
sizes, provisioned IOPS per GiB, gp3 throughput per IOPS, from the catalog."""

from __future__ import annotations

from storagebench.catalog import ebs_volume_type
from storagebench.catalog.models import EbsVolumeType
from storagebench.request.problems import Problems, fmt_int


def _iops_bounds(spec: EbsVolumeType, size_gib: int) -> tuple[int, int]:
    """Allowed provisioned IOPS for a size: the ratio binds above what the type includes."""
    assert spec.iops is not None
    high = spec.iops.max
    if spec.iops.max_per_gib is not None:
        by_ratio = int(spec.iops.max_per_gib * size_gib)
        high = min(high, max(by_ratio, int(spec.included_iops or 0)))
    return spec.iops.min, max(high, spec.iops.min)


def check_ebs(
    problems: Problems, type_: str, size_gib: int, iops: int | None, throughput: int | None
) -> None:
    """AWS's CreateVolume rules for one volume (root or data), located at its fields."""
    spec = ebs_volume_type(type_)
    size = spec.size_gib
    if not size.min <= size_gib <= size.max:
        problems.add(
            ("size_gib",), size_gib, f"{type_} volumes are {fmt_int(size.min)}..{fmt_int(size.max)} GiB"
        )
    if spec.iops is None:
        if iops is not None:
            how = {
                "gp2": "3 per GiB, at least 100",
                "st1": "throughput-based",
                "sc1": "throughput-based",
                "standard": "about 100",
            }.get(type_, "fixed")
            problems.add(("iops",), iops, f"cannot be provisioned on {type_} (its IOPS are {how}); remove it")
    elif iops is None:
        if spec.iops.required:
            low, high = _iops_bounds(spec, size_gib)
            problems.add(
                ("iops",),
                None,
                f"required for {type_}: {fmt_int(low)}..{fmt_int(high)} IOPS for {fmt_int(size_gib)} GiB",
                missing=True,
            )
    else:
        low, high = _iops_bounds(spec, size_gib)
        if not low <= iops <= high:
            ratio = f"{fmt_int(spec.iops.max_per_gib)} per GiB, " if spec.iops.max_per_gib else ""
            problems.add(
                ("iops",),
                iops,
                f"{type_} allows {fmt_int(low)}..{fmt_int(high)} IOPS for "
                f"{fmt_int(size_gib)} GiB ({ratio}at most {fmt_int(spec.iops.max)})",
            )
    rule = spec.throughput_mibps
    if rule is None:
        if throughput is not None:
            problems.add(
                ("throughput_mibps",), throughput, f"can only be provisioned on gp3, not {type_}; remove it"
            )
    elif throughput is not None:
        effective_iops = iops if iops is not None else (spec.iops.default if spec.iops else None) or 0
        high_tp = rule.max
        if rule.max_per_iops is not None:
            high_tp = min(high_tp, max(rule.min, rule.max_per_iops * effective_iops))
        if not rule.min <= throughput <= high_tp:
            per = (
                f" ({rule.max_per_iops} MiB/s per IOPS: {fmt_int(effective_iops)} IOPS allow "
                f"{fmt_int(high_tp)})"
                if rule.max_per_iops and high_tp < rule.max
                else ""
            )
            problems.add(
                ("throughput_mibps",),
                throughput,
                f"{type_} allows {fmt_int(rule.min)}..{fmt_int(high_tp)} MiB/s{per}",
            )

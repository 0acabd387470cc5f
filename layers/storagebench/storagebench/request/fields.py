"""The field types and limits the request's models share: id, instance type, region, snapshot and
path patterns, EBS volume types, file systems, and what only the matrix expansion may set."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import StringConstraints

SLUG_PATTERN = r"^[a-z0-9][a-z0-9-]{0,62}$"
Slug = Annotated[str, StringConstraints(pattern=SLUG_PATTERN)]
INSTANCE_TYPE_PATTERN = r"^[a-z][a-z0-9-]*\.[a-z0-9-]+$"
REGION_PATTERN = r"^[a-z]{2}(-gov|-iso[a-z]?)?-[a-z]+-\d{1,2}$"
SNAPSHOT_PATTERN = r"^snap-[0-9a-f]{8,17}$"
LOCAL_PATH_PATTERN = r"^/[^\x00-\x1f\x7f]*$"

EbsType = Literal["gp2", "gp3", "io1", "io2", "st1", "sc1", "standard"]
Filesystem = Literal["xfs", "ext4", "btrfs", "raw"]
MAX_DATA_VOLUMES = 21  # /dev/sdf../dev/sdz, AWS's recommended names for EBS data volumes


def expansion_only(value: Any, kind: type) -> Any:
    """What only the matrix expansion sets arrives as its own Python objects, which no JSON
    document can carry: anything else was written by a user and is refused."""
    if value is not None and not isinstance(value, kind):
        raise ValueError("set by the matrix expansion only; remove it")
    return value

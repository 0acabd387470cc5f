"""Which image a config boots, how a launch finds it, and what that image can run.

A config names its image one of three ways:

* a catalog name (``al2023``, ``ubuntu-24.04``, ``ubuntu-22.04``, ``debian-12``, ``rhel-9``):
  resolved for the instance type's architecture from AWS's public SSM parameters, or (Red Hat
  publishes none) from the newest image of Red Hat's account whose name matches; the catalog
  knows its distribution, so validation checks what the config needs against it;
* an AMI id (``ami-...``): launched as given; its distribution is learnt on the instance;
* an SSM parameter path holding an AMI id: AWS's public ones (``/aws/service/...``) or the
  account's own under ``/storagebench/`` (the only paths the Provision role may read).

What an image family cannot install is ``storagebench.protocol.packages.PACKAGES`` (the table the
agent installs from) read with the catalog's ``package_rules`` for the source of each gap, so
the agent and the validation cannot disagree.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from storagebench.catalog.loader import load_catalog
from storagebench.catalog.models import Architecture, ImageSpec
from storagebench.core.state import ImageRef
from storagebench.protocol.packages import PACKAGES

DEFAULT_IMAGE = "al2023"
AMI_ID = re.compile(r"ami-[0-9a-f]{8,17}")  # fullmatch: "$" would let a trailing newline through
# The SSM paths the Provision role may read (template.yaml, ProvisionFunction, Sid ImageParameters):
# the public AMI parameters of the catalog's publishers and the account's own under /storagebench/.
SSM_PREFIXES = (
    "/aws/service/ami-amazon-linux-latest/",
    "/aws/service/canonical/ubuntu/server/",
    "/aws/service/debian/release/",
    "/storagebench/",
)
SSM_PATH = re.compile(r"/[A-Za-z0-9_.\-/]{1,1010}")
TOOL_LABELS = {
    "fio": "fio",
    "xfs": "XFS (xfsprogs)",
    "ext4": "ext4 (e2fsprogs)",
    "btrfs": "btrfs (btrfs-progs)",
    "mdadm": "RAID0 (mdadm)",
    "nfs": "an NFS client",
    "lustre": "the Lustre client",
}


@dataclass(frozen=True)
class ImageProblem:
    """Why an image cannot serve a config, and what would."""

    reason: str
    allowed: str


def named_images() -> dict[str, ImageSpec]:
    return dict(load_catalog().images)


def image_kind(value: str) -> str:
    """``named``, ``ami`` or ``ssm`` (``unknown`` for anything else)."""
    if value in load_catalog().images:
        return "named"
    if AMI_ID.fullmatch(value):
        return "ami"
    if SSM_PATH.fullmatch(value):
        return "ssm"
    return "unknown"


def image_problem(value: str, architecture: Architecture) -> ImageProblem | None:
    """Whether ``value`` names an image a launch of that architecture can resolve."""
    images = load_catalog().images
    kind = image_kind(value)
    if kind == "unknown":
        return ImageProblem(
            "is not a catalog image, an AMI id or an SSM parameter path",
            f"one of {', '.join(images)}, ami-<8 to 17 hex digits>, or a parameter under "
            f"{', '.join(SSM_PREFIXES)}",
        )
    if kind == "ssm" and not value.startswith(SSM_PREFIXES):
        return ImageProblem(
            "is an SSM parameter storagebench may not read",
            f"a parameter under {', '.join(SSM_PREFIXES)}",
        )
    if kind == "named" and architecture not in images[value].architectures:
        others = [name for name, spec in images.items() if architecture in spec.architectures]
        return ImageProblem(
            f"has no {architecture} image ({images[value].title} is published for "
            f"{', '.join(images[value].architectures)})",
            f"an {architecture} image: {', '.join(others)}",
        )
    return None


def missing_tool(value: str, tool: str) -> ImageProblem | None:
    """Whether a named image's distribution ships ``tool``; None for AMI ids and parameters
    (their distribution is known only on the instance, where the agent names what is missing)."""
    catalog = load_catalog()
    spec = catalog.images.get(value)
    if spec is None or PACKAGES[tool].get(spec.family) is not None:
        return None
    source = catalog.sources[catalog.package_rules[tool][spec.family]]
    having = [name for name, other in catalog.images.items() if PACKAGES[tool].get(other.family)]
    return ImageProblem(
        f"{spec.title} ships no package for {TOOL_LABELS[tool]} ({source.title}, {source.url})",
        f"an image that has it: {', '.join(having)}" if having else "no catalog image has it",
    )


def image_ref(value: str, architecture: Architecture) -> ImageRef:
    """How a launch finds the image (call after :func:`image_problem` said none)."""
    spec = load_catalog().images.get(value)
    if spec is not None:
        if spec.ssm_parameters:
            return ImageRef(label=value, ssm_parameter=spec.ssm_parameters[architecture], owners=spec.owners)
        return ImageRef(label=value, name_pattern=spec.name_patterns[architecture], owners=spec.owners)
    if AMI_ID.fullmatch(value):
        return ImageRef(label=value, ami_id=value)
    return ImageRef(label=value, ssm_parameter=value)


def operating_system(value: str) -> str:
    """The Price List operating system of an image: a named image's own; ``Linux`` otherwise
    (an AMI id or a parameter may carry a licence charge the catalog cannot know)."""
    spec = load_catalog().images.get(value)
    return spec.operating_system if spec is not None else "Linux"

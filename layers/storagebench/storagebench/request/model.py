"""The benchmark request: the one document the API, the schedules and the CLI accept.

Structure is checked by the field types; AWS's rules (sizes, IOPS:GiB ratios, gp3
throughput per IOPS, which kinds need which fields) come from the catalog and are checked by
the model validators, each problem located at its field so the user sees
``configs[1].targets[0].iops: ...`` with the value and the allowed range. Nothing is launched
from a request that does not validate.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import Field, StringConstraints, field_validator, model_validator
from pydantic.json_schema import SkipJsonSchema

from storagebench.catalog import (
    architecture,
    ebs_volume_type,
    instance_type,
    load_catalog,
    unknown_instance_type,
)
from storagebench.catalog.envelope import TargetEnvelope, target_envelope
from storagebench.catalog.images import DEFAULT_IMAGE, image_problem, missing_tool
from storagebench.catalog.models import EbsVolumeType
from storagebench.request.command_needs import command_need_problems
from storagebench.request.matrix_models import MatrixInvalid, MatrixOrigin, MatrixValue, SkippedPoint
from storagebench.request.mount_options import FAMILIES, mount_options_problem
from storagebench.request.node_loss import NODE_LOSS_DESCRIPTION, NodeLossSpec, node_loss_problems
from storagebench.request.plan_size import plan_size_problems
from storagebench.request.prewarm import Prewarm
from storagebench.request.problems import Problems, fmt_int
from storagebench.request.purchase import PURCHASE_DESCRIPTION, Purchase
from storagebench.request.references import default_target_id, reference_problems
from storagebench.request.repetitions import (
    REPETITIONS_DESCRIPTION,
    STEADY_STATE_DESCRIPTION,
    Repetitions,
    SteadyState,
    steady_state_problems,
)
from storagebench.request.requirements import MAX_LENGTH as REQUIREMENT_LENGTH
from storagebench.request.requirements import METRICS as REQUIREMENT_METRICS
from storagebench.request.rules import RequestModel, rule
from storagebench.request.tags import ALLOWED as TAG_CHARACTERS
from storagebench.request.tags import MAX_USER_TAGS, tag_problems
from storagebench.request.topology import (
    CLIENT_ROLE,
    MAX_CLIENTS,
    MAX_NODE_GROUPS,
    MAX_NODES,
    MAX_NODES_PER_GROUP,
    PLACEMENT_DESCRIPTION,
    PORT_PATTERN,
    PORTS_DESCRIPTION,
    SHARED_KINDS,
    Placement,
    multi_client_problems,
    parse_port,
)
from storagebench.workloads import SUITES, get_profile
from storagebench.workloads.naming import workload_name
from storagebench.workloads.profile import ParamsError, check_params

SLUG_PATTERN = r"^[a-z0-9][a-z0-9-]{0,62}$"
Slug = Annotated[str, StringConstraints(pattern=SLUG_PATTERN)]
INSTANCE_TYPE_PATTERN = r"^[a-z][a-z0-9-]*\.[a-z0-9-]+$"
REGION_PATTERN = r"^[a-z]{2}(-gov|-iso[a-z]?)?-[a-z]+-\d{1,2}$"
SNAPSHOT_PATTERN = r"^snap-[0-9a-f]{8,17}$"
LOCAL_PATH_PATTERN = r"^/[^\x00-\x1f\x7f]*$"

EbsType = Literal["gp2", "gp3", "io1", "io2", "st1", "sc1", "standard"]
Filesystem = Literal["xfs", "ext4", "btrfs", "raw"]
MAX_CONFIGS = 500  # up to 40 run in the inline Map, more in the Distributed Map (one child each)
MAX_CONCURRENCY = 40  # configs at once, on either Map (the stack's guardrails cap it lower)
MAX_DATA_VOLUMES = 21  # /dev/sdf../dev/sdz, AWS's recommended names for EBS data volumes
# Targets billed outside the config (a filer, a directory): nothing of theirs can back a local path.
UNBILLED_KINDS = ("local", "nfs")


class _Model(RequestModel):
    """This module's models: strict, no unknown fields, ``@rule`` problems raised together."""


def expansion_only(value: Any, kind: type) -> Any:
    """What only the matrix expansion sets arrives as its own Python objects, which no JSON
    document can carry: anything else was written by a user and is refused."""
    if value is not None and not isinstance(value, kind):
        raise ValueError("set by the matrix expansion only; remove it")
    return value


# ------------------------------------------------------------------------- EBS rules


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


class RootVolume(_Model):
    """The instance's boot volume: priced with the config, as the File Gateway study did."""

    type: EbsType = "gp3"
    size_gib: int = Field(default=8, ge=1)
    iops: int | None = Field(default=None, ge=1)
    throughput_mibps: int | None = Field(default=None, ge=1)
    encrypted: bool = True

    @rule("type", "size_gib", "iops", "throughput_mibps")
    def _aws_rules(self, problems: Problems) -> None:
        if self.type in ("st1", "sc1"):
            message = "st1 and sc1 cannot be boot volumes; use gp3, gp2, io1, io2 or standard"
            problems.add(("type",), self.type, message)
            return
        check_ebs(problems, self.type, self.size_gib, self.iops, self.throughput_mibps)


# ------------------------------------------------------------------------- targets


class _Target(_Model):
    id: Annotated[str, StringConstraints(pattern=r"^[a-z][a-z0-9-]{0,30}$")] | None = Field(
        default=None, description="names the target in workloads and results; defaults to <kind><position>"
    )

    @rule("id")
    def _not_the_root_volume(self, problems: Problems) -> None:
        """``root`` names each machine's root volume in costs (storage only leaves it out)."""
        if self.id == "root":
            problems.add(("id",), self.id, "reserved for the machine's root volume; choose another id")

    @rule("kind", "mount_options", "filesystem")
    def _mount_options(self, problems: Problems) -> None:
        """Mount options go through an allow-list per file system (``request.mount_options``)."""
        options = getattr(self, "mount_options", None)
        kind = getattr(self, "kind", "")
        family = {"efs": "nfs", "nfs": "nfs", "file_gateway": "nfs", "fsx_lustre": "lustre"}.get(
            kind, getattr(self, "filesystem", None)
        )
        if options and family in FAMILIES:
            problem = mount_options_problem(options, family)
            if problem is not None:
                problems.add(("mount_options",), options, problem)


class EbsTarget(_Target):
    kind: Literal["ebs"]
    type: EbsType
    size_gib: int = Field(ge=1, description="per volume")
    iops: int | None = Field(default=None, ge=1, description="per volume (gp3, io1, io2)")
    throughput_mibps: int | None = Field(default=None, ge=1, description="per volume (gp3)")
    count: int = Field(
        default=1, ge=1, le=16, description="volumes; more than one are striped (RAID0) or jbod"
    )
    layout: Literal["raid0", "jbod"] = Field(
        default="raid0", description="jbod: separate raw devices that fio spreads I/O across (filesystem raw)"
    )
    raid_chunk_kib: int | None = Field(default=None, ge=4, le=4096)
    filesystem: Filesystem = "xfs"
    mount_options: str | None = None
    encrypted: bool = True
    snapshot_id: Annotated[str, StringConstraints(pattern=SNAPSHOT_PATTERN)] | None = None
    initialization_rate_mibps: int | None = Field(
        default=None,
        description="Provisioned Rate for Volume Initialization, 100-300 MiB/s, snapshot volumes only",
    )
    allow_destroy: bool = Field(
        default=False, description="let the agent write over a snapshot volume that carries data"
    )
    prepare: bool = Field(
        default=True,
        description="false: attached and priced, but left to the setup hook (its device paths are in "
        "$SB_DEVICE_<ID>); no workload runs on it (a LizardFS chunk disk, an NVMe-oF backing volume)",
    )

    def envelope(self, instance_type: str | None) -> TargetEnvelope:
        """What the catalog says this target delivers on that instance (``count`` striped, capped by
        the instance's EBS limits)."""
        return target_envelope(
            instance_type, self.type, self.size_gib, self.iops, self.throughput_mibps, self.count
        )

    @rule("type", "size_gib", "iops", "throughput_mibps")
    def _volume_rules(self, problems: Problems) -> None:
        check_ebs(problems, self.type, self.size_gib, self.iops, self.throughput_mibps)

    @rule("initialization_rate_mibps", "snapshot_id")
    def _initialization_rule(self, problems: Problems) -> None:
        if self.initialization_rate_mibps is not None:
            if self.snapshot_id is None:
                problems.add(
                    ("initialization_rate_mibps",),
                    self.initialization_rate_mibps,
                    "only applies to volumes created from a snapshot; set snapshot_id or remove it",
                )
            elif not 100 <= self.initialization_rate_mibps <= 300:
                problems.add(
                    ("initialization_rate_mibps",),
                    self.initialization_rate_mibps,
                    "AWS allows 100..300 MiB/s",
                )

    @rule("layout", "filesystem", "count", "raid_chunk_kib")
    def _layout_rules(self, problems: Problems) -> None:
        if self.layout == "jbod" and self.filesystem != "raw":
            problems.add(
                ("layout",),
                self.layout,
                "jbod needs filesystem raw (one file system cannot span separate devices); "
                "use raid0 for a file system",
            )
        if self.count == 1 and self.layout == "jbod":
            problems.add(("layout",), self.layout, "jbod needs count >= 2")
        if self.raid_chunk_kib is not None and (self.count == 1 or self.layout != "raid0"):
            problems.add(
                ("raid_chunk_kib",), self.raid_chunk_kib, "only applies to a raid0 stripe (count >= 2)"
            )

    @rule("prepare", "filesystem", "mount_options")
    def _preparation_rules(self, problems: Problems) -> None:
        if not self.prepare and self.filesystem != "raw":
            problems.add(
                ("filesystem",),
                self.filesystem,
                "an unprepared target (prepare false) is left to the setup hook: set filesystem raw",
            )
        if self.filesystem == "raw" and self.mount_options:
            problems.add(("mount_options",), self.mount_options, "a raw target is not mounted; remove it")


class InstanceStoreTarget(_Target):
    kind: Literal["instance_store"]
    count: int | None = Field(default=None, ge=1, le=24, description="devices to use; all when omitted")
    filesystem: Filesystem = "xfs"
    mount_options: str | None = None
    raid_chunk_kib: int | None = Field(default=None, ge=4, le=4096)


class EfsTarget(_Target):
    kind: Literal["efs"]
    throughput_mode: Literal["elastic", "bursting", "provisioned"] = "elastic"
    provisioned_throughput_mibps: float | None = Field(default=None, gt=0)
    performance_mode: Literal["generalPurpose", "maxIO"] = "generalPurpose"
    one_zone: bool = False
    storage_gib_hint: int | None = Field(
        default=None,
        ge=1,
        description="GiB of data kept on it: what EFS storage is priced at and what a bursting file "
        "system's baseline (50 MiB/s per TiB) and burst (100 MiB/s per TiB, at least 100) are computed "
        "from; the file system is created empty and not pre-filled, so AWS meters only what the "
        "workloads write (validate and the dry run show both)",
    )
    mount_options: str = "nfsvers=4.1,rsize=1048576,wsize=1048576,hard,timeo=600,retrans=2,noresvport"
    encrypted: bool = True

    @rule("throughput_mode", "provisioned_throughput_mibps")
    def _throughput_rules(self, problems: Problems) -> None:
        limits = load_catalog().efs.provisioned_mibps
        value = self.provisioned_throughput_mibps
        if self.throughput_mode == "provisioned":
            if value is None:
                problems.add(
                    ("provisioned_throughput_mibps",),
                    None,
                    "required with throughput_mode provisioned: "
                    f"{fmt_int(limits.min)}..{fmt_int(limits.max)} MiB/s",
                    missing=True,
                )
            elif not limits.min <= value <= limits.max:
                problems.add(
                    ("provisioned_throughput_mibps",),
                    value,
                    f"EFS allows {fmt_int(limits.min)}..{fmt_int(limits.max)} MiB/s",
                )
        elif value is not None:
            problems.add(
                ("provisioned_throughput_mibps",),
                value,
                f"only applies to throughput_mode provisioned, not {self.throughput_mode}",
            )

    @rule("performance_mode", "one_zone", "throughput_mode")
    def _performance_rules(self, problems: Problems) -> None:
        if self.performance_mode == "maxIO" and (self.one_zone or self.throughput_mode == "elastic"):
            problems.add(
                ("performance_mode",),
                "maxIO",
                "maxIO is not available with one_zone or elastic throughput; use generalPurpose",
            )


class FsxLustreTarget(_Target):
    kind: Literal["fsx_lustre"]
    deployment_type: Literal["SCRATCH_1", "SCRATCH_2", "PERSISTENT_1", "PERSISTENT_2"] = "SCRATCH_2"
    storage_capacity_gib: int = Field(ge=1)
    per_unit_storage_throughput: int | None = Field(
        default=None, description="MB/s per TiB (persistent only)"
    )
    data_compression: Literal["NONE", "LZ4"] = "NONE"
    stripe_count: int = Field(
        default=-1, ge=-1, le=2000, description="lfs setstripe -c; -1 stripes over all OSTs"
    )
    mount_options: str = "relatime,flock"

    @rule("deployment_type", "storage_capacity_gib")
    def _capacity_rule(self, problems: Problems) -> None:
        limits = load_catalog().fsx_lustre[self.deployment_type]
        cap = self.storage_capacity_gib
        if not (
            cap in limits.capacity_gib_allowed
            or (cap % limits.capacity_gib_step == 0 and cap <= limits.capacity_gib_max)
        ):
            allowed = ", ".join(fmt_int(c) for c in limits.capacity_gib_allowed)
            problems.add(
                ("storage_capacity_gib",),
                cap,
                f"{self.deployment_type} allows {allowed} or a multiple of "
                f"{fmt_int(limits.capacity_gib_step)} up to {fmt_int(limits.capacity_gib_max)} GiB",
            )

    @rule("deployment_type", "per_unit_storage_throughput")
    def _throughput_rule(self, problems: Problems) -> None:
        limits = load_catalog().fsx_lustre[self.deployment_type]
        per_unit = self.per_unit_storage_throughput
        if limits.per_unit_mibps_per_tib:
            choices = ", ".join(str(v) for v in limits.per_unit_mibps_per_tib)
            if per_unit is None:
                problems.add(
                    ("per_unit_storage_throughput",),
                    None,
                    f"required for {self.deployment_type}: one of {choices} MB/s per TiB",
                    missing=True,
                )
            elif per_unit not in limits.per_unit_mibps_per_tib:
                problems.add(
                    ("per_unit_storage_throughput",),
                    per_unit,
                    f"{self.deployment_type} allows {choices} MB/s per TiB",
                )
        elif per_unit is not None:
            problems.add(
                ("per_unit_storage_throughput",),
                per_unit,
                f"{self.deployment_type} has fixed throughput; remove it",
            )


class NfsTarget(_Target):
    """An existing NFS export (a File Gateway share, a filer): mounted, never created."""

    kind: Literal["nfs"]
    server: Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9][A-Za-z0-9.:-]{0,252}$")]
    export: Annotated[str, StringConstraints(pattern=r"^/[^\s]*$")]
    nfs_version: Literal["3", "4", "4.0", "4.1", "4.2"] | None = None
    mount_options: str = "nolock,hard"


# File Gateway rules (docs.aws.amazon.com/filegateway/latest/files3/Requirements.html and
# ec2-gateway-file.html): the appliance AMI is x86_64 only; hosted on EC2 it needs at least 4 vCPUs
# and 16 GiB of RAM, an 80 GiB root disk and at least one cache disk of 150 GiB; a gateway's cache
# is at most 64 TiB.
GATEWAY_MIN_VCPUS = 4
GATEWAY_MIN_MEMORY_GIB = 16
GATEWAY_ROOT_MIN_GIB = 80
GATEWAY_CACHE_MIN_GIB = 150
GATEWAY_CACHE_MAX_TOTAL_GIB = 64 * 1024
S3_BUCKET_PATTERN = r"^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$"


class GatewayVolume(_Model):
    """One EBS disk of the gateway appliance (its root or a cache disk): the EBS rules apply."""

    type: EbsType
    size_gib: int = Field(ge=1)
    iops: int | None = Field(default=None, ge=1, description="gp3, io1, io2")
    throughput_mibps: int | None = Field(default=None, ge=1, description="gp3")
    encrypted: bool = True

    @rule("type", "size_gib", "iops", "throughput_mibps")
    def _aws_rules(self, problems: Problems) -> None:
        check_ebs(problems, self.type, self.size_gib, self.iops, self.throughput_mibps)


class FileGatewayTarget(_Target):
    """An S3 File Gateway the run provisions (an EC2 appliance with its root and cache disks), whose
    NFS share the config's instance (the client) mounts and benchmarks."""

    kind: Literal["file_gateway"]
    gateway_instance_type: Annotated[str, StringConstraints(pattern=INSTANCE_TYPE_PATTERN)] = Field(
        description="the appliance's EC2 instance type (the config's instance_type is the NFS client)"
    )
    root_volume: GatewayVolume = Field(description=f"at least {GATEWAY_ROOT_MIN_GIB} GiB")
    cache_volumes: list[GatewayVolume] = Field(
        min_length=1, max_length=MAX_DATA_VOLUMES, description=f"each at least {GATEWAY_CACHE_MIN_GIB} GiB"
    )
    bucket: Annotated[str, StringConstraints(pattern=S3_BUCKET_PATTERN)] | None = Field(
        default=None, description="the share's S3 bucket; default: the stack's share bucket"
    )
    prefix: Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9!_.*'()/-]{0,512}$")] | None = Field(
        default=None, description="key prefix in the bucket; default: the run's own prefix"
    )
    mount_options: Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9_.=,:-]+$")] = "nolock,hard"
    nfs_version: Literal["3", "4.1"] | None = Field(
        default=None, description="File Gateway exports NFSv3 and NFSv4.1"
    )

    @rule("gateway_instance_type")
    def _appliance_rules(self, problems: Problems) -> None:
        unknown = unknown_instance_type(self.gateway_instance_type)
        if unknown is not None:
            problems.add(("gateway_instance_type",), self.gateway_instance_type, unknown)
        spec = instance_type(self.gateway_instance_type)
        if spec is not None:
            short = []
            if spec.arch != "x86_64":
                short.append(f"is {spec.arch} (the File Gateway AMI is x86_64 only)")
            if spec.vcpus < GATEWAY_MIN_VCPUS:
                short.append(f"has {spec.vcpus} vCPUs (at least {GATEWAY_MIN_VCPUS})")
            if spec.memory_gib < GATEWAY_MIN_MEMORY_GIB:
                short.append(f"has {fmt_int(spec.memory_gib)} GiB RAM (at least {GATEWAY_MIN_MEMORY_GIB})")
            if short:
                problems.add(
                    ("gateway_instance_type",),
                    self.gateway_instance_type,
                    f"{self.gateway_instance_type} {' and '.join(short)}: File Gateway on EC2 needs an "
                    f"x86_64 type with >= {GATEWAY_MIN_VCPUS} vCPUs and >= {GATEWAY_MIN_MEMORY_GIB} GiB, "
                    "e.g. m5.xlarge",
                )

    @rule("root_volume")
    def _root_rules(self, problems: Problems) -> None:
        root = self.root_volume
        if root.type in ("st1", "sc1"):
            problems.add(("root_volume", "type"), root.type, "st1 and sc1 cannot be boot volumes")
        if root.size_gib < GATEWAY_ROOT_MIN_GIB:
            problems.add(
                ("root_volume", "size_gib"),
                root.size_gib,
                f"the File Gateway root disk needs at least {GATEWAY_ROOT_MIN_GIB} GiB",
            )

    @rule("cache_volumes")
    def _cache_rules(self, problems: Problems) -> None:
        for position, cache in enumerate(self.cache_volumes):
            if cache.size_gib < GATEWAY_CACHE_MIN_GIB:
                problems.add(
                    ("cache_volumes", position, "size_gib"),
                    cache.size_gib,
                    f"a File Gateway cache disk needs at least {GATEWAY_CACHE_MIN_GIB} GiB",
                )
        total = sum(c.size_gib for c in self.cache_volumes)
        if total > GATEWAY_CACHE_MAX_TOTAL_GIB:
            problems.add(
                ("cache_volumes",),
                total,
                f"a gateway's cache is at most {fmt_int(GATEWAY_CACHE_MAX_TOTAL_GIB)} GiB in all",
            )

    def mount_options_for_client(self) -> str:
        """The client's mount options: the request's, with nfsvers when one is chosen."""
        if self.nfs_version is None:
            return self.mount_options
        return f"{self.mount_options},nfsvers={self.nfs_version}"


class LocalTarget(_Target):
    """A directory on the machine running the agent (local runs): benchmarked in place."""

    kind: Literal["local"]
    # no control characters: the path is written into fio's job file (directory=), one line per option
    path: Annotated[str, StringConstraints(pattern=LOCAL_PATH_PATTERN, max_length=4096)]
    backed_by: list[Annotated[str, StringConstraints(pattern=r"^[a-z][a-z0-9-]{0,30}$")]] = Field(
        default_factory=list,
        max_length=MAX_DATA_VOLUMES,
        description="ids of the config's own targets that hold what the path serves (a file system its "
        "setup hook builds on them, e.g. MooseFS on an EBS volume): the path is priced as them, not "
        "listed as not priced; empty: whatever backs it is outside the config's bill",
    )


Target = Annotated[
    EbsTarget
    | InstanceStoreTarget
    | EfsTarget
    | FsxLustreTarget
    | NfsTarget
    | FileGatewayTarget
    | LocalTarget,
    Field(discriminator="kind"),
]


def target_mode(target: Target) -> Literal["raw", "filesystem"]:
    if isinstance(target, EbsTarget | InstanceStoreTarget) and target.filesystem == "raw":
        return "raw"
    return "filesystem"


# ------------------------------------------------------------------------- configs


# What one machine of a config must satisfy, a client or a node (_Machine's rules).


def _type_problems(problems: Problems, instance: str) -> None:
    unknown = unknown_instance_type(instance)
    if unknown is not None:
        problems.add(("instance_type",), instance, unknown)


def _target_problems(problems: Problems, instance: str, targets: list[Any]) -> None:
    """Unique target ids (defaults given), volumes it can attach, instance store it has."""
    seen: dict[str, int] = {}
    for position, target in enumerate(targets):
        if target.id is None:
            target.id = default_target_id(target.kind, position)
        if target.id in seen:
            problems.add(
                ("targets", position, "id"),
                target.id,
                f"already names targets[{seen[target.id]}]; target ids must be unique in a config",
            )
        seen[target.id] = position
    volumes = sum(t.count for t in targets if isinstance(t, EbsTarget))
    if volumes > MAX_DATA_VOLUMES:
        problems.add(
            ("targets",),
            volumes,
            f"at most {MAX_DATA_VOLUMES} data volumes per instance (device names /dev/sdf to /dev/sdz)",
        )
    spec = instance_type(instance)
    for position, target in enumerate(targets):
        if not isinstance(target, InstanceStoreTarget) or spec is None:
            continue
        store = spec.instance_store
        if store is None:
            problems.add(
                ("targets", position, "kind"),
                "instance_store",
                f"{instance} has no instance store; pick e.g. an i3en, m5d or c5d type",
            )
        elif target.count is not None and target.count > store.devices:
            problems.add(
                ("targets", position, "count"),
                target.count,
                f"{instance} has {store.devices} instance-store device(s)",
            )


def _architecture_problems(problems: Problems, instance: str, image: str) -> None:
    wrong = image_problem(image, architecture(instance))
    if wrong is not None:
        problems.add(("image",), image, f"{wrong.reason}; use {wrong.allowed}")


def _tool_problems(problems: Problems, instance: str, image: str, targets: list[Any]) -> None:
    """The image ships what the targets need (once it is an image for the architecture)."""
    if image_problem(image, architecture(instance)) is not None:
        return
    for position, target in enumerate(targets):
        for tool in target_tools(target):
            missing = missing_tool(image, tool)
            if missing is not None:
                problems.add(
                    ("targets", position),
                    f"{target.kind} on {image}",
                    f"{missing.reason}; use {missing.allowed}",
                )


class _Machine(_Model):
    """What a config's client and a node group have alike: a known type, an image for its
    architecture shipping what the targets need, targets the type can hold (one rule per set of
    inputs, so a field that failed to parse hides none of the others' problems)."""

    if TYPE_CHECKING:  # the subclasses' own fields, in their own order (the schema keeps it)
        instance_type: str
        image: str
        targets: list[Any]

    @rule("instance_type")
    def _known_instance_type(self, problems: Problems) -> None:
        _type_problems(problems, self.instance_type)

    @rule("instance_type", "targets")
    def _targets_fit(self, problems: Problems) -> None:
        _target_problems(problems, self.instance_type, list(self.targets))

    @rule("instance_type", "image")
    def _image_architecture(self, problems: Problems) -> None:
        _architecture_problems(problems, self.instance_type, self.image)

    @rule("instance_type", "image", "targets")
    def _image_tools(self, problems: Problems) -> None:
        _tool_problems(problems, self.instance_type, self.image, list(self.targets))


NodeTarget = Annotated[EbsTarget | InstanceStoreTarget, Field(discriminator="kind")]


class NodeGroup(_Machine):
    """Servers a config launches besides its clients: launched, awaited, priced and released with it.

    Each node runs the group's hooks (privileged shell, like a config's) with the topology in its
    environment; a node is bought on-demand whatever the config's purchase, as a reclaimed storage
    server would take the target away from every client."""

    role: Slug = Field(description="names the group, e.g. controller, master, chunk (not client)")
    count: int = Field(default=1, ge=1, le=MAX_NODES_PER_GROUP, description="identical nodes of this role")
    instance_type: Annotated[str, StringConstraints(pattern=INSTANCE_TYPE_PATTERN)]
    image: str = Field(default=DEFAULT_IMAGE, max_length=1011, description="as a config's image")
    root_volume: RootVolume = Field(default_factory=RootVolume)
    targets: list[NodeTarget] = Field(
        default_factory=list, max_length=8, description="each node's own EBS volumes or instance store"
    )
    ports: list[Annotated[str, StringConstraints(pattern=PORT_PATTERN)]] = Field(
        default_factory=list, max_length=16, description=PORTS_DESCRIPTION
    )
    setup: str | None = Field(
        default=None,
        max_length=16_384,
        description="shell run on each node before any client's setup (privileged), with the topology",
    )
    teardown: str | None = Field(
        default=None,
        max_length=16_384,
        description="shell run on each node after the clients' teardown, on every path",
    )

    @property
    def launch_ebs_optimized(self) -> bool | None:
        """As a config's default: EBS-optimized where it is optional, the type's default elsewhere."""
        spec = instance_type(self.instance_type)
        return None if spec is None or spec.ebs_optimized_by_default else True

    @rule("role")
    def _not_the_clients(self, problems: Problems) -> None:
        if self.role == CLIENT_ROLE:
            problems.add(
                ("role",),
                self.role,
                "client names the config's own instances (set clients for several); pick another role",
            )

    @rule("ports")
    def _ports(self, problems: Problems) -> None:
        for position, port in enumerate(self.ports):
            try:
                parse_port(port)
            except ValueError as exc:
                problems.add(("ports", position), port, str(exc))


class Config(_Machine):
    id: Slug
    description: str | None = Field(default=None, max_length=500)
    instance_type: Annotated[str, StringConstraints(pattern=INSTANCE_TYPE_PATTERN)]
    image: str = Field(
        default=DEFAULT_IMAGE,
        max_length=1011,
        description="al2023, ubuntu-24.04, ubuntu-22.04, debian-12, rhel-9, an AMI id, or an SSM "
        "parameter path holding one (the catalog publishers' public parameters or /storagebench/...)",
    )
    ebs_optimized: bool | None = Field(
        default=None,
        description="types where EBS optimisation is optional launch EBS-optimized (and are priced "
        "so) unless this is false; types optimised by default cannot turn it off",
    )
    root_volume: RootVolume = Field(default_factory=RootVolume)
    targets: list[Target] = Field(min_length=1, max_length=8)
    setup: str | None = Field(
        default=None, max_length=16_384, description="shell run before targets are prepared"
    )
    teardown: str | None = Field(
        default=None, max_length=16_384, description="shell run after, on every path"
    )
    purchase: Purchase | None = Field(default=None, description=PURCHASE_DESCRIPTION)
    clients: int = Field(
        default=1,
        ge=1,
        le=MAX_CLIENTS,
        description="identical client instances running every workload at once against the same shared "
        "target (efs, fsx_lustre, nfs, file_gateway, local): fio's client/server mode starts each "
        "workload on all of them together; records are kept per client and aggregated (IOPS and "
        "bandwidth summed, latency from the merged histograms)",
    )
    nodes: list[NodeGroup] = Field(
        default_factory=list,
        max_length=MAX_NODE_GROUPS,
        description="groups of servers launched with the config (virtual-SAN controllers, a file "
        "system's master and chunk servers): awaited, set up before the clients, priced with the "
        "config, released on every path",
    )
    placement: Placement | None = Field(default=None, description=PLACEMENT_DESCRIPTION)
    matrix: dict[str, Annotated[list[MatrixValue], Field(min_length=1)]] | None = Field(
        default=None,
        description="expands this config into one config per combination of the values (request."
        'matrix): field -> values, e.g. {"size_gib": [500, 1000], "iops": [3000, 6000]}; fields: '
        "instance_type, image, clients, or a target's type, size_gib, iops, throughput_mibps, count, "
        "filesystem, ... (<target id>.<field> when several targets have it); ids read "
        "<id>-500g-6000iops",
    )
    # Set by the matrix expansion only (request.matrix): refused from documents, left out of the
    # published schema and of the dumps; the report expands the run's document again to read it.
    origin: SkipJsonSchema[MatrixOrigin | None] = Field(default=None, exclude=True)

    @field_validator("origin", mode="before")
    @classmethod
    def _origin_from_the_expansion(cls, value: Any) -> Any:
        return expansion_only(value, MatrixOrigin)

    @rule("matrix")
    def _expanded(self, problems: Problems) -> None:
        if self.matrix is not None:
            problems.add(
                ("matrix",),
                self.matrix,
                "a matrix is expanded when the request document is parsed (storagebench.request."
                "parse_request); a config or request validated directly cannot hold one",
            )

    @rule("targets")
    def _one_gateway(self, problems: Problems) -> None:
        gateways = [p for p, t in enumerate(self.targets) if isinstance(t, FileGatewayTarget)]
        for position in gateways[1:]:
            problems.add(
                ("targets", position, "kind"),
                "file_gateway",
                f"one file gateway per config (targets[{gateways[0]}] is one); compare gateways as configs",
            )

    @rule("targets")
    def _local_backing(self, problems: Problems) -> None:
        """A local path's ``backed_by`` names other, billed targets of this config, once each."""
        ids = {t.id or default_target_id(t.kind, p): (p, t) for p, t in enumerate(self.targets)}
        for position, target in enumerate(self.targets):
            if not isinstance(target, LocalTarget):
                continue
            for index, backing in enumerate(target.backed_by):
                where = ("targets", position, "backed_by", index)
                found = ids.get(backing)
                billed = [i for i, (_, t) in ids.items() if t.kind not in UNBILLED_KINDS]
                allowed = f"the config's billed targets: {', '.join(billed) or 'none'}"
                if found is None:
                    problems.add(where, backing, f"names no target of this config; allowed: {allowed}")
                elif found[1].kind in UNBILLED_KINDS:
                    problems.add(
                        where,
                        backing,
                        f"targets[{found[0]}] is a {found[1].kind} target, billed outside the config; "
                        f"allowed: {allowed}",
                    )
                elif backing in target.backed_by[:index]:
                    problems.add(where, backing, "named twice; name each backing target once")

    @rule("clients", "targets")
    def _shared_targets(self, problems: Problems) -> None:
        if self.clients == 1:
            return
        own = [f"targets[{p}] ({t.kind})" for p, t in enumerate(self.targets) if t.kind not in SHARED_KINDS]
        if own:
            problems.add(
                ("clients",),
                self.clients,
                f"{self.clients} clients drive one shared target; {', '.join(own)} belong(s) to one "
                f"instance (shared kinds: {', '.join(SHARED_KINDS)}): set clients 1 or share the target",
            )

    @rule("nodes")
    def _node_groups(self, problems: Problems) -> None:
        seen: dict[str, int] = {}
        for position, group in enumerate(self.nodes):
            if group.role in seen:
                problems.add(
                    ("nodes", position, "role"),
                    group.role,
                    f"already names nodes[{seen[group.role]}]; roles must be unique in a config",
                )
            seen[group.role] = position
        total = sum(group.count for group in self.nodes)
        if total > MAX_NODES:
            problems.add(("nodes",), total, f"at most {MAX_NODES} nodes per config, every group together")

    @rule("placement", "nodes", "clients")
    def _placement(self, problems: Problems) -> None:
        if self.placement is not None and not self.nodes and self.clients == 1:
            problems.add(
                ("placement",),
                self.placement,
                "places several instances together or apart: add nodes or clients > 1, or remove it",
            )

    @rule("purchase", "nodes", "clients")
    def _on_demand_topology(self, problems: Problems) -> None:
        if self.purchase not in (None, "on-demand") and self.instance_count > 1:
            problems.add(
                ("purchase",),
                self.purchase,
                "a config of several machines (nodes or clients) is bought on-demand: one Spot "
                "interruption would stop them all; remove purchase or set on-demand",
            )

    @property
    def machines(self) -> str:
        """What the config launches, for people: ``4 x c5.2xlarge + 5 controller r5b.24xlarge``."""
        clients = self.instance_type if self.clients == 1 else f"{self.clients} x {self.instance_type}"
        return " + ".join([clients, *(f"{g.count} {g.role} {g.instance_type}" for g in self.nodes)])

    @property
    def instance_count(self) -> int:
        """Clients and nodes: the instances the config launches itself (gateway appliances aside)."""
        return self.clients + sum(group.count for group in self.nodes)

    @property
    def launch_ebs_optimized(self) -> bool | None:
        """What the launch asks for: True where optimisation is optional and not declined,
        False where declined, None (the type's own default) elsewhere."""
        spec = instance_type(self.instance_type)
        if spec is None or spec.ebs_optimized_by_default:
            return None
        return self.ebs_optimized is not False

    @rule("instance_type", "ebs_optimized")
    def _ebs_optimization(self, problems: Problems) -> None:
        spec = instance_type(self.instance_type)
        if self.ebs_optimized is False and spec is not None and spec.ebs_optimized_by_default:
            problems.add(
                ("ebs_optimized",),
                False,
                f"{self.instance_type} is always EBS-optimized; remove ebs_optimized or pick a type "
                "where it is optional (e.g. r3.4xlarge)",
            )


def target_tools(target: Target) -> list[str]:
    """The packages (keys of the agent's package table) preparing a target takes on the instance."""
    tools: list[str] = []
    if isinstance(target, EbsTarget | InstanceStoreTarget):
        prepared = not isinstance(target, EbsTarget) or target.prepare
        if prepared and target.filesystem != "raw":
            tools.append(target.filesystem)
        striped = target.count is None or target.count > 1
        if prepared and striped and getattr(target, "layout", "raid0") == "raid0":
            tools.append("mdadm")
    elif isinstance(target, EfsTarget | NfsTarget | FileGatewayTarget):
        tools.append("nfs")
    elif isinstance(target, FsxLustreTarget):
        tools.append("lustre")
    return tools


# ------------------------------------------------------------------------- workloads


class WorkloadRef(_Model):
    """A profile from the library (or a whole suite), with overrides."""

    profile: str | None = Field(default=None, description="a profile name from `storagebench workloads`")
    suite: str | None = Field(default=None, description="every profile of a suite: " + ", ".join(SUITES))
    id: Slug | None = Field(
        default=None,
        description="names this workload in results; defaults to the profile, with the params that "
        "differ from its defaults: std-randread-4k[bs=8k]",
    )
    scale: float = Field(default=1.0, gt=0, le=100, description="multiplies sizes, counts and runtimes")
    params: dict[str, Any] = Field(
        default_factory=dict, description="overrides; a list sweeps a sweepable one"
    )
    targets: list[str] | None = Field(
        default=None, description="target ids to run on; all targets when omitted"
    )
    repetitions: Repetitions | None = Field(
        default=None,
        description="this workload's repetitions, instead of the request's: " + REPETITIONS_DESCRIPTION,
    )
    steady_state: SteadyState | None = Field(default=None, description=STEADY_STATE_DESCRIPTION)
    node_loss: NodeLossSpec | None = Field(default=None, description=NODE_LOSS_DESCRIPTION)

    @rule("profile", "suite", "params", "id")
    def _profile(self, problems: Problems) -> None:
        """Exactly one of profile and suite, which exists; a profile's params are checked (and
        normalised: sizes as fio reads them)."""
        if (self.profile is None) == (self.suite is None):
            message = "give exactly one of profile or suite"
            problems.add(("profile",), self.profile, message, missing=self.profile is None)
        elif self.suite is not None:
            if self.suite not in SUITES:
                problems.add(("suite",), self.suite, f"unknown suite; allowed: {', '.join(SUITES)}")
            if self.params:
                problems.add(
                    ("params",), self.params, "a suite takes no params; list its profiles to override"
                )
            if self.id is not None:
                problems.add(("id",), self.id, "a suite's workloads are named after their profiles")
        elif self.profile is not None:
            try:
                profile = get_profile(self.profile)
            except KeyError as exc:
                problems.add(("profile",), self.profile, str(exc.args[0]))
            else:
                try:
                    self.params = check_params(profile, self.params)
                except ParamsError as exc:
                    for error in exc.errors:
                        loc: tuple[str | int, ...] = ("params", error.param)
                        if error.index is not None:
                            loc = (*loc, error.index)
                        problems.add(loc, error.value, error.allowed, missing=error.value is None)

    def expand(self) -> list[ResolvedWorkload]:
        names = SUITES[self.suite] if self.suite else (self.profile,)
        return [
            ResolvedWorkload(
                id=self.id
                or (workload_name(get_profile(str(name)), self.params) if self.profile else str(name)),
                profile=str(name),
                scale=self.scale,
                params=self.params if self.profile else {},
                targets=self.targets,
                repetitions=self.repetitions,
                steady_state=self.steady_state,
                node_loss=self.node_loss,
            )
            for name in names
        ]


class ResolvedWorkload(_Model):
    """A workload after suites are expanded: one profile, validated params."""

    id: str
    profile: str
    scale: float
    params: dict[str, Any]
    targets: list[str] | None
    repetitions: Repetitions | None
    steady_state: SteadyState | None = None
    node_loss: NodeLossSpec | None = None


# ------------------------------------------------------------------------- the request


class Timing(_Model):
    """Poll intervals and deadlines of the workflow; small values make tests fast."""

    ready_poll_s: int = Field(default=15, ge=1, le=300, description="while instances and file systems start")
    command_poll_s: int = Field(
        default=300,
        ge=1,
        le=600,
        description="while workloads run; <= 600 so a dead instance is seen in 10 min",
    )
    command_timeout_h: float = Field(
        default=12, ge=0.005, le=48, description="SSM execution timeout, 18 s (tests) to 48 h (SSM's maximum)"
    )
    max_run_hours: float = Field(
        default=24, gt=0, le=168, description="resources expire (janitor) after this"
    )

    @rule("command_timeout_h", "max_run_hours")
    def _within_the_run(self, problems: Problems) -> None:
        if self.command_timeout_h > self.max_run_hours:
            problems.add(
                ("command_timeout_h",),
                self.command_timeout_h,
                f"must not exceed max_run_hours ({self.max_run_hours:g}): the run's resources expire then",
            )


# What EventBridge Scheduler substitutes for <aws.scheduler.schedule-arn> and
# <aws.scheduler.scheduled-time>; the placeholders themselves (a start that is not a schedule's) fail.
SCHEDULE_ARN_PATTERN = (
    r"^arn:aws[a-z-]*:scheduler:[a-z0-9-]+:\d{12}:schedule/[0-9A-Za-z_.-]{1,64}/[0-9A-Za-z_.-]{1,64}$"
)
SCHEDULED_TIME_PATTERN = r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$"


class ScheduledOccurrence(_Model):
    """Which occurrence of a schedule started the run. Every attempt EventBridge Scheduler makes for
    one occurrence substitutes the same two values, so Plan claims the pair once (docs/deploy.md,
    Exactly once)."""

    schedule_arn: Annotated[str, StringConstraints(pattern=SCHEDULE_ARN_PATTERN)]
    scheduled_time: Annotated[str, StringConstraints(pattern=SCHEDULED_TIME_PATTERN)]


class BenchmarkRequest(_Model):
    name: Slug = Field(description="suite name: groups nightly runs of the same comparison")
    description: str | None = Field(default=None, max_length=2000)
    region: Annotated[str, StringConstraints(pattern=REGION_PATTERN)] = "us-east-1"
    baseline: str | None = Field(
        default=None, description="config id the others are compared with (default: first)"
    )
    configs: list[Config] = Field(min_length=1, max_length=MAX_CONFIGS)
    workloads: list[WorkloadRef] = Field(min_length=1, max_length=50)
    prewarm: Prewarm = Field(default_factory=Prewarm)
    repetitions: Repetitions = Field(default=3, description=REPETITIONS_DESCRIPTION)
    order: Literal["sequential", "interleaved"] = Field(
        default="sequential", description="interleaved runs repetition 1 of every workload, then 2, ..."
    )
    max_concurrency: int | None = Field(
        default=None, ge=1, le=MAX_CONCURRENCY, description="configs run at once"
    )
    timing: Timing = Field(default_factory=Timing)
    fail_fast: bool = Field(default=False, description="stop a config's workloads at its first failure")
    purchase: Purchase | None = Field(
        default=None, description="every config's purchase unless it sets its own: " + PURCHASE_DESCRIPTION
    )
    requirements: list[Annotated[str, StringConstraints(min_length=1, max_length=REQUIREMENT_LENGTH)]] = (
        Field(
            default_factory=list,
            max_length=50,
            description="what a config must deliver, as WORKLOAD[:DIRECTION]:METRIC OP VALUE (e.g. "
            "std-randread-4k:iops>=3500, std-randread-4k:read:p95_ms<2; metrics: "
            f"{', '.join(REQUIREMENT_METRICS)}): the report and `storagebench recommend` name the "
            "cheapest config whose 95 % confidence bound meets every one",
        )
    )
    tags: dict[str, str] = Field(
        default_factory=dict,
        description=f"put on every instance, volume, file system and gateway of the run: at most "
        f"{MAX_USER_TAGS}; keys 1-128 and values 0-256 characters of {TAG_CHARACTERS}; aws:, "
        "storagebench: and Name are reserved",
        json_schema_extra={"maxProperties": MAX_USER_TAGS},
    )
    matrix_invalid: MatrixInvalid = Field(
        default="error",
        description="a matrix point that breaks AWS's rules (e.g. gp3 IOPS above 500 per GiB): error "
        "refuses the request naming each point and rule; skip leaves the point out and lists it in "
        "validate, cost, the dry run and the report",
    )
    # The points matrix_invalid skip left out: set by the expansion only, like origin.
    matrix_skipped: SkipJsonSchema[list[SkippedPoint]] = Field(default_factory=list, exclude=True)

    @field_validator("matrix_skipped", mode="before")
    @classmethod
    def _skipped_by_the_expansion(cls, value: Any) -> Any:
        if isinstance(value, list):
            return [expansion_only(point, SkippedPoint) for point in value]
        return expansion_only(value, list)

    # Set by a schedule's Input only: the API refuses it, the published schema and the dumps (the
    # request as stored for the steps) leave it out; the run item keeps the document as started.
    scheduled: SkipJsonSchema[ScheduledOccurrence | None] = Field(default=None, exclude=True)

    @model_validator(mode="after")
    def _cross_checks(self) -> BenchmarkRequest:
        problems = Problems("BenchmarkRequest")
        found = [
            *reference_problems(self.model_dump()),
            *tag_problems(self.tags),
            *steady_state_problems(self),
            *multi_client_problems(self),
            *node_loss_problems(self),
            *plan_size_problems(self),
            *command_need_problems(self),
        ]
        for loc, value, message in found:
            problems.add(loc, value, message)
        problems.raise_if_any()
        return self

    @property
    def baseline_id(self) -> str:
        return self.baseline or self.configs[0].id

    def resolved_workloads(self) -> list[ResolvedWorkload]:
        return [w for ref in self.workloads for w in ref.expand()]

    def repetitions_of(self, workload: ResolvedWorkload) -> Repetitions:
        return workload.repetitions if workload.repetitions is not None else self.repetitions

    def config(self, config_id: str) -> Config:
        for config in self.configs:
            if config.id == config_id:
                return config
        raise KeyError(f"no config {config_id!r}; configs are {', '.join(c.id for c in self.configs)}")

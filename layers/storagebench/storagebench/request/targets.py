"""The storage targets a config benchmarks, one model per kind (EBS, instance store, EFS, FSx for
Lustre, an NFS export, an S3 File Gateway, a local directory), with AWS's rules for each, the
``Target`` union the configs hold, and what preparing each takes on the instance."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, StringConstraints

from storagebench.catalog import instance_type, load_catalog, unknown_instance_type
from storagebench.catalog.envelope import TargetEnvelope, target_envelope
from storagebench.catalog.loader import ebs_volume_type
from storagebench.request.ebs_rules import check_ebs
from storagebench.request.fields import (
    INSTANCE_TYPE_PATTERN,
    LOCAL_PATH_PATTERN,
    MAX_DATA_VOLUMES,
    SNAPSHOT_PATTERN,
    EbsType,
    Filesystem,
)
from storagebench.request.mount_options import FAMILIES, mount_options_problem
from storagebench.request.problems import Problems, fmt_int
from storagebench.request.rules import RequestModel, rule


class _Target(RequestModel):
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
    multi_attach: bool = Field(
        default=False,
        description="io1/io2 in a node group only: each volume is created once with EBS Multi-Attach and "
        "attached to every node of the group (up to 16 Nitro instances in one Availability Zone), priced "
        "once; filesystem raw, as EBS does no I/O fencing (a virtual SAN's shared backing volumes)",
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

    @rule("multi_attach", "type", "filesystem")
    def _multi_attach_rules(self, problems: Problems) -> None:
        if not self.multi_attach:
            return
        offered = [name for name, spec in load_catalog().ebs.items() if spec.multi_attach is not None]
        if ebs_volume_type(self.type).multi_attach is None:
            problems.add(
                ("type",),
                self.type,
                f"Multi-Attach is offered on {', '.join(offered)} only; pick one or remove multi_attach",
            )
        if self.filesystem != "raw":
            problems.add(
                ("filesystem",),
                self.filesystem,
                "a Multi-Attach volume is written by several instances and EBS does no I/O fencing: "
                f"{self.filesystem} is a single-host file system and would be corrupted; use raw (a "
                "cluster-aware file system or an export is the setup hook's to make)",
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


class GatewayVolume(RequestModel):
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

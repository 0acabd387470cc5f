"""Typed view of ``catalog.json``: AWS storage rules and performance envelopes.

The catalog is data, versioned with the package, and every value in it points at a source
(``sources`` table: title, URL, date read). Code reads it through these models only.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from storagebench.catalog.quota_models import VcpuQuotas

Architecture = Literal["x86_64", "arm64"]


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class Source(_Frozen):
    title: str
    url: str
    retrieved: str = Field(description="ISO date the value was read from the source")
    note: str | None = None


class Range(_Frozen):
    min: float
    max: float
    source: str


class IopsRule(_Frozen):
    """What a request may provision for a volume type's IOPS."""

    min: int
    max: int
    max_per_gib: float | None = None
    required: bool = False
    default: int | None = None
    source: str


class ThroughputRule(_Frozen):
    min: float
    max: float
    max_per_iops: float | None = None
    default: float | None = None
    source: str


class Gp2Burst(_Frozen):
    """gp2 I/O credit bucket."""

    burst_iops: int
    burst_mibps: float
    credit_capacity: float
    credits_per_gib_s: float
    no_burst_from_gib: int
    source: str


class ThroughputCredits(_Frozen):
    """st1/sc1 throughput credits: baseline and burst scale with size (MiB/s per TiB)."""

    baseline_mibps_per_tib: float
    burst_mibps_per_tib: float
    max_mibps: float
    bucket_mib_per_tib: float
    source: str


class SizeTier(_Frozen):
    """A value that depends on volume size (gp2 throughput)."""

    up_to_gib: float | None = Field(default=None, description="inclusive upper size bound; None = no bound")
    value: float = Field(description="sustained value (no credits needed)")
    burst_value: float | None = Field(default=None, description="value while burst credits last; None = same")


class LatencyMode(_Frozen):
    """One lognormal mode of a volume's service time: the median and the 99th percentile (ms)."""

    weight: float = Field(gt=0, allow_inf_nan=False, description="share of I/Os in this mode (relative)")
    p50_ms: float = Field(gt=0, allow_inf_nan=False, description="median service time, milliseconds")
    p99_ms: float = Field(gt=0, allow_inf_nan=False, description="99th percentile, milliseconds")

    @model_validator(mode="after")
    def _p99_not_below_p50(self) -> LatencyMode:
        if self.p99_ms < self.p50_ms:
            raise ValueError(
                f"p99_ms {self.p99_ms!r} is below p50_ms {self.p50_ms!r}: p99_ms >= p50_ms expected"
            )
        return self


class LatencyModel(_Frozen):
    """A volume type's service time for one small (4-16 KiB) I/O with one I/O in flight.

    A mixture of lognormal modes (one mode: the usual unimodal volume). This is what the local
    twin adds to each I/O after admission; queueing at the limits comes from the limits, not
    from here. ``source`` backs the numbers; ``bound_source`` is AWS's published expectation
    they stay within, where AWS publishes one.
    """

    modes: list[LatencyMode] = Field(min_length=1)
    basis: str = Field(min_length=1, description="what the numbers are and how they were derived")
    source: str
    bound_source: str | None = Field(
        default=None, description="source of AWS's published latency expectation (e.g. single-digit ms)"
    )


class MultiAttach(_Frozen):
    """Multi-Attach: one volume attached to several Nitro instances of one Availability Zone at once."""

    max_instances: int = Field(description="instances one volume can be attached to at once")
    rules: str = Field(description="what else AWS requires (boot volumes, file systems, enabling it)")
    source: str


class EbsVolumeType(_Frozen):
    media: Literal["ssd", "hdd", "magnetic"]
    description: str
    io_size_kib: int = Field(description="largest I/O counted as one operation")
    size_gib: Range
    iops: IopsRule | None = Field(default=None, description="None: IOPS are not provisionable")
    throughput_mibps: ThroughputRule | None = Field(default=None, description="None: not provisionable")
    # Performance model (read by catalog.envelope).
    baseline_iops_per_gib: float | None = None
    baseline_iops_min: float | None = None
    included_iops: float | None = None
    max_iops: float
    max_mibps: float
    mibps_per_iops: float | None = Field(
        default=None, description="throughput per provisioned IOPS (io1/io2)"
    )
    mibps_per_iops_cap: float | None = Field(
        default=None, description="ceiling of the per-IOPS throughput rule below high_iops_from (io1: 500)"
    )
    high_iops_from: int | None = Field(
        default=None, description="above this many provisioned IOPS, throughput is IOPS x high_iops_io_kib"
    )
    high_iops_io_kib: float | None = Field(
        default=None, description="I/O size used above high_iops_from (io1: 16)"
    )
    included_mibps: float | None = Field(
        default=None, description="throughput assumed without provisioning (magnetic: low end of the range)"
    )
    non_nitro_max_iops: int | None = Field(
        default=None, description="per-volume IOPS ceiling on Xen instances"
    )
    non_nitro_max_mibps: float | None = Field(
        default=None, description="per-volume MiB/s ceiling on Xen instances"
    )
    mibps_by_size: list[SizeTier] | None = None
    gp2_burst: Gp2Burst | None = None
    throughput_credits: ThroughputCredits | None = None
    consistency: str
    source: str
    summary_source: str | None = Field(default=None, description="source of the per-type summary maxima")
    io_size_source: str | None = Field(default=None, description="source of io_size_kib")
    derivation_source: str | None = Field(
        default=None, description="source of a rule the envelope derives (gp2 throughput without credits)"
    )
    history: str | None = None
    latency: LatencyModel | None = Field(
        default=None, description="QD1 service time of a small I/O, for the local twin"
    )
    multi_attach: MultiAttach | None = Field(default=None, description="None: Multi-Attach is not offered")


class InstanceStoreSpec(_Frozen):
    devices: int
    device_gib: float = Field(description="GiB per device, derived from device_gb (x 10^9 / 2^30)")
    media: Literal["nvme", "ssd", "hdd"]
    device_gb: float | None = Field(
        default=None, description="GB per device (10^9 bytes), as AWS publishes it"
    )
    source: str


class InstanceType(_Frozen):
    vcpus: int
    memory_gib: float
    arch: Architecture
    nitro: bool
    ebs_baseline_mbps: float = Field(description="MB/s (10^6 bytes), as AWS publishes it")
    ebs_baseline_iops: int
    ebs_max_mbps: float
    ebs_max_iops: int
    ebs_burst_minutes_per_day: int | None = Field(
        default=None, description="30 for instances that reach the maximum only 30 min per 24 h"
    )
    ebs_baseline_bandwidth_mbit: int | None = Field(default=None, description="Mbps (megabits), as published")
    ebs_max_bandwidth_mbit: int | None = Field(default=None, description="Mbps (megabits), as published")
    ebs_optimized_by_default: bool = Field(
        default=True, description="False: the EBS limits apply only when launched EBS-optimized (extra fee)"
    )
    network_baseline_gbps: float = Field(
        gt=0, allow_inf_nan=False, description="Gbps each way, sustained (AWS's baseline bandwidth)"
    )
    network_burst_gbps: float = Field(
        gt=0,
        allow_inf_nan=False,
        description="Gbps each way on network I/O credits ('up to' sizes; = baseline for the others)",
    )
    instance_store: InstanceStoreSpec | None = None
    on_demand_usd_per_hour_us_east_1: float | None = None
    source: str = Field(description="source of the EBS limits")
    spec_source: str | None = Field(default=None, description="source of vCPUs, memory, architecture")
    price_source: str | None = Field(default=None, description="source of the price seed")
    network_source: str = Field(description="source of the network bandwidth")

    @model_validator(mode="after")
    def _burst_not_below_baseline(self) -> InstanceType:
        if self.network_burst_gbps < self.network_baseline_gbps:
            raise ValueError(
                f"network_burst_gbps {self.network_burst_gbps!r} is below network_baseline_gbps "
                f"{self.network_baseline_gbps!r}: burst >= baseline expected"
            )
        return self


class EfsRules(_Frozen):
    provisioned_mibps: Range
    baseline_mibps_per_tib: float
    burst_mibps_per_tib: float
    burst_floor_mibps: float
    baseline_floor_mibps: float = Field(description="bursting baseline of a small or empty file system")
    baseline_floor_source: str
    new_file_system_credit_tib: float = Field(description="burst credits a new file system starts with")
    metered_every_s: float = Field(description="how often EFS meters the stored size (the rates follow it)")
    credits_source: str
    elastic_max_read_mibps: float
    elastic_max_write_mibps: float
    per_client_max_mibps: float | None = Field(default=None, description="one client, provisioned/bursting")
    elastic_per_client_max_mibps: float | None = Field(default=None, description="one client, elastic")
    source: str


class FsxTier(_Frozen):
    """Published performance of one throughput tier, MB/s per TiB (10^6 bytes, as FSx publishes it)."""

    per_unit: int | None = Field(default=None, description="PerUnitStorageThroughput; None = not settable")
    network_baseline_mbps_per_tib: float
    network_burst_mbps_per_tib: float | None = None
    disk_baseline_mbps_per_tib: float
    disk_burst_mbps_per_tib: float | None = None
    source: str


class FsxDeployment(_Frozen):
    capacity_gib_allowed: list[int] = Field(description="explicit sizes always allowed")
    capacity_gib_step: int = Field(description="any multiple of this is allowed too")
    capacity_gib_max: int
    per_unit_mibps_per_tib: list[int] = Field(default_factory=list, description="empty: not settable")
    baseline_mibps_per_tib: float
    burst_mibps_per_tib: float | None = None
    storage_type: Literal["SSD", "HDD"] = "SSD"
    tiers: list[FsxTier] = Field(
        default_factory=list, description="per-tier network/disk figures, where known"
    )
    source: str


class ImageSpec(_Frozen):
    """A named instance image: how it resolves per architecture, and what it is.

    Exactly one way to resolve: AWS's public SSM parameters (``ssm_parameters``), or, for
    vendors who publish none (Red Hat), the newest image of ``owners`` whose name matches.
    """

    title: str
    family: Literal["amzn", "rhel", "debian", "ubuntu", "sles"] = Field(
        description="the /etc/os-release family the agent's package table is keyed by"
    )
    operating_system: Literal["Linux", "RHEL"] = Field(
        description="the Price List operatingSystem: RHEL images carry a licence charge"
    )
    ssm_parameters: dict[Architecture, str] = Field(default_factory=dict)
    name_patterns: dict[Architecture, str] = Field(default_factory=dict)
    owners: list[str] = Field(min_length=1, description="image owners EC2 accepts for this name")
    source: str

    @model_validator(mode="after")
    def _one_resolution(self) -> ImageSpec:
        if bool(self.ssm_parameters) == bool(self.name_patterns):
            raise ValueError(f"{self.title}: give ssm_parameters or name_patterns, exactly one")
        return self

    @property
    def architectures(self) -> list[Architecture]:
        return sorted(self.ssm_parameters or self.name_patterns)


class Catalog(_Frozen):
    catalog_version: str
    sources: dict[str, Source]
    ebs: dict[str, EbsVolumeType]
    instances: dict[str, InstanceType]
    efs: EfsRules
    fsx_lustre: dict[str, FsxDeployment]
    images: dict[str, ImageSpec]
    package_rules: dict[str, dict[str, str]] = Field(
        description="tool -> image family -> the source saying the family ships no such package"
    )
    vcpu_quotas: VcpuQuotas = Field(description="EC2's vCPU quota groups: family prefixes, quota codes")

    @model_validator(mode="after")
    def _sources_resolve(self) -> Catalog:
        """Every ``source`` (or ``*_source``) id used anywhere must be in the sources table.

        The error names each citing field by its path (``ebs.gp3.latency.source``), the unknown
        id, and the ids the table does hold.
        """
        missing: list[tuple[str, str]] = []  # (field path, unknown id)

        def visit(node: object, path: str) -> None:
            if isinstance(node, BaseModel):
                for name in type(node).model_fields:
                    value = getattr(node, name)
                    cites = name == "source" or name.endswith("_source")
                    if cites and isinstance(value, str) and value not in self.sources:
                        missing.append((f"{path}.{name}", value))
                    visit(value, f"{path}.{name}")
            elif isinstance(node, dict):
                for key, value in node.items():
                    visit(value, f"{path}.{key}")
            elif isinstance(node, list):
                for index, value in enumerate(node):
                    visit(value, f"{path}[{index}]")

        visit(self.ebs, "ebs")
        visit(self.instances, "instances")
        visit(self.efs, "efs")
        visit(self.fsx_lustre, "fsx_lustre")
        visit(self.images, "images")
        visit(self.vcpu_quotas, "vcpu_quotas")
        missing.extend(
            (f"package_rules.{tool}.{family}", source)
            for tool, families in self.package_rules.items()
            for family, source in families.items()
            if source not in self.sources
        )
        if missing:
            cited = "; ".join(f"{path} {source!r}" for path, source in missing)
            raise ValueError(
                f"catalog cites unknown sources: {cited}; allowed: the ids of the sources table "
                f"({', '.join(sorted(self.sources))})"
            )
        return self

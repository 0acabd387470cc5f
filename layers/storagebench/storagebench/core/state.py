"""The documents that flow through the state machine, one model per shape.

``PlanResult`` leaves the Plan state; each Map iteration carries a ``ConfigState`` from
Provision to Cleanup (every Task returns the state it was given, updated); ``ConfigResult`` is
what an iteration hands to Finalize. Everything a cleanup needs is in ``Resources``, written
by Provision before it returns, so a failure at any later point still knows what to delete.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from storagebench.core.interruption import Interruption
from storagebench.core.launch import Market
from storagebench.core.regression import Regression
from storagebench.core.series import SeriesOutcome, SteadyStateOutcome

GatewayStage = Literal[
    "launching", "activating", "adding-cache", "creating-share", "share-pending", "available"
]
RunStatus = Literal["RUNNING", "SUCCEEDED", "PARTIAL", "FAILED"]
ConfigStatus = Literal["succeeded", "partial", "failed"]
TASK_TIMEOUT_SLACK_S = 600


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class StepTiming(_Model):
    """Poll intervals and deadlines, resolved from the request's ``timing`` section."""

    ready_poll_s: int = Field(ge=1)
    ready_timeout_s: int = Field(ge=1, description="a config not ready by then fails")
    heartbeat_s: int = Field(ge=1, le=600, description="an agent silent this long is presumed dead")
    command_timeout_s: int = Field(ge=1, description="the whole agent run (the SSM execution timeout)")
    task_timeout_s: int = Field(
        default=0, ge=0, description="the RunAgent state's own limit: the command's plus slack (0: derive it)"
    )

    @model_validator(mode="after")
    def _derive_task_timeout(self) -> StepTiming:
        if self.task_timeout_s == 0:  # the command times out first and says why; the state only if it cannot
            self.task_timeout_s = self.command_timeout_s + TASK_TIMEOUT_SLACK_S
        return self


class WorkItem(_Model):
    """One config of one run: what every per-config step starts from."""

    run_id: str
    config_id: str
    suite: str
    region: str
    started_at: str
    expires_at: str
    timing: StepTiming
    artifacts_prefix: str = Field(description="where this config's plan and raw output live")
    attempt: int = Field(
        default=1, ge=1, description="the config's launch: 2 and more after Spot interruptions"
    )


# ------------------------------------------------------------------------ resources


class VolumeRef(_Model):
    target_id: str
    member: int = Field(ge=0, description="position in a stripe")
    device_name: str = Field(description="requested name, e.g. /dev/sdf (NVMe devices get other names)")
    volume_type: str
    size_gib: int
    volume_id: str | None = None
    state: str | None = None
    multi_attach: bool = Field(
        default=False, description="created once for a node group (CreateVolume), attached to each node"
    )


class FileSystemRef(_Model):
    target_id: str
    kind: Literal["efs", "fsx_lustre"]
    file_system_id: str
    dns_name: str | None = None
    mount_name: str | None = None
    mount_target_ids: list[str] = Field(default_factory=list)
    security_group_id: str | None = Field(
        default=None, description="the config's security group, which its mount targets or interfaces join"
    )


class PortRule(_Model):
    """A port range a config's nodes open to each other (and to nothing else)."""

    protocol: Literal["tcp", "udp"] = Field(description="the transport the range is opened for")
    from_port: int = Field(ge=1, le=65535, description="first port of the range")
    to_port: int = Field(ge=1, le=65535, description="last port of the range (from_port for one port)")

    @classmethod
    def parse(cls, text: str) -> PortRule:
        """A role's declared port as the request writes it: ``tcp/4420`` or ``udp/9000-9010``."""
        protocol, _, ports = text.partition("/")
        first, _, last = ports.partition("-")
        if not (first.isdigit() and (last.isdigit() or not last)):
            raise ValueError(f"port rule {text!r}: expected tcp/<port> or tcp/<first>-<last> (udp likewise)")
        return cls.model_validate(
            {"protocol": protocol, "from_port": int(first), "to_port": int(last or first)}
        )

    @model_validator(mode="after")
    def _ordered(self) -> PortRule:
        if self.from_port > self.to_port:
            raise ValueError(
                f"port rule {self.protocol} {self.from_port}-{self.to_port}: from_port must not be above "
                "to_port"
            )
        return self


PlacementStrategy = Literal["cluster", "spread", "partition"]


class NetworkSpec(_Model):
    """What Provision asks the network port for: one security group admitting the config's nodes to
    each other on ``ingress`` alone, and a placement group when ``placement`` names a strategy."""

    run_id: str
    config_id: str
    tags: dict[str, str] = Field(description="the config's labels (run, config, stack, expires-at)")
    ingress: list[PortRule] = Field(description="what the nodes may reach on each other")
    placement: PlacementStrategy | None = Field(
        default=None, description="cluster: low latency (one rack); spread: distinct hardware; None: no group"
    )


class NetworkRef(_Model):
    """What the network port created for a config: what launches put their nodes in and cleanup deletes."""

    security_group_id: str | None = None
    placement_group: str | None = Field(default=None, description="the placement group's name")


class NodeRef(_Model):
    """One machine of a config besides its primary client: a node of a group, or an extra client
    (role ``client``, index 1 and up). Cleanup finds it by the run's and config's tags as well."""

    role: str
    index: int = Field(ge=0)
    instance_id: str | None = None
    volumes: list[VolumeRef] = Field(default_factory=list)
    private_ip: str | None = None
    launched_at: str | None = None
    market: Market | None = None
    availability_zone: str | None = None

    @property
    def name(self) -> str:
        return f"{self.role}-{self.index}"

    def view(self) -> Resources:
        """The node as the compute and agent ports see a machine."""
        return Resources(
            instance_id=self.instance_id,
            volumes=self.volumes,
            private_ip=self.private_ip,
            launched_at=self.launched_at,
            market=self.market,
            availability_zone=self.availability_zone,
        )


class Resources(_Model):
    """Everything this config created in the cloud; cleanup deletes exactly this (and checks tags)."""

    instance_id: str | None = None
    volumes: list[VolumeRef] = Field(default_factory=list)
    file_systems: list[FileSystemRef] = Field(default_factory=list)
    gateways: list[GatewayRef] = Field(
        default_factory=list,
        description="File Gateways (appliance, gateway, share), one per file_gateway target",
    )
    private_ip: str | None = Field(
        default=None, description="the instance's: a gateway's share admits it alone"
    )
    launched_at: str | None = None
    market: Market | None = Field(
        default=None, description="how the instance was bought, as EC2 reports it (its InstanceLifecycle)"
    )
    availability_zone: str | None = Field(
        default=None, description="the instance's zone: a Spot instance is priced from that zone's history"
    )
    network: NetworkRef | None = Field(
        default=None, description="the config's own security group and placement group (nodes, clients)"
    )
    nodes: list[NodeRef] = Field(
        default_factory=list, description="the config's other machines: its node groups' and extra clients"
    )


class GatewayRef(_Model):
    """Everything created for the gateway so far: what readiness continues from and cleanup deletes."""

    target_id: str
    appliance_id: str | None = None
    appliance_ip: str | None = None
    appliance_volume_ids: list[str] = Field(default_factory=list)
    gateway_arn: str | None = None
    cache_disk_ids: list[str] = Field(default_factory=list)
    file_share_arn: str | None = None
    share_status: str | None = None
    share_path: str | None = None
    bucket: str
    prefix: str = Field(description="the run's key prefix in the bucket (its objects are deleted at the end)")

    @property
    def stage(self) -> GatewayStage:
        if self.appliance_id is None or self.appliance_ip is None:
            return "launching"
        if self.gateway_arn is None:
            return "activating"
        if not self.cache_disk_ids:
            return "adding-cache"
        if self.file_share_arn is None:
            return "creating-share"
        if self.share_status != "AVAILABLE":
            return "share-pending"
        return "available"


class LaunchVolume(_Model):
    target_id: str
    member: int
    device_name: str
    volume_type: str
    size_gib: int
    iops: int | None = None
    throughput_mibps: int | None = None
    encrypted: bool = True
    snapshot_id: str | None = None
    initialization_rate_mibps: int | None = None
    share_token: str | None = Field(
        default=None,
        description="Multi-Attach: CreateVolume's client token, the same for every node of the group "
        "(one volume, created by the first node's launch and found by the others'); None: launched with "
        "the instance (RunInstances block device mapping)",
    )


class ImageRef(_Model):
    """How a launch finds its image: an AMI id, an SSM parameter holding one, or the newest image
    of ``owners`` whose name matches ``name_pattern`` (vendors without public parameters)."""

    label: str = Field(description="what the request said: al2023, ami-..., /path, ...")
    ami_id: str | None = None
    ssm_parameter: str | None = None
    name_pattern: str | None = None
    owners: list[str] = Field(default_factory=list, description="owners the resolved image must have")

    @model_validator(mode="after")
    def _one_way(self) -> ImageRef:
        ways = [w for w in (self.ami_id, self.ssm_parameter, self.name_pattern) if w]
        if len(ways) != 1:
            raise ValueError(f"image {self.label!r}: give one of ami_id, ssm_parameter, name_pattern")
        if self.name_pattern and not self.owners:
            raise ValueError(f"image {self.label!r}: a name pattern needs its owners")
        return self


class LaunchSpec(_Model):
    """What Provision asks the compute port for; the adapter adds subnet, profile and group."""

    client_token: str = Field(max_length=64, description="makes a retried launch idempotent")
    instance_type: str
    architecture: Literal["x86_64", "arm64"]
    root: LaunchVolume
    volumes: list[LaunchVolume]
    tags: dict[str, str]
    image: ImageRef | None = Field(
        default=None, description="None: the adapter's own image (the File Gateway appliance)"
    )
    ebs_optimized: bool | None = Field(
        default=None, description="True: ask for EBS optimisation (types where it is optional)"
    )
    market: Market = Field(
        default="on-demand", description="spot: a one-time Spot request that terminates when interrupted"
    )
    security_group_ids: list[str] = Field(
        default_factory=list, description="the config's own groups, besides the stack's instance group"
    )
    placement_group: str | None = Field(default=None, description="the config's placement group, by name")


class FileSystemSpec(_Model):
    target_id: str
    kind: Literal["efs", "fsx_lustre"]
    creation_token: str = Field(max_length=64)
    tags: dict[str, str]
    settings: dict[str, object] = Field(description="the request target's fields, as validated")
    security_group_id: str = Field(
        description="the config's security group (admits the file system's ports from the config only)"
    )


# ------------------------------------------------------------------------ progress


class ComputeStatus(_Model):
    """What the provider says about an instance and its volumes right now."""

    instance_state: str = Field(description="pending, running, shutting-down, terminated, ...")
    status_checks_ok: bool
    volumes_in_use: bool
    volumes_initialized: bool = True
    volumes: list[VolumeRef] = Field(default_factory=list)
    private_ip: str | None = None
    reason: str | None = None
    reason_code: str | None = Field(
        default=None, description="EC2's state reason code (Server.SpotInstanceTermination, ...)"
    )


class ReadyStatus(_Model):
    state: Literal["waiting", "ready", "failed"]
    reason: str
    checks: dict[str, bool] = Field(default_factory=dict)
    polls: int = 0
    first_poll_at: str | None = None


class AgentRun(_Model):
    command_id: str | None
    plan_key: str
    output_prefix: str
    started_at: str


class AgentOutcome(_Model):
    """What the agent's callback (or its absence) said."""

    status: Literal["completed", "failed", "lost"]
    exit_code: int | None = None
    detail: str | None = None


class ErrorInfo(_Model):
    step: str
    error: str
    cause: str


class CollectSummary(_Model):
    status: Literal["ok", "partial", "failed"]
    records: int
    problems: list[str] = Field(default_factory=list)
    # Measurements kept with a label (too small to measure): a warning, not a reason for "partial"
    warnings: list[str] = Field(default_factory=list)
    agent_status: str | None = None
    # How repetitions stopped: adaptive series (spent, why) and fio's steady-state verdicts
    series: list[SeriesOutcome] = Field(default_factory=list)
    steady_state: list[SteadyStateOutcome] = Field(default_factory=list)


class CleanupReport(_Model):
    deleted: list[str] = Field(default_factory=list)
    leftovers: list[str] = Field(default_factory=list)


class ConfigState(_Model):
    item: WorkItem
    resources: Resources = Field(default_factory=Resources)
    ready: ReadyStatus | None = None
    agent: AgentRun | None = None
    outcome: AgentOutcome | None = None
    collected: CollectSummary | None = None
    cleanup: CleanupReport | None = None
    errors: list[ErrorInfo] = Field(default_factory=list)
    # Set by the state machine's Catch blocks (one ResultPath each, so a later catch never
    # overwrites an earlier error); the next step folds them into errors so nothing caught is lost.
    caught: dict[str, str] | None = None  # Provision, CheckReady, RunAgent
    record_error: dict[str, str] | None = None  # RecordFailure / RecordAgentFailure itself
    caught_collect: dict[str, str] | None = None  # Collect
    caught_cleanup: dict[str, str] | None = None  # Cleanup (then CleanupFailed -> Finalize)
    # Spot interruptions of earlier attempts and of this one; ``interrupted`` is Cleanup's caught
    # ConfigInterruptedError, which sends the config back to Provision for its next attempt.
    interruptions: list[Interruption] = Field(default_factory=list)
    interrupted: dict[str, str] | None = None


class ConfigResult(_Model):
    run_id: str
    config_id: str
    status: ConfigStatus
    records: int
    errors: list[ErrorInfo] = Field(default_factory=list)
    leftovers: list[str] = Field(default_factory=list)
    interruptions: list[Interruption] = Field(
        default_factory=list, description="Spot interruptions of the config's attempts, in order"
    )


# ------------------------------------------------------------------------ run level


INLINE_MAP_MAX_CONFIGS = 40
"""Configs a run holds in the inline Map (its items in the state); past that, the Distributed Map."""


class PlanResult(_Model):
    run_id: str
    suite: str
    started_at: str
    max_concurrency: int = Field(ge=1, le=40)
    items: list[WorkItem] = Field(
        description="the work items, in the state for the inline Map; empty past INLINE_MAP_MAX_CONFIGS "
        "(work_items_key holds them: 500 items would crowd the state's 256 KiB)"
    )
    config_ids: list[str] = Field(description="every config of the run, whichever Map runs them (SweepRun)")
    map_mode: Literal["inline", "distributed"] = Field(
        description="which Map runs the configs (RouteConfigs): inline up to INLINE_MAP_MAX_CONFIGS, "
        "distributed past that"
    )
    work_items_key: str | None = Field(
        default=None, description="the artifacts key of the work items the Distributed Map reads (ItemReader)"
    )


class RunSummary(_Model):
    run_id: str
    suite: str
    status: RunStatus
    configs: list[ConfigResult]
    records: int
    started_at: str
    ended_at: str
    regressions: list[Regression] = Field(
        default_factory=list,
        description="metrics outside their noise band against the suite's last runs (flagged only, "
        "regressions first; every verdict is in the store: get_regressions)",
    )
    regression_notes: list[str] = Field(
        default_factory=list, description="how the comparison went, or why it did not (never fails a run)"
    )
    economics: dict[str, Any] | None = Field(
        default=None,
        description="each config's monthly cost, delta and verdict against the baseline, and the run's "
        "cost (costs.economics.economics_summary); None when pricing failed (see economics_notes)",
    )
    economics_notes: list[str] = Field(default_factory=list)
    report: dict[str, str] | None = Field(default=None, description="the run's report: URI by format")
    report_notes: list[str] = Field(default_factory=list)
    notified: list[str] = Field(default_factory=list, description="kinds of the notifications sent")
    notification_notes: list[str] = Field(
        default_factory=list, description="notifications the channel refused (never fails a run)"
    )

"""What one benchmark run cost, from what it actually used.

Inputs are plain numbers (dataclasses), so the workflow can feed them from its stored state
later and tests can write them by hand:

- per config (:class:`ConfigUsage`): instance seconds and each volume's seconds, from launch to
  cleanup (a File Gateway's appliance: :class:`GatewayUsage`, its disks as volumes); each file
  system's seconds and size (EFS: data stored; FSx: capacity), and EFS Elastic
  bytes moved;
- the run's Step Functions state transitions (:func:`count_transitions`, or
  :func:`transitions_from_states` from the stored config states' ``ready.polls``);
- Lambda time (:class:`LambdaUsage`: invocations x memory x average duration).

Billing rules applied (AWS's published ones; the constants below name them):

- EC2 Linux on-demand and EBS volumes bill per second with a 60-second minimum; a volume's
  monthly price (storage, provisioned IOPS by tier, gp3 throughput) is prorated by the second
  over a 730-hour month.
- EFS and FSx are billed here by the hour, a started hour counting as a whole one.
- Step Functions Standard: per state transition; inline Map iterations are not charged themselves
  (AWS: "If you use the Map state in Inline mode, you're not charged a state transition for each
  iteration"), so the Map costs one transition for the Map state, plus the states each iteration runs.
- Lambda: GB-seconds (memory in MB / 1,024 x seconds) plus requests.

Free tiers are not subtracted: a run is priced as if the account had used them up.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, computed_field

from storagebench.catalog.images import operating_system
from storagebench.core.clock import parse_iso
from storagebench.core.state import ConfigState
from storagebench.costs.monthly import (
    ROOT_TARGET_ID,
    CostComponent,
    PriceLookup,
    asking,
    combine_sources,
    ebs_volume_components,
    efs_components,
    fmt_rate,
    fsx_lustre_components,
    launch_surcharges,
    oldest_date,
)
from storagebench.kinds import kind_of
from storagebench.kinds.base import EbsVolumeBill, InstanceBill
from storagebench.prices.book import PriceBook
from storagebench.prices.models import HOURS_PER_MONTH, Price, PriceSource
from storagebench.prices.products import PriceKey
from storagebench.prices.spot import SpotCharge
from storagebench.request.model import Config, EfsTarget, FsxLustreTarget, RootVolume

__all__ = [
    "EBS_MINIMUM_S",
    "EC2_MINIMUM_S",
    "MAP_OVERHEAD_PER_CONFIG",
    "RUN_LEVEL_TRANSITIONS",
    "TRANSITIONS_PER_POLL",
    "ConfigTransitions",
    "ConfigUsage",
    "FileSystemUsage",
    "GatewayUsage",
    "LambdaUsage",
    "RunComponent",
    "RunCost",
    "TransitionCount",
    "VolumeUsage",
    "count_transitions",
    "run_cost",
    "seconds_between",
    "spot_price",
    "transitions_from_state",
    "transitions_from_states",
    "usage_for_config",
]

EC2_MINIMUM_S = 60
"""Linux on-demand instances bill per second, at least 60 seconds."""
EBS_MINIMUM_S = 60
"""EBS volumes bill per second, at least 60 seconds."""
SECONDS_PER_MONTH = HOURS_PER_MONTH * 3600
RUN_LEVEL_TRANSITIONS = 3
"""Plan, Configs (the Map state itself) and Finalize."""
TRANSITIONS_PER_POLL = 3
"""WaitUntilReady, CheckReady, IsReady."""
MAP_OVERHEAD_PER_CONFIG = 0
"""Transitions an inline Map iteration costs beyond its own states: none, per AWS's pricing."""

RunComponentName = Literal[
    "instance",
    "gateway-instance",
    "licence",
    "ebs-optimized",
    "ebs-storage",
    "ebs-iops",
    "ebs-throughput",
    "efs-storage",
    "efs-throughput",
    "efs-elastic",
    "fsx-storage",
    "stepfunctions",
    "lambda-compute",
    "lambda-requests",
]


# ------------------------------------------------------------------------------------- inputs


@dataclass(frozen=True)
class VolumeUsage:
    """One EBS volume (root or a stripe member) and how long it existed."""

    volume_type: str
    size_gib: float
    seconds: float
    iops: int | None = None
    throughput_mibps: float | None = None
    target_id: str = ROOT_TARGET_ID
    member: int | None = None


@dataclass(frozen=True)
class FileSystemUsage:
    """One EFS or FSx for Lustre file system: the target as requested and how long it existed.

    ``stored_gib`` is EFS's data stored (None: the target's ``storage_gib_hint``); FSx bills its
    capacity. ``read_gb`` / ``written_gb`` are EFS Elastic bytes moved (GB, as AWS bills them).
    """

    target: EfsTarget | FsxLustreTarget
    seconds: float
    stored_gib: float | None = None
    read_gb: float = 0.0
    written_gb: float = 0.0


@dataclass(frozen=True)
class GatewayUsage:
    """A File Gateway appliance instance and how long it ran (its disks are :class:`VolumeUsage`)."""

    target_id: str
    instance_type: str
    seconds: float


@dataclass(frozen=True)
class ConfigUsage:
    config_id: str
    instance_type: str
    instance_seconds: float
    volumes: Sequence[VolumeUsage] = ()
    file_systems: Sequence[FileSystemUsage] = ()
    gateways: Sequence[GatewayUsage] = ()
    operating_system: str = "Linux"
    ebs_optimized: bool = False  # launched EBS-optimized where that is optional (a fee)
    spot: SpotCharge | None = None  # a Spot instance: what it paid (None: priced on-demand)


@dataclass(frozen=True)
class LambdaUsage:
    """One function's share of the run: ``invocations`` x ``memory_mb`` x ``avg_duration_ms``."""

    function: str
    invocations: int
    memory_mb: int
    avg_duration_ms: float
    architecture: Literal["x86_64", "arm64"] = "x86_64"


@dataclass(frozen=True)
class ConfigTransitions:
    """The path one config took through the Map iteration, enough to count its transitions.

    ``polls``: successful readiness polls (each Wait + CheckReady + IsReady). A readiness check that
    failed (``failed_poll``) adds its Wait and CheckReady. ``reached_agent``: RunAgent and Collect ran
    (else RecordFailure did); ``agent_failed``: RecordAgentFailure ran; ``cleanup_failed``: the
    CleanupFailed pass ran; ``retries``: Task retries (each is a transition).
    """

    config_id: str
    polls: int
    reached_agent: bool = True
    agent_failed: bool = False
    failed_poll: bool = False
    cleanup_failed: bool = False
    retries: int = 0

    def count(self, map_overhead: int = MAP_OVERHEAD_PER_CONFIG) -> int:
        n = 1  # Provision
        n += TRANSITIONS_PER_POLL * self.polls
        if self.failed_poll:
            n += 2  # WaitUntilReady + the CheckReady that raised
        if self.reached_agent:
            n += 2  # RunAgent, Collect
            n += 1 if self.agent_failed else 0  # RecordAgentFailure
        else:
            n += 1  # RecordFailure
        n += 1  # Cleanup
        n += 1 if self.cleanup_failed else 0  # CleanupFailed
        return n + self.retries + map_overhead


@dataclass(frozen=True)
class TransitionCount:
    per_config: dict[str, int]
    run_level: int
    notes: list[str] = field(default_factory=list)

    @property
    def total(self) -> int:
        return self.run_level + sum(self.per_config.values())


def count_transitions(
    configs: Iterable[ConfigTransitions],
    *,
    run_level: int = RUN_LEVEL_TRANSITIONS,
    map_overhead_per_config: int = MAP_OVERHEAD_PER_CONFIG,
) -> TransitionCount:
    """Per config: Provision + 3 per poll + RunAgent + Collect + Cleanup (+ failure states, retries,
    Map overhead); plus the run's Plan, Map state and Finalize."""
    return TransitionCount(
        per_config={c.config_id: c.count(map_overhead_per_config) for c in configs}, run_level=run_level
    )


def transitions_from_state(state: ConfigState | Mapping[str, Any], retries: int = 0) -> ConfigTransitions:
    """The path a config took, read from its stored state (``ready.polls``, errors by step)."""
    config_state = state if isinstance(state, ConfigState) else ConfigState.model_validate(state)
    steps = {e.step for e in config_state.errors}
    if config_state.caught_cleanup:
        steps.add("cleanup")
    ready = config_state.ready
    reached = ready is not None and ready.state == "ready"
    return ConfigTransitions(
        config_id=config_state.item.config_id,
        polls=ready.polls if ready else 0,
        reached_agent=reached,
        agent_failed=reached and "agent" in steps,
        failed_poll=not reached and "ready" in steps,
        cleanup_failed="cleanup" in steps,
        retries=retries,
    )


def transitions_from_states(
    states: Iterable[ConfigState | Mapping[str, Any]],
    *,
    run_level: int = RUN_LEVEL_TRANSITIONS,
    map_overhead_per_config: int = MAP_OVERHEAD_PER_CONFIG,
) -> TransitionCount:
    """:func:`count_transitions` over stored config states. Retries are not in the state: the count
    is then a floor, and says so."""
    count = count_transitions(
        (transitions_from_state(s) for s in states),
        run_level=run_level,
        map_overhead_per_config=map_overhead_per_config,
    )
    count.notes.append("Task retries are not recorded in the config state: the count is a floor")
    return count


def seconds_between(start: str, end: str) -> float:
    """Seconds from one ISO timestamp to another (e.g. resources.launched_at to the cleanup time)."""
    delta = (parse_iso(end) - parse_iso(start)).total_seconds()
    if delta < 0:
        raise ValueError(f"{end} is before {start}")
    return delta


def usage_for_config(
    config: Config,
    seconds: float,
    *,
    file_system_seconds: float | None = None,
    efs_stored_gib: Mapping[str, float] | None = None,
    efs_transfer_gb: Mapping[str, tuple[float, float]] | None = None,
) -> ConfigUsage:
    """A config's usage when everything lived ``seconds`` (file systems: ``file_system_seconds``).

    ``efs_stored_gib`` and ``efs_transfer_gb`` ((read, written) GB) are per EFS target id.
    """
    volumes = [_root_usage(config.root_volume, seconds)]
    file_systems: list[FileSystemUsage] = []
    gateways: list[GatewayUsage] = []
    fs_seconds = seconds if file_system_seconds is None else file_system_seconds
    for target in config.targets:
        for item in kind_of(target).bill(target, config.instance_type).items:
            if isinstance(item, InstanceBill):
                gateways.append(GatewayUsage(item.target_id, item.instance_type, seconds))
            elif isinstance(item, EbsVolumeBill):
                volumes.append(_volume_usage(item, seconds))
            else:
                tid = str(item.target.id)
                read, written = (efs_transfer_gb or {}).get(tid, (0.0, 0.0))
                file_systems.append(
                    FileSystemUsage(
                        target=item.target,
                        seconds=fs_seconds,
                        stored_gib=(efs_stored_gib or {}).get(tid),
                        read_gb=read,
                        written_gb=written,
                    )
                )
    return ConfigUsage(
        config_id=config.id,
        instance_type=config.instance_type,
        instance_seconds=seconds,
        volumes=volumes,
        file_systems=file_systems,
        gateways=gateways,
        operating_system=operating_system(config.image),
        ebs_optimized=bool(config.launch_ebs_optimized),
    )


def other_machine_usages(config: Config, seconds: float) -> list[ConfigUsage]:
    """The config's other machines for ``seconds`` each (they live as long as the config): every
    extra client with its root volume (the shared targets are the primary's usage), every node with
    its root and data volumes; on-demand, as multi-machine configs are bought."""
    usages: list[ConfigUsage] = []
    client_root = _root_usage(config.root_volume, seconds)
    for _ in range(1, config.clients):
        usages.append(
            ConfigUsage(
                config_id=config.id,
                instance_type=config.instance_type,
                instance_seconds=seconds,
                volumes=[client_root],
                operating_system=operating_system(config.image),
                ebs_optimized=bool(config.launch_ebs_optimized),
            )
        )
    for group in config.nodes:
        volumes = [_root_usage(group.root_volume, seconds)]
        for target in group.targets:
            for item in kind_of(target).bill(target, group.instance_type).items:
                if isinstance(item, EbsVolumeBill):
                    volumes.append(_volume_usage(item, seconds, prefix=f"{group.role}:"))
        usages += [
            ConfigUsage(
                config_id=config.id,
                instance_type=group.instance_type,
                instance_seconds=seconds,
                volumes=volumes,
                operating_system=operating_system(group.image),
                ebs_optimized=bool(group.launch_ebs_optimized),
            )
            for _ in range(group.count)
        ]
    return usages


def _volume_usage(item: EbsVolumeBill, seconds: float, prefix: str = "") -> VolumeUsage:
    """A billed data volume for ``seconds`` (``prefix``: a node's ``<role>:``)."""
    return VolumeUsage(
        volume_type=item.volume_type,
        size_gib=item.size_gib,
        seconds=seconds,
        iops=item.iops,
        throughput_mibps=item.throughput_mibps,
        target_id=f"{prefix}{item.target_id}",
        member=item.member,
    )


def _root_usage(root: RootVolume, seconds: float) -> VolumeUsage:
    return VolumeUsage(
        volume_type=root.type,
        size_gib=root.size_gib,
        seconds=seconds,
        iops=root.iops,
        throughput_mibps=root.throughput_mibps,
    )


# ------------------------------------------------------------------------------------- output


class RunComponent(BaseModel):
    """One billed line of a run, with the price it used."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: RunComponentName
    config_id: str | None = Field(description="None for orchestration (Step Functions, Lambda)")
    target_id: str | None = None
    member: int | None = None
    quantity: float = Field(ge=0, description="billed units: seconds, GB-seconds, GB-hours, transitions, ...")
    unit: str
    usd: float = Field(ge=0)
    price_usd: float = Field(ge=0, description="the book's price ...")
    price_unit: str = Field(description="... per this unit")
    source: PriceSource
    as_of: str
    detail: str


class RunCost(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    region: str
    currency: Literal["USD"] = "USD"
    components: list[RunComponent]
    transitions: int
    missing_prices: list[str] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list)

    @computed_field  # type: ignore[prop-decorator]
    @property
    def total_usd(self) -> float:
        return math.fsum(c.usd for c in self.components)

    @computed_field  # type: ignore[prop-decorator]
    @property
    def infrastructure_usd(self) -> float:
        """Instances, volumes and file systems."""
        return math.fsum(c.usd for c in self.components if c.config_id is not None)

    @computed_field  # type: ignore[prop-decorator]
    @property
    def orchestration_usd(self) -> float:
        """Step Functions and Lambda."""
        return math.fsum(c.usd for c in self.components if c.config_id is None)

    @computed_field  # type: ignore[prop-decorator]
    @property
    def price_source(self) -> str:
        return combine_sources(c.source for c in self.components)

    @computed_field  # type: ignore[prop-decorator]
    @property
    def price_date(self) -> str | None:
        return oldest_date(c.as_of for c in self.components)

    @computed_field  # type: ignore[prop-decorator]
    @property
    def by_config(self) -> dict[str, float]:
        """Infrastructure cost per config (orchestration is the run's)."""
        out: dict[str, float] = {}
        for c in self.components:
            if c.config_id is not None:
                out[c.config_id] = out.get(c.config_id, 0.0) + c.usd
        return out


def _line(
    name: RunComponentName,
    price: Price,
    quantity: float,
    unit: str,
    usd: float,
    *,
    config_id: str | None,
    detail: str,
    target_id: str | None = None,
    member: int | None = None,
) -> RunComponent:
    return RunComponent(
        name=name,
        config_id=config_id,
        target_id=target_id,
        member=member,
        quantity=quantity,
        unit=unit,
        usd=usd,
        price_usd=price.usd,
        price_unit=price.unit,
        source=price.source,
        as_of=price.as_of,
        detail=detail,
    )


def _prorated(
    monthly: CostComponent, config_id: str, billed_s: float, unit: str, quantity: float, what: str
) -> RunComponent:
    """A monthly component kept for ``billed_s`` seconds."""
    return RunComponent(
        name=monthly.name,
        config_id=config_id,
        target_id=monthly.target_id,
        member=monthly.member,
        quantity=quantity,
        unit=unit,
        usd=monthly.monthly_usd * billed_s / SECONDS_PER_MONTH,
        price_usd=monthly.unit_usd,
        price_unit=monthly.unit,
        source=monthly.source,
        as_of=monthly.as_of,
        detail=f"{monthly.detail}, for {what}",
    )


def _duration(seconds: float) -> str:
    if seconds >= 3600:
        return f"{seconds / 3600:,.2f} h"
    return f"{seconds:,.0f} s"


def _check(value: float, what: str) -> None:
    if not math.isfinite(value) or value < 0:
        raise ValueError(f"{what} must be a non-negative number, got {value!r}")


def _gateway_line(cid: str, gateway: GatewayUsage, book: PriceBook, ask: PriceLookup) -> RunComponent | None:
    """A File Gateway appliance's instance time, billed like any Linux instance."""
    _check(gateway.seconds, f"{cid}: gateway {gateway.target_id} seconds")
    rate = ask(
        f"EC2 {gateway.instance_type} on-demand",
        lambda: book.price(PriceKey("ec2_instance_hour", (gateway.instance_type,))),
    )
    if rate is None:
        return None
    billed = max(float(EC2_MINIMUM_S), gateway.seconds) if gateway.seconds > 0 else 0.0
    return _line(
        "gateway-instance",
        rate,
        billed,
        "s",
        rate.usd * billed / 3600,
        config_id=cid,
        target_id=gateway.target_id,
        detail=(
            f"{gateway.target_id}: gateway appliance {gateway.instance_type}: {_duration(billed)} "
            f"x {fmt_rate(rate.usd)}/{rate.unit} (per second, {EC2_MINIMUM_S} s minimum)"
        ),
    )


def spot_price(charge: SpotCharge, region: str) -> Price:
    """The time-weighted Spot price an instance paid, as the price of its instance line."""
    return Price(
        usd=charge.average_usd_per_hour,
        unit="Hrs",
        region=region,
        source="spot-price-history",
        as_of=charge.as_of,
        description=charge.describe(),
    )


def _instance_lines(usage: ConfigUsage, book: PriceBook, ask: PriceLookup) -> list[RunComponent]:
    """The instance for the time it existed (on-demand, or the Spot price it paid), with its licence
    and EBS optimisation fee."""
    cid = usage.config_id
    if usage.spot is not None:
        hourly: Price | None = spot_price(usage.spot, book.region)
        market = f"Spot in {usage.spot.zone}, time-weighted over {len(usage.spot.segments)} price(s)"
    else:
        hourly = ask(
            f"EC2 {usage.instance_type} on-demand",
            asking(book, PriceKey("ec2_instance_hour", (usage.instance_type,))),
        )
        market = "on-demand"
    if hourly is None:
        return []
    billed = max(float(EC2_MINIMUM_S), usage.instance_seconds) if usage.instance_seconds > 0 else 0.0
    rule = f"({market}; per second, {EC2_MINIMUM_S} s minimum)"
    hours = f"{_duration(billed)} x {fmt_rate(hourly.usd)}/{hourly.unit}"
    lines = [
        _line(
            "instance",
            hourly,
            billed,
            "s",
            hourly.usd * billed / 3600,
            config_id=cid,
            detail=f"{usage.instance_type}: {hours} {rule}",
        )
    ]
    extras = launch_surcharges(book, usage.instance_type, usage.operating_system, usage.ebs_optimized, ask)
    for name, rate, what in extras:
        rated = f"{_duration(billed)} x {fmt_rate(rate.usd)}/{rate.unit}"
        lines.append(
            _line(
                name,
                rate,
                billed,
                "s",
                rate.usd * billed / 3600,
                config_id=cid,
                detail=f"{usage.instance_type} {what}: {rated}",
            )
        )
    return lines


def run_cost(
    configs: Sequence[ConfigUsage],
    book: PriceBook,
    *,
    transitions: int | TransitionCount = 0,
    lambdas: Sequence[LambdaUsage] = (),
) -> RunCost:
    """The run's cost: every config's infrastructure for the time it existed, plus orchestration."""
    ask = PriceLookup()
    lines: list[RunComponent] = []
    notes: list[str] = ["free tiers (Step Functions, Lambda) are not subtracted"]
    for usage in configs:
        cid = usage.config_id
        _check(usage.instance_seconds, f"{cid}: instance_seconds")
        lines += _instance_lines(usage, book, ask)
        lines += [line for g in usage.gateways if (line := _gateway_line(cid, g, book, ask)) is not None]
        for volume in usage.volumes:
            _check(volume.seconds, f"{cid}: volume seconds")
            billed = max(float(EBS_MINIMUM_S), volume.seconds) if volume.seconds > 0 else 0.0
            monthly, _ = ebs_volume_components(
                book,
                volume.volume_type,
                volume.size_gib,
                volume.iops,
                volume.throughput_mibps,
                target_id=volume.target_id,
                member=volume.member,
                ask=ask,
            )
            unit_of = {"ebs-storage": "GB-s", "ebs-iops": "IOPS-s", "ebs-throughput": "MiBps-s"}
            lines += [
                _prorated(
                    part,
                    cid,
                    billed,
                    unit_of.get(part.name, "unit-s"),
                    part.quantity * billed,
                    _duration(billed),
                )
                for part in monthly
            ]
        for fs in usage.file_systems:
            _check(fs.seconds, f"{cid}: file system seconds")
            hours = math.ceil(fs.seconds / 3600) if fs.seconds > 0 else 0
            tid = str(fs.target.id)
            what = f"{hours} started hour(s)"
            if fs.target.kind == "efs":  # EFS bills stored bytes and Elastic transfers; FSx capacity
                parts, _, _ = efs_components(book, fs.target, stored_gib=fs.stored_gib, ask=ask)
                if fs.stored_gib is None and fs.target.storage_gib_hint is None:
                    notes.append(f"{cid}/{tid}: EFS storage not priced: no stored size measured or hinted")
                if fs.target.throughput_mode == "elastic" and (fs.read_gb or fs.written_gb):
                    moved: tuple[tuple[Literal["read", "write"], float], ...] = (
                        ("read", fs.read_gb),
                        ("write", fs.written_gb),
                    )
                    for direction, gb in moved:
                        if gb <= 0:
                            continue
                        price = ask(
                            f"EFS Elastic {direction}s",
                            asking(book, PriceKey("efs_elastic_transfer", (direction,))),
                        )
                        if price is not None:
                            lines.append(
                                _line(
                                    "efs-elastic",
                                    price,
                                    gb,
                                    "GB",
                                    gb * price.usd,
                                    config_id=cid,
                                    target_id=tid,
                                    detail=(
                                        f"{tid}: EFS Elastic {gb:,.2f} GB {direction} "
                                        f"x {fmt_rate(price.usd)}/{price.unit}"
                                    ),
                                )
                            )
            else:
                parts = fsx_lustre_components(book, fs.target, ask=ask)
            unit_of_fs = {"efs-storage": "GB-h", "fsx-storage": "GB-h", "efs-throughput": "MiBps-h"}
            lines += [
                _prorated(
                    part,
                    cid,
                    hours * 3600.0,
                    unit_of_fs.get(part.name, "unit-h"),
                    part.quantity * hours,
                    what,
                )
                for part in parts
            ]
    count = transitions.total if isinstance(transitions, TransitionCount) else transitions
    if isinstance(transitions, TransitionCount):
        notes += transitions.notes
    if count:
        price = ask(
            "Step Functions state transition", lambda: book.price(PriceKey("stepfunctions_transition"))
        )
        if price is not None:
            lines.append(
                _line(
                    "stepfunctions",
                    price,
                    count,
                    "transitions",
                    count * price.usd,
                    config_id=None,
                    detail=(
                        f"Step Functions Standard: {count:,} transitions x {fmt_rate(price.usd)}/{price.unit}"
                    ),
                )
            )
    for fn in lambdas:
        _check(fn.avg_duration_ms, f"{fn.function}: avg_duration_ms")
        gb_s = fn.invocations * fn.memory_mb / 1024 * fn.avg_duration_ms / 1000
        compute = ask(
            f"Lambda {fn.architecture} GB-second",
            asking(book, PriceKey("lambda_gb_second", (fn.architecture,))),
        )
        if compute is not None and gb_s > 0:
            lines.append(
                _line(
                    "lambda-compute",
                    compute,
                    gb_s,
                    "GB-s",
                    gb_s * compute.usd,
                    config_id=None,
                    target_id=fn.function,
                    detail=(
                        f"{fn.function}: {fn.invocations:,} x {fn.memory_mb} MB "
                        f"x {fn.avg_duration_ms:,.0f} ms "
                        f"= {gb_s:,.1f} GB-s x {fmt_rate(compute.usd)}/{compute.unit}"
                    ),
                )
            )
        requests = ask("Lambda requests", lambda: book.price(PriceKey("lambda_request")))
        if requests is not None and fn.invocations > 0:
            lines.append(
                _line(
                    "lambda-requests",
                    requests,
                    fn.invocations,
                    "requests",
                    fn.invocations * requests.usd,
                    config_id=None,
                    target_id=fn.function,
                    detail=(
                        f"{fn.function}: {fn.invocations:,} requests "
                        f"x {fmt_rate(requests.usd)}/{requests.unit}"
                    ),
                )
            )
    return RunCost(
        region=book.region,
        components=lines,
        transitions=count,
        missing_prices=ask.missing,
        notes=notes,
    )

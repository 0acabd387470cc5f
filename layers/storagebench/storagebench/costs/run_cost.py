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

The usage inputs are ``costs.run_usage``, the transition counts ``costs.state_transitions``;
this module prices them and re-exports their names.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, computed_field

from storagebench.costs.monthly import (
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
from storagebench.costs.run_usage import (
    ConfigUsage,
    FileSystemUsage,
    GatewayUsage,
    LambdaUsage,
    VolumeUsage,
    other_machine_usages,
    seconds_between,
    usage_for_config,
)
from storagebench.costs.state_transitions import (
    MAP_OVERHEAD_PER_CONFIG,
    RUN_LEVEL_TRANSITIONS,
    TRANSITIONS_PER_POLL,
    ConfigTransitions,
    TransitionCount,
    count_transitions,
    transitions_from_state,
    transitions_from_states,
)
from storagebench.prices.book import PriceBook
from storagebench.prices.models import HOURS_PER_MONTH, Price, PriceSource
from storagebench.prices.products import PriceKey
from storagebench.prices.spot import SpotCharge

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
    "other_machine_usages",
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

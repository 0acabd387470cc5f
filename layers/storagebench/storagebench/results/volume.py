"""The volume's side of a record: what EBS (or the kernel, for emulated volumes) saw during a phase.

The agent stores, per phase, one entry per device (``storagebench.agent.ebs_stats.summary``);
the instance wrote it, so it is validated here like any other instance output, and a bad entry
is a named problem, never a lost record. A record gets the view of its direction summed over the
target's devices (a RAID0 set is several volumes): operations and bytes add up, the mean latency
is total time over total operations, histograms add bin by bin, and the seconds bound by a limit
are the most any one member spent bound (members are throttled each on its own).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from storagebench.results.errors import ParseError

Source = Literal["nvme-log-page", "kernel-counters"]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class _DirectionView(_Strict):
    ops: int = Field(ge=0)
    bytes: int = Field(ge=0)
    mean_latency_us: float | None = Field(default=None, ge=0)
    histogram: list[tuple[int, int, int]] | None = None


class _Throttles(_Strict):
    volume_iops: float | None = Field(default=None, ge=0)
    volume_throughput: float | None = Field(default=None, ge=0)
    instance_iops: float | None = Field(default=None, ge=0)
    instance_throughput: float | None = Field(default=None, ge=0)


class DeviceView(_Strict):
    """One device's phase, as the agent wrote it."""

    device: str
    volume_id: str | None = None
    source: Source
    directions: dict[Literal["read", "write"], _DirectionView]
    throttled_s: _Throttles
    queue_length: int | None = None


class VolumeBucket(_Strict):
    """Operations that completed in [lower_us, upper_us)."""

    lower_us: int
    upper_us: int
    count: int = Field(ge=0)


class VolumeSide(_Strict):
    """A record's direction, as the volume saw it."""

    source: Source
    devices: int = Field(ge=1)
    ops: int = Field(ge=0)
    bytes: int = Field(ge=0)
    iops: float | None = Field(default=None, description="ops over the record's runtime")
    bw_mibps: float | None = None
    mean_latency_us: float | None = None
    histogram: list[VolumeBucket] | None = Field(
        default=None, description="EBS's latency histogram (None for emulated volumes)"
    )
    volume_iops_bound_s: float | None = Field(default=None, description="demand over provisioned IOPS")
    volume_throughput_bound_s: float | None = None
    instance_iops_bound_s: float | None = Field(
        default=None, description="demand over the instance's EBS IOPS"
    )
    instance_throughput_bound_s: float | None = None


def parse_views(raw: Any) -> tuple[list[DeviceView], list[str]]:
    """The phase's ``volume`` entries: the valid views, and a problem line for each bad one."""
    if raw is None:
        return [], []
    if not isinstance(raw, list):
        return [], [f"volume: expected a list of device views, got {type(raw).__name__}"]
    views: list[DeviceView] = []
    problems: list[str] = []
    for index, entry in enumerate(raw):
        if isinstance(entry, Mapping) and "error" in entry:
            problems.append(f"volume[{index}] {entry.get('device')}: not read: {entry.get('error')}")
            continue
        try:
            views.append(DeviceView.model_validate(entry))
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first["loc"])
            problems.append(f"volume[{index}].{where}: {first['msg']} (got {first.get('input')!r})")
    return views, problems


def volume_side(views: Sequence[DeviceView], direction: str, runtime_s: float) -> VolumeSide | None:
    """The views of one direction combined across devices (None: no view or no such direction)."""
    parts = [(v, v.directions[direction]) for v in views if direction in v.directions]
    if not parts:
        return None
    sources = {v.source for v, _ in parts}
    if len(sources) != 1:
        raise ParseError(None, f"volume: devices of one target report different sources {sorted(sources)}")
    ops = sum(d.ops for _, d in parts)
    size = sum(d.bytes for _, d in parts)
    time_us = sum((d.mean_latency_us or 0.0) * d.ops for _, d in parts)
    histogram: list[VolumeBucket] | None = None
    if all(d.histogram is not None for _, d in parts):
        merged: dict[tuple[int, int], int] = {}
        for _, d in parts:
            for lower, upper, count in d.histogram or []:
                merged[(lower, upper)] = merged.get((lower, upper), 0) + count
        histogram = [
            VolumeBucket(lower_us=lo, upper_us=up, count=n) for (lo, up), n in sorted(merged.items())
        ]

    def most(name: str) -> float | None:
        values = [getattr(v.throttled_s, name) for v, _ in parts]
        known = [x for x in values if x is not None]
        return max(known) if known else None

    return VolumeSide(
        source=next(iter(sources)),
        devices=len(parts),
        ops=ops,
        bytes=size,
        iops=ops / runtime_s if runtime_s > 0 else None,
        bw_mibps=size / 2**20 / runtime_s if runtime_s > 0 else None,
        mean_latency_us=time_us / ops if ops else None,
        histogram=histogram,
        volume_iops_bound_s=most("volume_iops"),
        volume_throughput_bound_s=most("volume_throughput"),
        instance_iops_bound_s=most("instance_iops"),
        instance_throughput_bound_s=most("instance_throughput"),
    )

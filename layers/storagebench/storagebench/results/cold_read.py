"""The cold-read check of the agent's manifest (``agent.cold_read``) as figures: cold against warm.

Each extent of each member device was read twice by dd at queue depth 1; its ``cold_s`` and
``warm_s`` are dd's own seconds. A pass's MiB/s is its bytes over the pass's time on the agent's
clock (``pass_seconds``, a stripe's members read at once: every dd's start-up and the gaps between
extents included, so a throttle that lets an idle device catch up, as the emulation's does, cannot
inflate it). A read's time is an extent's dd seconds over its reads of ``block_bytes``; the penalty
compares the mean read time of the two passes, which start-up and gaps do not touch.
"""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from storagebench.results.errors import ParseError
from storagebench.results.records import ColdReadCheck, SampledPass

MIB = 1 << 20


@dataclass(frozen=True)
class _Extent:
    bytes: int
    reads: int
    seconds: dict[str, float]


def _whole(value: Any, minimum: int) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= minimum else None


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
        return None
    return float(value)


def _extents(device: Mapping[str, Any], where: str) -> tuple[int, list[_Extent]]:
    block = _whole(device.get("block_bytes"), 1)
    if block is None:
        raise ParseError(where, f"block_bytes {device.get('block_bytes')!r} is not a positive integer")
    raw = device.get("extents")
    if not isinstance(raw, list) or not raw:
        raise ParseError(where, "no extents were read")
    extents = []
    for index, extent in enumerate(raw):
        size = _whole(extent.get("bytes"), block) if isinstance(extent, Mapping) else None
        cold = _number(extent.get("cold_s")) if isinstance(extent, Mapping) else None
        warm = _number(extent.get("warm_s")) if isinstance(extent, Mapping) else None
        if size is None or cold is None or warm is None:
            raise ParseError(
                where, f"extents[{index}]: {extent!r} lacks bytes >= block_bytes, cold_s or warm_s"
            )
        extents.append(_Extent(size, size // block, {"cold": cold, "warm": warm}))
    return block, extents


def _pass(name: str, members: list[list[_Extent]], seconds: float, where: str) -> SampledPass:
    total = sum(e.bytes for extents in members for e in extents)
    per_read_ms = [e.seconds[name] / e.reads * 1000 for extents in members for e in extents]
    reads = sum(e.reads for extents in members for e in extents)
    if sum(e.seconds[name] for extents in members for e in extents) <= 0:
        raise ParseError(where, f"the {name} pass took no measurable time: dd's seconds are all 0")
    return SampledPass(
        mibps=total / MIB / seconds,
        seconds=seconds,
        read_ms_mean=sum(e.seconds[name] for extents in members for e in extents) / reads * 1000,
        read_ms_p50=statistics.median(per_read_ms),
        read_ms_max=max(per_read_ms),
    )


def cold_read_check(devices: Sequence[Mapping[str, Any]], pass_seconds: Any, where: str) -> ColdReadCheck:
    """The check's figures from the manifest's sampled devices and the agent's ``pass_seconds``;
    ParseError naming what is unusable."""
    if not devices:
        raise ParseError(where, "the cold-read check read no device")
    blocks: set[int] = set()
    members: list[list[_Extent]] = []
    volume_bytes = 0
    for device in devices:
        name = f"{where} device {device.get('path')!r}"
        size = _whole(device.get("bytes"), 1)
        if size is None:
            raise ParseError(name, f"bytes {device.get('bytes')!r} is not the device's size")
        block, extents = _extents(device, name)
        blocks.add(block)
        members.append(extents)
        volume_bytes += size
    if len(blocks) != 1:
        raise ParseError(where, f"members were read with different block sizes {sorted(blocks)}")
    clock = pass_seconds if isinstance(pass_seconds, Mapping) else {}
    passes = {name: _number(clock.get(name)) for name in ("cold", "warm")}
    if not all(passes.values()):
        raise ParseError(where, f"pass_seconds {pass_seconds!r} lacks a cold and a warm time > 0")
    cold = _pass("cold", members, float(passes["cold"] or 0), where)
    warm = _pass("warm", members, float(passes["warm"] or 0), where)
    sampled = sum(e.bytes for extents in members for e in extents)
    return ColdReadCheck(
        volumes=len(members),
        extents=max(len(extents) for extents in members),
        block_bytes=blocks.pop(),
        bytes=sampled,
        volume_pct=min(100.0, sampled / volume_bytes * 100),
        cold=cold,
        warm=warm,
        penalty_pct=(cold.read_ms_mean / warm.read_ms_mean - 1) * 100,
    )

"""The params the library's profiles share, each built with its defaults, bounds and help
(``p_bs``, ``p_iodepth``, ...), and the typed readers of a param's value the phase builders use.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

from storagebench.workloads.params import Param, ParamValue, format_size, parse_size
from storagebench.workloads.profile import TargetContext


def int_value(values: Mapping[str, ParamValue], name: str) -> int:
    value = values[name]
    assert isinstance(value, int | float) and not isinstance(value, bool), name
    return int(value)


def number_value(values: Mapping[str, ParamValue], name: str) -> float:
    value = values[name]
    assert isinstance(value, int | float) and not isinstance(value, bool), name
    return float(value)


def dd_size(size: int) -> str:
    """GNU dd's binary units are upper case (1M = 1,048,576); ``1m`` is an error there."""
    return format_size(size).upper()


def str_value(values: Mapping[str, ParamValue], name: str) -> str:
    return str(values[name])


def auto_iodepth(values: Mapping[str, ParamValue], ctx: TargetContext) -> ParamValue:
    """Per-job queue depth from AWS's guidance: ~1 outstanding I/O per 500 IOPS on SSD, >= 4 on HDD."""
    jobs = max(1, int_value(values, "numjobs")) if "numjobs" in values else 1
    if ctx.expected_iops is None:
        return 32
    if ctx.media == "hdd":
        return max(4, math.ceil(8 / jobs))
    total = max(4, math.ceil(ctx.expected_iops / 500))
    return max(1, math.ceil(total / jobs))


def p_bs(default: str | tuple[str, ...], *, sweepable: bool = False) -> Param:
    return Param(
        "bs", "size", default, "block size per I/O", minimum=512, maximum=1 << 30, sweepable=sweepable
    )


def p_iodepth(default: int | str, *, auto: bool = False) -> Param:
    return Param(
        "iodepth",
        "int",
        default,
        "outstanding I/O per job",
        minimum=1,
        maximum=1024,
        sweepable=True,
        auto=auto,
    )


def p_numjobs(default: int) -> Param:
    return Param(
        "numjobs", "int", default, "parallel jobs (processes)", minimum=1, maximum=256, sweepable=True
    )


def p_runtime(default: float, floor: float = 3) -> Param:
    return Param(
        "runtime",
        "duration",
        default,
        "seconds of measured I/O",
        minimum=1,
        maximum=86_400,
        scales=True,
        scale_floor=floor,
    )


def p_ramp(default: float) -> Param:
    return Param(
        "ramp_time",
        "duration",
        default,
        "seconds of warm-up before measuring",
        minimum=0,
        maximum=3600,
        scales=True,
        scale_floor=1,
    )


def p_size(
    default: str, floor: str = "16m", help_text: str = "bytes per job (file size or device region)"
) -> Param:
    return Param(
        "size",
        "size",
        default,
        help_text,
        minimum=1 << 20,
        maximum=64 << 40,
        scales=True,
        scale_floor=parse_size(floor),
    )


def p_rwmixread(default: int) -> Param:
    return Param(
        "rwmixread", "int", default, "percent of I/O that reads", minimum=0, maximum=100, sweepable=True
    )


def p_direct(default: int) -> Param:
    return Param("direct", "int", default, "1 bypasses the page cache (O_DIRECT)", minimum=0, maximum=1)


def p_threads(default: tuple[int, ...] | int) -> Param:
    return Param(
        "threads",
        "int",
        default,
        "parallel processes, each on its own files",
        minimum=1,
        maximum=256,
        sweepable=True,
    )

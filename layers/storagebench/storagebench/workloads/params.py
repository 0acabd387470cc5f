"""Workload parameters: typed, ranged, scalable and sweepable.

A profile declares its parameters; a request may override them (``params``) and give a list
for a sweepable one (``"numjobs": [4, 8, 16]``), which runs the workload once per value and
yields a load curve. ``scale`` multiplies the amount of work (sizes, counts, runtimes) so the
faithful profile runs for hours on AWS and a scaled one in seconds on a laptop; it never
changes concurrency, block size or mix, which define what is being measured.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

ParamKind = Literal["int", "float", "size", "choice", "bool", "text", "duration"]
# A job file or a shell command longer than this is not a benchmark but a payload (issue 27, 10).
TEXT_MAX_CHARS = 65_536
ParamValue = int | float | str | bool

_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([kmgtp]?)(i?b?)\s*$", re.IGNORECASE)
_SIZE_FACTORS = {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40, "p": 1 << 50}
_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h)?\s*$", re.IGNORECASE)
_DURATION_FACTORS = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0, None: 1.0}


class ParamError(ValueError):
    """A parameter value outside what the profile allows; ``param`` names it."""

    def __init__(self, param: str, value: object, allowed: str, index: int | None = None) -> None:
        super().__init__(f"{value!r} is not allowed: {allowed}")
        self.param = param
        self.value = value
        self.allowed = allowed
        self.index = index  # position in a sweep list


def parse_size(value: str | int) -> int:
    """Bytes from a fio-style size (``4k``, ``8G``, ``1MiB``, ``512``); binary units as fio uses."""
    if isinstance(value, bool):
        raise ValueError(f"{value!r} is not a size")
    if isinstance(value, int):
        if value < 0:
            raise ValueError(f"{value!r} is not a size")
        return value
    match = _SIZE.match(str(value))
    if not match:
        raise ValueError(f"{value!r} is not a size like 4k, 1M, 8G")
    number, unit, _ = match.groups()
    return int(float(number) * _SIZE_FACTORS[unit.lower()])


def format_size(size: int) -> str:
    """The shortest exact fio size string: 4096 -> 4k, 8 GiB -> 8g."""
    for unit in ("p", "t", "g", "m", "k"):
        factor = _SIZE_FACTORS[unit]
        if size >= factor and size % factor == 0:
            return f"{size // factor}{unit}"
    return str(size)


def parse_duration(value: str | float) -> float:
    """Seconds from ``30``, ``30s``, ``5m``, ``2h``, ``500ms``."""
    if isinstance(value, bool):
        raise ValueError(f"{value!r} is not a duration")
    if isinstance(value, int | float):
        return float(value)
    match = _DURATION.match(value)
    if not match:
        raise ValueError(f"{value!r} is not a duration like 30s, 5m, 2h")
    number, unit = match.groups()
    return float(number) * _DURATION_FACTORS[unit.lower() if unit else None]


@dataclass(frozen=True)
class Param:
    """One parameter of a profile.

    ``scales``: multiplied by the workload's scale (sizes, counts, runtimes), then clamped to
    ``scale_floor`` so a tiny scale still does meaningful I/O. ``sweepable``: a list of values
    runs one variant per value.
    """

    name: str
    kind: ParamKind
    default: ParamValue | tuple[ParamValue, ...] | None  # a tuple (sweepable only) sweeps by default
    help: str
    minimum: float | None = None
    maximum: float | None = None
    choices: tuple[str, ...] = ()
    scales: bool = False
    scale_floor: float | None = None
    sweepable: bool = False
    auto: bool = False  # "auto" is allowed: the planner derives the value from the target
    check: Callable[[str], None] | None = None  # extra validation of text values; raises ValueError
    required: bool = False  # no default: the request must give it

    def allowed(self) -> str:
        if self.kind == "choice":
            return "one of " + ", ".join(self.choices)
        if self.kind == "bool":
            return "true or false"
        if self.kind == "text":
            return f"a non-empty string of at most {TEXT_MAX_CHARS:,} characters"
        unit = {"size": " (a size like 4k, 1M)", "duration": " (seconds, or 30s/5m/2h)"}.get(self.kind, "")
        low = "" if self.minimum is None else self._show(self.minimum)
        high = "" if self.maximum is None else self._show(self.maximum)
        text = f"{self.kind} {low}..{high}{unit}" if low or high else f"{self.kind}{unit}"
        if self.auto:
            text += ', or "auto"'
        if self.sweepable:
            text += "; a list of such values sweeps"
        return text

    def _show(self, number: float) -> str:
        if self.kind == "size":
            return format_size(int(number))
        return f"{number:g}"

    def coerce(self, value: object) -> ParamValue:
        """One value converted to its canonical type, or ParamError naming what is allowed."""
        if self.auto and value == "auto":
            return "auto"
        try:
            result = self._convert(value)
        except TypeError:
            raise ParamError(self.name, value, self.allowed()) from None
        except ValueError as exc:
            # Only a custom check knows more than allowed() already says.
            if self.kind == "text" and str(exc):
                raise ParamError(self.name, value, str(exc)) from None
            raise ParamError(self.name, value, self.allowed()) from None
        if isinstance(result, int | float) and not isinstance(result, bool) and self._out_of_range(result):
            raise ParamError(self.name, value, self.allowed())
        return result

    def _out_of_range(self, number: float) -> bool:
        return (self.minimum is not None and number < self.minimum) or (
            self.maximum is not None and number > self.maximum
        )

    def _convert(self, value: object) -> ParamValue:
        if self.kind == "bool":
            if isinstance(value, bool):
                return value
            raise TypeError
        if isinstance(value, bool):
            raise TypeError
        if self.kind == "int":
            if isinstance(value, float) and not value.is_integer():
                raise ValueError
            if not isinstance(value, int | float):
                raise TypeError
            return int(value)
        if self.kind == "float":
            if not isinstance(value, int | float) or math.isnan(value):
                raise TypeError
            return float(value)
        if self.kind == "size":
            if not isinstance(value, str | int):
                raise TypeError
            return parse_size(value)
        if self.kind == "duration":
            if not isinstance(value, str | int | float):
                raise TypeError
            return parse_duration(value)
        if self.kind == "choice":
            if value not in self.choices:
                raise ValueError
            return str(value)
        if not isinstance(value, str) or not value.strip():
            raise ValueError
        if len(value) > TEXT_MAX_CHARS:
            raise ValueError(f"at most {TEXT_MAX_CHARS:,} characters ({len(value):,} given)")
        if self.check is not None:
            self.check(value)
        return value

    def scaled(self, value: ParamValue, scale: float) -> ParamValue:
        """``value`` with the workload scale applied (only for scaling params)."""
        if not self.scales or scale == 1 or isinstance(value, bool) or not isinstance(value, int | float):
            return value
        if value == 0:
            return value  # a floor keeps small work meaningful; it must not invent work (ramp_time 0)
        floor = self.scale_floor if self.scale_floor is not None else 0
        result = max(value * scale, floor)
        if self.kind == "size" and result >= 1 << 20:
            return int(result // (1 << 20)) << 20  # whole MiB: aligned for every block size up to 1 MiB
        if self.kind in ("int", "size"):
            return max(1, round(result))
        return result

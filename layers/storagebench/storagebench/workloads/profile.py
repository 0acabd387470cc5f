"""What a workload profile is, and how one turns into agent phases.

A profile is documentation plus a builder: its parameters (typed, with defaults and ranges),
where it comes from (a published study, AWS guidance, the standard suite) and a function that
turns resolved parameter values into the agent's phases (fio jobs, dd runs, timed commands).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from storagebench.protocol.plan import Phase
from storagebench.workloads.params import Param, ParamError, ParamValue, format_size

# "sla": the IOPS sustained under a latency target (workloads.sla); judged on IOPS, never held to
# the target's ceiling as a saturating "iops" workload is.
Intent = Literal["iops", "throughput", "latency", "mixed", "metadata", "application", "sla"]
TargetMode = Literal["raw", "filesystem", "any"]


@dataclass(frozen=True)
class TargetContext:
    """What the planner knows about the target a workload will run on."""

    mode: Literal["raw", "filesystem"]
    media: Literal["ssd", "hdd", "network", "unknown"] = "unknown"
    expected_iops: float | None = None
    devices: int = 1


Builder = Callable[[Mapping[str, ParamValue], TargetContext], list[Phase]]
AutoRule = Callable[[Mapping[str, ParamValue], TargetContext], ParamValue]


@dataclass(frozen=True)
class Profile:
    name: str
    title: str
    description: str
    source: str
    family: str
    intent: Intent
    engine: Literal["fio", "dd", "command"]
    params: tuple[Param, ...]
    build: Builder
    needs: TargetMode = "any"
    auto: Mapping[str, AutoRule] = field(default_factory=dict)

    def param(self, name: str) -> Param:
        for param in self.params:
            if param.name == name:
                return param
        raise KeyError(name)

    @property
    def param_names(self) -> tuple[str, ...]:
        return tuple(p.name for p in self.params)


@dataclass(frozen=True)
class Variant:
    """One concrete run of a workload: every parameter resolved, scale applied."""

    values: Mapping[str, ParamValue]
    sweep: Mapping[str, ParamValue]  # the swept parameters only (labels the records)

    def label(self) -> str:
        return ",".join(f"{k}={v}" for k, v in self.sweep.items())


class ParamsError(ValueError):
    """Every bad override of one workload, each naming its parameter."""

    def __init__(self, errors: list[ParamError]) -> None:
        super().__init__("; ".join(f"{e.param}: {e}" for e in errors))
        self.errors = errors


def check_params(profile: Profile, overrides: Mapping[str, Any]) -> dict[str, ParamValue | list[ParamValue]]:
    """Validate request overrides against the profile; lists only for sweepable parameters."""
    errors: list[ParamError] = []
    clean: dict[str, ParamValue | list[ParamValue]] = {}
    for name, raw in overrides.items():
        if name not in profile.param_names:
            allowed = ", ".join(profile.param_names) or "none"
            errors.append(ParamError(name, raw, f"unknown parameter for {profile.name}; allowed: {allowed}"))
            continue
        param = profile.param(name)
        if isinstance(raw, list):
            if not param.sweepable:
                errors.append(
                    ParamError(name, raw, f"{name} cannot be swept; give one value ({param.allowed()})")
                )
                continue
            if not raw or len(raw) > 32:
                errors.append(ParamError(name, raw, "a sweep needs 1 to 32 values"))
                continue
            values: list[ParamValue] = []
            for index, item in enumerate(raw):
                try:
                    values.append(param.coerce(item))
                except ParamError as exc:
                    errors.append(ParamError(name, item, exc.allowed, index))
            clean[name] = values
        else:
            try:
                clean[name] = param.coerce(raw)
            except ParamError as exc:
                errors.append(exc)
    for param in profile.params:
        if param.required and param.name not in overrides:
            errors.append(ParamError(param.name, None, f"required by {profile.name}: {param.help}"))
    if errors:
        raise ParamsError(errors)
    return clean


def default_value(param: Param) -> ParamValue | list[ParamValue] | None:
    """The parameter's default in canonical form; a list when it sweeps by default."""
    if param.default is None:
        return None
    if isinstance(param.default, tuple):
        return [param.coerce(value) for value in param.default]
    return param.coerce(param.default)


def _with_overrides(
    profile: Profile, overrides: Mapping[str, ParamValue | list[ParamValue]]
) -> dict[str, ParamValue | list[ParamValue] | None]:
    base: dict[str, ParamValue | list[ParamValue] | None] = {p.name: default_value(p) for p in profile.params}
    base.update(overrides)
    return base


def variant_count(profile: Profile, overrides: Mapping[str, ParamValue | list[ParamValue]]) -> int:
    """How many variants ``variants`` builds (the product of the swept lists), without building them."""
    count = 1
    for value in _with_overrides(profile, overrides).values():
        if isinstance(value, list):
            count *= len(value)
    return count


def variants(
    profile: Profile, overrides: Mapping[str, ParamValue | list[ParamValue]], scale: float, ctx: TargetContext
) -> list[Variant]:
    """Every combination of swept values, with defaults, auto values and scale resolved."""
    base = _with_overrides(profile, overrides)
    swept = {name: value for name, value in base.items() if isinstance(value, list)}
    fixed = {name: value for name, value in base.items() if not isinstance(value, list)}
    combos: Iterable[tuple[ParamValue, ...]] = itertools.product(*swept.values()) if swept else [()]
    result = []
    for combo in combos:
        point = dict(zip(swept, combo, strict=True))
        values: dict[str, ParamValue] = {k: v for k, v in fixed.items() if v is not None}
        values.update(point)
        for name, value in list(values.items()):
            if value == "auto":
                values[name] = profile.auto[name](values, ctx)
        for param in profile.params:
            if param.name in values:
                values[param.name] = param.scaled(values[param.name], scale)
        labels: dict[str, ParamValue] = {}  # what ran: sizes as fio writes them, "auto" with its value
        for name, requested in point.items():
            value = values[name]
            kind = profile.param(name).kind
            shown = format_size(value) if kind == "size" and isinstance(value, int) else value
            labels[name] = f"auto-{shown}" if requested == "auto" else shown
        result.append(Variant(values=values, sweep=labels))
    return result


def build_phases(profile: Profile, variant: Variant, ctx: TargetContext) -> list[Phase]:
    if profile.needs not in ("any", ctx.mode):
        raise ValueError(
            f"{profile.name} needs a {profile.needs} target (a file system or a raw device), got {ctx.mode}"
        )
    return profile.build(variant.values, ctx)

"""What a config's ``matrix`` keys address and how their values read in generated ids.

A key is a config field (``CONFIG_FIELDS``) or a target field (``TARGET_FIELDS``), resolved to an
``Address`` against the config's targets (``data.iops`` when several targets have the field);
``check_matrix`` resolves every key of a matrix and locates what is wrong with its shape. The
expansion itself is ``request.matrix``.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel

from storagebench.request.configs import Config
from storagebench.request.matrix_models import MatrixValue
from storagebench.request.problems import Loc, Problem
from storagebench.request.recovery import kind_of, models_in
from storagebench.request.references import default_target_id


def _slug(value: MatrixValue) -> str:
    text = json.dumps(value) if isinstance(value, bool) else str(value)
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


def _suffix(unit: str) -> Callable[[MatrixValue], str]:
    return lambda value: f"{_slug(value)}{unit}"


def _prefix(word: str) -> Callable[[MatrixValue], str]:
    return lambda value: f"{word}{_slug(value)}"


def _stripes(value: MatrixValue) -> str:
    return "stripe-all" if value == -1 else f"stripe{_slug(value)}"


# How each field's value reads in a generated id (gp3-500g-6000iops-250mibps).
CONFIG_FIELDS: dict[str, Callable[[MatrixValue], str]] = {
    "instance_type": _slug,
    "image": _slug,
    "clients": _suffix("clients"),
}


TARGET_FIELDS: dict[str, Callable[[MatrixValue], str]] = {
    "type": _slug,
    "size_gib": _suffix("g"),
    "iops": _suffix("iops"),
    "throughput_mibps": _suffix("mibps"),
    "count": _suffix("x"),
    "layout": _slug,
    "filesystem": _slug,
    "raid_chunk_kib": _suffix("k-chunk"),
    "throughput_mode": _slug,
    "provisioned_throughput_mibps": _suffix("mibps"),
    "performance_mode": _slug,
    "deployment_type": _slug,
    "storage_capacity_gib": _suffix("g"),
    "per_unit_storage_throughput": _suffix("mbps-tib"),
    "stripe_count": _stripes,
    "data_compression": _slug,
    "nfs_version": _prefix("nfs"),
}


ALLOWED_KEYS = (
    f"{', '.join(CONFIG_FIELDS)}, or a target's {', '.join(TARGET_FIELDS)} "
    "(<target id>.<field> when several targets have it)"
)


def target_models() -> dict[str, type[BaseModel]]:
    return {str(kind_of(model)): model for model in models_in(Config.model_fields["targets"].annotation)}


@dataclass(frozen=True)
class Address:
    """What a matrix key sets: a config field, or a field of the target at ``target``."""

    key: str
    field: str
    target: int | None = None

    @property
    def loc(self) -> Loc:
        return (self.field,) if self.target is None else ("targets", self.target, self.field)

    def token(self, value: MatrixValue) -> str:
        return (CONFIG_FIELDS if self.target is None else TARGET_FIELDS)[self.field](value)

    @property
    def rank(self) -> tuple[int, int]:
        """Where the field sits in ids and surfaces: the config's fields, then each target's, each
        in the order of its table. Not the order keys are written in: a stored document (a DynamoDB
        map) does not keep it, and the run's report must find the same ids."""
        if self.target is None:
            return (0, list(CONFIG_FIELDS).index(self.field))
        return (1 + self.target, list(TARGET_FIELDS).index(self.field))


def loc_path(loc: Loc) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out or "(request)"


def _resolve(key: Any, config: dict[str, Any]) -> Address | str:
    """The field a matrix key sets, or why it cannot."""
    if not isinstance(key, str) or not key:
        return f"unknown matrix field; allowed: {ALLOWED_KEYS}"
    given = config.get("targets")
    targets = [
        (position, t)
        for position, t in enumerate(given if isinstance(given, list) else [])
        if isinstance(t, dict)
    ]
    models = target_models()

    def has(target: dict[str, Any], name: str) -> bool:
        model = models.get(str(target.get("kind")))
        return model is not None and name in model.model_fields

    def target_id(position: int, target: dict[str, Any]) -> str:
        given = target.get("id")
        return given if isinstance(given, str) else default_target_id(str(target.get("kind")), position)

    if "." in key:
        wanted, name = key.split(".", 1)
        if name not in TARGET_FIELDS:
            return f"{name} is not a target field a matrix varies; allowed: {', '.join(TARGET_FIELDS)}"
        named = [(p, t) for p, t in targets if target_id(p, t) == wanted]
        if not named:
            ids = ", ".join(target_id(p, t) for p, t in targets) or "none"
            return f"names no target of this config (its targets: {ids})"
        position, target = named[0]
        if not has(target, name):
            return f"a {target.get('kind')} target has no {name}"
        return Address(key, name, position)
    if key in CONFIG_FIELDS:
        return Address(key, key)
    if key not in TARGET_FIELDS:
        return f"unknown matrix field; allowed: {ALLOWED_KEYS}"
    holders = [(p, t) for p, t in targets if has(t, key)]
    if not holders:
        kinds = ", ".join(str(t.get("kind")) for _, t in targets) or "none"
        return f"no target of this config has {key} (its targets are {kinds})"
    if len(holders) > 1:
        choices = " or ".join(f"{target_id(p, t)}.{key}" for p, t in holders)
        return f"{len(holders)} targets have {key}: name the one to vary, {choices}"
    return Address(key, key, holders[0][0])


def _target_problems(position: int, config: dict[str, Any]) -> list[Problem]:
    """The base config's targets as the model would refuse them (not a list, an item that is not an
    object, a missing or unknown kind), said here since no point can be built from them."""
    here: Loc = ("configs", position, "targets")
    targets = config.get("targets")
    if targets is None:
        return [Problem(here, None, "required", missing=True)]
    if not isinstance(targets, list):
        return [Problem(here, targets, "must be a list")]
    kinds = ", ".join(target_models())
    found: list[Problem] = []
    for index, target in enumerate(targets):
        if not isinstance(target, dict):
            found.append(Problem((*here, index), target, "must be an object"))
        elif "kind" not in target:
            found.append(Problem((*here, index, "kind"), None, f"needs a kind: {kinds}", missing=True))
        elif str(target["kind"]) not in target_models():
            found.append(Problem((*here, index, "kind"), target["kind"], f"must be one of {kinds}"))
    return found


def same_value(a: MatrixValue, b: MatrixValue) -> bool:
    return json.dumps(a) == json.dumps(b)


def check_matrix(position: int, config: dict[str, Any]) -> tuple[list[Address], list[Problem]]:
    """The matrix's keys resolved, or the problems of its shape (located at each key)."""
    here: Loc = ("configs", position, "matrix")
    matrix = config["matrix"]
    if not isinstance(matrix, dict) or not matrix:
        message = 'must be an object of field -> list of values, e.g. {"iops": [3000, 6000]}'
        return [], [Problem(here, matrix, message)]
    malformed = _target_problems(position, config)
    if malformed:  # a key cannot be resolved against targets that do not read
        return [], malformed
    addresses: list[Address] = []
    problems: list[Problem] = []
    by_loc: dict[Loc, str] = {}
    for key, values in matrix.items():
        loc = (*here, key)
        resolved = _resolve(key, config)
        if isinstance(resolved, str):
            problems.append(Problem(loc, values, resolved))
            continue
        if resolved.loc in by_loc:
            problems.append(Problem(loc, values, f"sets the same field as {by_loc[resolved.loc]}; keep one"))
            continue
        by_loc[resolved.loc] = key
        given = _get(config, resolved.loc)
        if given is not None:
            where = loc_path(("configs", position, *resolved.loc))
            problems.append(
                Problem(
                    loc, values, f"{where} is given too ({json.dumps(given)}): the matrix sets it; remove one"
                )
            )
            continue
        if not isinstance(values, list) or not values:
            problems.append(Problem(loc, values, "must be a non-empty list of values"))
            continue
        shape_ok = True
        for index, value in enumerate(values):
            if isinstance(value, dict | list) or value is None:
                problems.append(Problem((*loc, index), value, "must be a number, a string or true/false"))
                shape_ok = False
            elif isinstance(value, float) and not math.isfinite(value):
                problems.append(Problem((*loc, index), value, "must be a finite number"))
                shape_ok = False
            elif any(same_value(value, earlier) for earlier in values[:index]):
                first = next(i for i, earlier in enumerate(values) if same_value(value, earlier))
                problems.append(Problem((*loc, index), value, f"repeats {key}[{first}]; values must differ"))
                shape_ok = False
        if shape_ok:
            addresses.append(resolved)
    return sorted(addresses, key=lambda a: a.rank), problems


def _get(config: dict[str, Any], loc: Loc) -> Any:
    node: Any = config
    for part in loc:
        if isinstance(part, int):
            node = node[part] if isinstance(node, list) and part < len(node) else None
        else:
            node = node.get(part) if isinstance(node, dict) else None
    return node

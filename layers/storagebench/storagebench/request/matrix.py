"""A config's ``matrix``: one spec that expands into the configs of a sweep.

``{"id": "gp3", ..., "matrix": {"size_gib": [500, 1000], "iops": [3000, 6000]}}`` becomes the
ordinary configs ``gp3-500g-3000iops``, ``gp3-500g-6000iops``, ... (the cartesian product: fields
in a fixed order, ``Address.rank``, values in the order written). A key is a config field
(``instance_type``, ``image``) or a target field (``TARGET_FIELDS``): it applies to the one target
that has that field, and when several do, the key names the target: ``data.iops``.

Each point is validated by the model's own rules. A point that breaks one of AWS's rules (an IOPS
above 500 per GiB) is refused with the rule, or under ``matrix_invalid: skip`` left out and kept on
the request as a ``SkippedPoint``; a problem every point shares is the base config's and is reported
once, at its field; a value of the wrong type is a mistake in the matrix, refused whatever
``matrix_invalid`` says. Each generated config carries its ``MatrixOrigin`` (base id, the point),
which only the expansion sets, so a report can lay the points out as a surface.

The expansion works on the raw document, before the model reads it (``BenchmarkRequest``'s first
validator, and ``parse_request`` to locate every problem in the document as written).
"""

from __future__ import annotations

import copy
import itertools
import json
import math
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ValidationError

from storagebench.request.errors import PATTERN_HELP, FieldError, located_field_errors
from storagebench.request.matrix_models import (
    MatrixInvalid,
    MatrixOrigin,
    MatrixSummary,
    MatrixValue,
    PointProblem,
    SkippedPoint,
)
from storagebench.request.model import MAX_CONFIGS, SLUG_PATTERN, BenchmarkRequest, Config
from storagebench.request.problems import MISSING_RULE, RULE, Loc, Problem
from storagebench.request.recovery import kind_of, models_in, recovered_problems
from storagebench.request.references import default_target_id

MAX_POINTS = 1000
"""Points of one matrix that are built and checked; a request runs at most MAX_CONFIGS anyway."""

SET_BY_EXPANSION = "set by the matrix expansion only; remove it"


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


def _target_models() -> dict[str, type[BaseModel]]:
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


@dataclass
class Expansion:
    """The request with every matrix expanded, and what the expansion found."""

    document: Any
    problems: list[Problem] = field(default_factory=list)
    skipped: list[SkippedPoint] = field(default_factory=list)
    written: list[int] = field(default_factory=list)
    """expanded config position -> the position of the config as written"""
    origins: dict[int, MatrixOrigin] = field(default_factory=dict)
    """expanded config position -> its origin, for the generated configs"""

    @property
    def has_matrix(self) -> bool:
        return bool(self.origins or self.skipped or self.problems)

    def written_loc(self, loc: Loc) -> Loc:
        """A location in the expanded document, as a location in the document as written."""
        if len(loc) >= 2 and loc[0] == "configs" and isinstance(loc[1], int) and loc[1] < len(self.written):
            return ("configs", self.written[loc[1]], *loc[2:])
        return loc

    def locate(self, error: FieldError, loc: Loc) -> tuple[FieldError, Loc] | None:
        """An error found in the expanded document, located in the document as written (a
        generated config's problems name its point); None for a count the expansion reports."""
        if self.has_matrix and loc == ("configs",):
            return None  # too many or no configs: the expansion's own problems say why
        written = self.written_loc(loc)
        message = error.message
        if len(loc) >= 2 and loc[0] == "configs" and isinstance(loc[1], int) and loc[1] in self.origins:
            origin = self.origins[loc[1]]
            message = f"matrix point {_describe(origin.point)}: {message}"
        path = _path(written)
        return FieldError(path, error.value, message, error.missing), written


def _path(loc: Loc) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out or "(request)"


def _describe(point: dict[str, MatrixValue]) -> str:
    return "{" + ", ".join(f"{key}: {json.dumps(value)}" for key, value in point.items()) + "}"


def expand_matrix(document: Any) -> Expansion:
    """Expand every ``configs[i].matrix`` of a raw request document; never raises on bad input."""
    if not isinstance(document, dict) or not isinstance(document.get("configs"), list):
        return Expansion(document)
    expansion = Expansion(document)
    document, configs = _without_what_the_expansion_sets(document, expansion)
    matrices = [i for i, c in enumerate(configs) if isinstance(c, dict) and c.get("matrix") is not None]
    if not matrices:
        expansion.written = list(range(len(configs)))
        if expansion.problems:
            expansion.document = {**document, "configs": configs}
        return expansion
    mode: MatrixInvalid = "skip" if document.get("matrix_invalid") == "skip" else "error"
    expanded: list[Any] = []
    owners = {  # config id -> who has it, for clashes
        c["id"]: f"configs[{i}]"
        for i, c in reversed(list(enumerate(configs)))
        if isinstance(c, dict) and isinstance(c.get("id"), str) and i not in matrices
    }
    refused = 0
    for position, config in enumerate(configs):
        if position not in matrices:
            expanded.append(config)
            expansion.written.append(position)
            continue
        result = _expand_config(position, config, mode)
        expansion.problems += result.problems
        expansion.skipped += result.skipped
        refused += result.refused
        for generated in result.configs:
            origin: MatrixOrigin = generated["origin"]
            owner = owners.get(generated["id"])
            if owner is not None:
                message = (
                    f"point {_describe(origin.point)} gets the id {generated['id']}, which {owner} has "
                    "already; config ids must be unique"
                )
                expansion.problems.append(Problem(("configs", position, "matrix"), origin.point, message))
                continue
            owners[generated["id"]] = f"configs[{position}].matrix point {_describe(origin.point)}"
            expansion.origins[len(expanded)] = origin
            expanded.append(generated)
            expansion.written.append(position)
    expansion.problems += _totals_problems(document, expansion, matrices, refused, len(expanded))
    expansion.document = {**document, "configs": expanded}
    if expansion.skipped:
        expansion.document["matrix_skipped"] = expansion.skipped
    return expansion


def _without_what_the_expansion_sets(
    document: dict[str, Any], expansion: Expansion
) -> tuple[dict[str, Any], list[Any]]:
    """A generated config's origin and the skipped points are refused from a document, and dropped
    so that the rest of the request is still checked; the expansion's own (model instances, which
    JSON cannot hold) pass."""
    skipped = document.get("matrix_skipped")
    if "matrix_skipped" in document and not (
        isinstance(skipped, list) and skipped and all(isinstance(s, SkippedPoint) for s in skipped)
    ):
        expansion.problems.append(Problem(("matrix_skipped",), skipped, SET_BY_EXPANSION))
        document = {k: v for k, v in document.items() if k != "matrix_skipped"}
    configs = list(document["configs"])
    for position, config in enumerate(configs):
        if isinstance(config, dict) and "origin" in config and not isinstance(config["origin"], MatrixOrigin):
            expansion.problems.append(
                Problem(("configs", position, "origin"), config["origin"], SET_BY_EXPANSION)
            )
            configs[position] = {k: v for k, v in config.items() if k != "origin"}
    return document, configs


def _totals_problems(
    document: dict[str, Any], expansion: Expansion, matrices: list[int], refused: int, total: int
) -> list[Problem]:
    """Points refused under matrix_invalid error (said once, at the field that would skip them), and
    an expansion past MAX_CONFIGS."""
    found: list[Problem] = []
    if refused:
        message = (
            f"{refused} matrix point(s) break AWS's rules, so the request is refused (error, the "
            "default); skip leaves such points out of the run and lists them"
        )
        found.append(Problem(("matrix_invalid",), document.get("matrix_invalid", "error"), message))
    if total > MAX_CONFIGS:
        counts = ", ".join(f"configs[{i}] gives {expansion.written.count(i)}" for i in matrices)
        message = (
            f"the matrix expands the request to {total} configs ({counts}); a request runs at most "
            f"{MAX_CONFIGS} (MAX_CONFIGS): fewer values, or several requests"
        )
        found.append(Problem(("configs",), total, message))
    return found


@dataclass
class _ConfigExpansion:
    configs: list[dict[str, Any]] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    skipped: list[SkippedPoint] = field(default_factory=list)
    refused: int = 0


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
    models = _target_models()

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
    kinds = ", ".join(_target_models())
    found: list[Problem] = []
    for index, target in enumerate(targets):
        if not isinstance(target, dict):
            found.append(Problem((*here, index), target, "must be an object"))
        elif "kind" not in target:
            found.append(Problem((*here, index, "kind"), None, f"needs a kind: {kinds}", missing=True))
        elif str(target["kind"]) not in _target_models():
            found.append(Problem((*here, index, "kind"), target["kind"], f"must be one of {kinds}"))
    return found


def _same_value(a: MatrixValue, b: MatrixValue) -> bool:
    return json.dumps(a) == json.dumps(b)


def _check_matrix(position: int, config: dict[str, Any]) -> tuple[list[Address], list[Problem]]:
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
            where = _path(("configs", position, *resolved.loc))
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
            elif any(_same_value(value, earlier) for earlier in values[:index]):
                first = next(i for i, earlier in enumerate(values) if _same_value(value, earlier))
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


def _points(
    addresses: list[Address], matrix: dict[str, list[MatrixValue]]
) -> Iterator[dict[str, MatrixValue]]:
    for values in itertools.product(*(matrix[a.key] for a in addresses)):
        yield {a.key: v for a, v in zip(addresses, values, strict=True)}


def _build(
    config: dict[str, Any], addresses: list[Address], point: dict[str, MatrixValue], point_id: str
) -> dict[str, Any]:
    built = copy.deepcopy({k: v for k, v in config.items() if k not in ("matrix", "origin")})
    built["id"] = point_id
    for address in addresses:
        node = built if address.target is None else built["targets"][address.target]
        node[address.field] = point[address.key]
    return built


@dataclass(frozen=True)
class _Point:
    """One combination of the matrix's values, its generated config and the problems it has."""

    values: dict[str, MatrixValue]
    id: str
    config: dict[str, Any]
    errors: list[tuple[FieldError, Loc, str]]


@dataclass(frozen=True)
class _Layout:
    """Where a matrix sits and what its keys set: locates a point's problems in the document."""

    position: int
    addresses: list[Address]
    matrix: dict[str, list[MatrixValue]]

    def key_of(self, loc: Loc) -> str | None:
        return next((a.key for a in self.addresses if a.loc == loc), None)

    def at_key(self, loc: Loc, value: Any) -> Loc | None:
        """configs[i].matrix.<key>[j] for a problem at a field the matrix sets (the index when the
        value is one of the key's), None for another field."""
        key = self.key_of(loc)
        if key is None:
            return None
        here: Loc = ("configs", self.position, "matrix", key)
        values = self.matrix[key]
        index = next((i for i, v in enumerate(values) if _same_value(v, value)), None)
        return here if index is None or len(values) == 1 else (*here, index)


def _expand_config(position: int, config: dict[str, Any], mode: MatrixInvalid) -> _ConfigExpansion:
    result = _ConfigExpansion()
    result.problems += _base_id_problems(position, config)
    addresses, problems = _check_matrix(position, config)
    result.problems += problems
    if result.problems:
        return result
    base_id: str = config["id"]
    layout = _Layout(position, addresses, config["matrix"])
    size = math.prod(len(layout.matrix[a.key]) for a in addresses)
    if size > MAX_POINTS:
        sizes = " x ".join(str(len(layout.matrix[a.key])) for a in addresses)
        message = (
            f"{sizes} = {size} points; at most {MAX_POINTS} per matrix, and a request runs at most "
            f"{MAX_CONFIGS} configs"
        )
        result.problems.append(Problem(("configs", position, "matrix"), size, message))
        return result
    axes = [a for a in addresses if len(layout.matrix[a.key]) > 1]
    named = _named_points(layout, base_id, axes)
    if isinstance(named, Problem):
        result.problems.append(named)
        return result
    points = [
        _Point(values, point_id, built, _point_errors(built))
        for values, point_id in named
        for built in [_build(config, addresses, values, point_id)]
    ]
    shared = _shared([p.errors for p in points])
    for error, loc, _ in points[0].errors if shared else []:
        if (loc, error.message) in shared:  # the base config's: reported once, at its field
            where = layout.at_key(loc, error.value) or ("configs", position, *loc)
            result.problems.append(Problem(where, error.value, error.message, error.missing))
    origin_axes = {a.key: layout.matrix[a.key] for a in axes}
    for point in points:
        own = [(e, loc, kind) for e, loc, kind in point.errors if (loc, e.message) not in shared]
        if not point.errors:
            origin = MatrixOrigin(
                base_id=base_id, config_index=position, point=point.values, axes=origin_axes
            )
            result.configs.append({**point.config, "origin": origin})
        elif own:
            _point_problems(layout, base_id, point, own, mode, result)
    if not result.configs and not result.problems:
        reasons = "; ".join(f"{s.id}: {s.reason()}" for s in result.skipped[:3])
        result.problems.append(
            Problem(
                ("configs", position, "matrix"),
                layout.matrix,
                f"every one of its {len(points)} points breaks a rule, nothing is left to run ({reasons})",
            )
        )
    return result


def _base_id_problems(position: int, config: dict[str, Any]) -> list[Problem]:
    base_id = config.get("id")
    if isinstance(base_id, str) and re.match(SLUG_PATTERN, base_id):
        return []
    if base_id is None:
        return [Problem(("configs", position, "id"), None, "required: the generated ids start with it", True)]
    return [Problem(("configs", position, "id"), base_id, "must be " + PATTERN_HELP[SLUG_PATTERN])]


def _named_points(
    layout: _Layout, base_id: str, axes: list[Address]
) -> list[tuple[dict[str, MatrixValue], str]] | Problem:
    """Every point with its id (the base id and a token per axis), or the first id that is not a
    valid slug or that two points share."""
    named: list[tuple[dict[str, MatrixValue], str]] = []
    by_id: dict[str, dict[str, MatrixValue]] = {}
    here: Loc = ("configs", layout.position, "matrix")
    for values in _points(layout.addresses, layout.matrix):
        point_id = "-".join([base_id, *(a.token(values[a.key]) for a in axes)])
        if not re.match(SLUG_PATTERN, point_id):
            return Problem(
                ("configs", layout.position, "id"),
                base_id,
                f"the point {_describe(values)} gets the id {point_id!r}, not "
                f"{PATTERN_HELP[SLUG_PATTERN]}: shorten the id",
            )
        if point_id in by_id:
            return Problem(
                here,
                values,
                f"points {_describe(by_id[point_id])} and {_describe(values)} both get the id "
                f"{point_id}; give values that read differently",
            )
        by_id[point_id] = values
        named.append((values, point_id))
    return named


def _point_problems(
    layout: _Layout,
    base_id: str,
    point: _Point,
    own: list[tuple[FieldError, Loc, str]],
    mode: MatrixInvalid,
    result: _ConfigExpansion,
) -> None:
    """A point's own problems: a value of the wrong type is refused (once per value), a broken rule
    refuses the point or, under skip, leaves it out."""
    structural = [(e, loc) for e, loc, kind in own if kind not in (RULE, MISSING_RULE)]
    for error, loc in structural:
        at = layout.at_key(loc, error.value) or ("configs", layout.position, "matrix")
        mistake = Problem(at, error.value, error.message, error.missing)
        if mistake not in result.problems:
            result.problems.append(mistake)
    if structural:
        return
    broken = [
        PointProblem(field=layout.key_of(loc) or _path(loc), value=e.value, message=e.message)
        for e, loc, _ in own
    ]
    if mode == "skip":
        result.skipped.append(
            SkippedPoint(
                id=point.id,
                base_id=base_id,
                config_index=layout.position,
                point=point.values,
                problems=broken,
            )
        )
        return
    result.refused += 1
    for rule_broken, (error, loc, _) in zip(broken, own, strict=True):
        key = layout.key_of(loc)
        where: Loc = ("configs", layout.position, "matrix", *([key] if key else []))
        text = rule_broken.message if key else str(rule_broken)
        result.problems.append(Problem(where, error.value, f"point {point.id}: {text}", error.missing))


def _point_errors(candidate: dict[str, Any]) -> list[tuple[FieldError, Loc, str]]:
    """A point's problems as the model reports them: (error, location in the config, error type),
    with the rules pydantic skipped after a failed field (``request.recovery``), so that a problem
    of the base config shows in every point, whatever else a point breaks."""
    try:
        Config.model_validate(candidate)
    except ValidationError as exc:
        found = located_field_errors(exc, candidate, Config)
    else:
        return []
    known = {(loc, error.message) for error, loc, _ in found}
    for problem in recovered_problems(Config, candidate, [loc for _, loc, _ in found]):
        if (problem.loc, problem.message) not in known:
            kind = MISSING_RULE if problem.missing else RULE
            error = FieldError(
                _path(problem.loc), None if problem.missing else problem.value, problem.message
            )
            found.append((error, problem.loc, kind))
    return found


def _shared(failures: list[list[tuple[FieldError, Loc, str]]]) -> set[tuple[Loc, str]]:
    """The problems every point has, with the same value: the base config's, not the matrix's."""
    if not failures or not all(failures):
        return set()

    def keys(errors: list[tuple[FieldError, Loc, str]]) -> set[tuple[Loc, str, str]]:
        return {(loc, error.message, json.dumps(error.value, default=repr)) for error, loc, _ in errors}

    common = keys(failures[0])
    for errors in failures[1:]:
        common &= keys(errors)
    return {(loc, message) for loc, message, _ in common}


def summarize_matrices(request: BenchmarkRequest) -> list[MatrixSummary]:
    """Each matrix of a validated request: its axes, the configs it became and the points skipped."""
    found: dict[int, MatrixSummary] = {}
    for config in request.configs:
        origin = config.origin
        if origin is None:
            continue
        entry = found.get(origin.config_index)
        if entry is None:
            entry = found[origin.config_index] = MatrixSummary(
                base_id=origin.base_id,
                config_index=origin.config_index,
                axes=origin.axes,
                points=0,
                generated=[],
                skipped=[],
            )
        entry.generated.append(config.id)
    for skipped in request.matrix_skipped:
        if skipped.config_index not in found:  # every point of it skipped: refused, never here
            continue
        found[skipped.config_index].skipped.append(skipped)
    return [
        entry.model_copy(update={"points": len(entry.generated) + len(entry.skipped)})
        for _, entry in sorted(found.items())
    ]

"""A config's ``matrix``: one spec that expands into the configs of a sweep.

``{"id": "gp3", ..., "matrix": {"size_gib": [500, 1000], "iops": [3000, 6000]}}`` becomes the
ordinary configs ``gp3-500g-3000iops``, ``gp3-500g-6000iops``, ... (the cartesian product: fields
in a fixed order, ``Address.rank``, values in the order written). A key is a config field
(``instance_type``, ``image``) or a target field (``TARGET_FIELDS``): it applies to the one target
that has that field, and when several do, the key names the target: ``data.iops``. What keys
address and how their values read in ids is ``request.matrix_keys``.

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
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from pydantic import ValidationError

from storagebench.request.errors import PATTERN_HELP, FieldError, located_field_errors
from storagebench.request.matrix_keys import Address, check_matrix, loc_path, same_value
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
from storagebench.request.recovery import recovered_problems

MAX_POINTS = 1000
"""Points of one matrix that are built and checked; a request runs at most MAX_CONFIGS anyway."""

SET_BY_EXPANSION = "set by the matrix expansion only; remove it"


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
        path = loc_path(written)
        return FieldError(path, error.value, message, error.missing), written


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
        index = next((i for i, v in enumerate(values) if same_value(v, value)), None)
        return here if index is None or len(values) == 1 else (*here, index)


def _expand_config(position: int, config: dict[str, Any], mode: MatrixInvalid) -> _ConfigExpansion:
    result = _ConfigExpansion()
    result.problems += _base_id_problems(position, config)
    addresses, problems = check_matrix(position, config)
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
        PointProblem(field=layout.key_of(loc) or loc_path(loc), value=e.value, message=e.message)
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
                loc_path(problem.loc), None if problem.missing else problem.value, problem.message
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

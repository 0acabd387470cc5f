"""Turn validation failures into messages a person can act on.

Each error names the field path (``configs[0].targets[1].iops``), the value given and what is
allowed. Pydantic's own wording is rewritten where it leaks internals (discriminator tags,
regular expressions, "extra inputs").
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ValidationError

from storagebench.request import model as request_model
from storagebench.request.problems import MISSING_RULE, RULE, Loc
from storagebench.request.recovery import kind_of, models_in
from storagebench.request.repetitions import UNION_TAGS as REPETITIONS_TAGS

_MISSING = object()

PATTERN_HELP = {
    request_model.SLUG_PATTERN: "1-63 lowercase letters, digits and dashes, starting with a letter or digit",
    request_model.INSTANCE_TYPE_PATTERN: "an EC2 instance type such as c5.4xlarge",
    request_model.REGION_PATTERN: "an AWS region code such as us-east-1",
    request_model.SNAPSHOT_PATTERN: "a snapshot id such as snap-0123456789abcdef0",
    r"^[a-z][a-z0-9-]{0,30}$": "1-31 lowercase letters, digits and dashes, starting with a letter",
    r"^\d+[kKmM]$": "a size such as 128k or 1M",
    request_model.LOCAL_PATH_PATTERN: "an absolute path without control characters (newline, tab, ...)",
    r"^/[^\s]*$": "an absolute export path such as /bucket",
}


@dataclass(frozen=True)
class FieldError:
    path: str
    value: Any
    message: str
    missing: bool = False  # a required value was not given (value is then None)

    def __str__(self) -> str:
        if self.missing:
            return f"{self.path}: {self.message}"
        return f"{self.path}: {self.message} (got {_show(self.value)})"

    def as_dict(self) -> dict[str, Any]:
        value = self.value
        try:
            json.dumps(value)
        except (TypeError, ValueError):
            value = repr(value)
        return {"path": self.path, "value": value, "message": self.message, "missing": self.missing}


class RequestError(ValueError):
    """A request that must not run; ``errors`` holds every problem found."""

    def __init__(self, errors: list[FieldError]) -> None:
        lines = "\n".join(f"  {e}" for e in errors)
        super().__init__(
            f"invalid benchmark request ({len(errors)} problem{'s' * (len(errors) != 1)}):\n{lines}"
        )
        self.errors = errors


def _show(value: Any) -> str:
    try:
        text = json.dumps(value)  # the user wrote JSON: show the value as JSON
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def _path(parts: list[str | int]) -> str:
    out = ""
    for part in parts:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out or "(request)"


def _walk(
    loc: tuple[str | int, ...], document: Any, root: type[BaseModel] = request_model.BenchmarkRequest
) -> tuple[list[str | int], Any, type[BaseModel] | None]:
    """Follow a pydantic location through the input: drop union tags, find the value and its model."""
    parts: list[str | int] = []
    node: Any = document
    model: type[BaseModel] | None
    candidates: list[type[BaseModel]] = [root]
    for segment in loc:
        if (
            isinstance(node, dict)
            and isinstance(segment, str)
            and segment not in node
            and node.get("kind") == segment
        ):
            continue  # a discriminator tag pydantic put in the location
        if isinstance(segment, str) and segment in REPETITIONS_TAGS:
            continue  # repetitions: a count or {min, max, ci_pct}, told apart by a callable tag
        parts.append(segment)
        if isinstance(segment, int):
            node = node[segment] if isinstance(node, list) and -len(node) <= segment < len(node) else _MISSING
        else:
            node = node.get(segment, _MISSING) if isinstance(node, dict) else _MISSING
            next_candidates: list[type[BaseModel]] = []
            for candidate in candidates:
                field = candidate.model_fields.get(segment)
                if field is not None:
                    next_candidates.extend(models_in(field.annotation))
            candidates = next_candidates
        if isinstance(node, dict) and len(candidates) > 1:
            kind = node.get("kind")
            candidates = [c for c in candidates if kind_of(c) == kind] or candidates
    model = candidates[0] if len(candidates) == 1 else None
    return parts, node, model


def _message(error: dict[str, Any], parent_model: type[BaseModel] | None) -> str:
    kind = error["type"]
    ctx = error.get("ctx") or {}
    if kind == "missing":
        return "required"
    if kind == "extra_forbidden":
        if parent_model is not None:
            allowed = ", ".join(parent_model.model_fields)
            return f"unknown field; allowed here: {allowed}"
        return "unknown field"
    if kind == "string_pattern_mismatch":
        pattern = ctx.get("pattern", "")
        return "must be " + PATTERN_HELP.get(pattern, f"text matching {pattern}")
    if kind == "literal_error":
        return "must be one of " + str(ctx.get("expected", "")).replace("'", "")
    if kind in ("greater_than_equal", "greater_than", "less_than_equal", "less_than"):
        sign = {"greater_than_equal": ">=", "greater_than": ">", "less_than_equal": "<=", "less_than": "<"}[
            kind
        ]
        bound = next(iter(ctx.values()), "")
        return f"must be {sign} {bound}"
    if kind in ("too_short", "too_long"):
        field_type = ctx.get("field_type", "value")
        if kind == "too_short":
            return f"{field_type.lower()} needs at least {ctx.get('min_length')} item(s)"
        return f"{field_type.lower()} takes at most {ctx.get('max_length')} item(s)"
    if kind in ("dict_type", "model_type", "model_attributes_type"):
        return "must be an object"
    if kind in ("list_type", "tuple_type"):
        return "must be a list"
    if kind == "union_tag_invalid":
        return f"must be one of {str(ctx.get('expected_tags', '')).replace(chr(39), '')}"
    if kind == "union_tag_not_found":
        return "needs a kind: " + ", ".join(sorted(_target_kinds()))
    return str(error["msg"]).removeprefix("Value error, ")


def _target_kinds() -> list[str]:
    kinds: list[str] = []
    for model in models_in(request_model.Config.model_fields["targets"].annotation):
        kind = kind_of(model)
        if kind:
            kinds.append(str(kind))
    return kinds


def field_errors(exc: ValidationError, document: Any) -> list[FieldError]:
    return [error for error, _ in _located_errors(exc, document)]


def located_field_errors(
    exc: ValidationError, document: Any, root: type[BaseModel]
) -> list[tuple[FieldError, Loc, str]]:
    """The errors of validating ``document`` as ``root`` (a config: a matrix point), each with its
    location and pydantic's error type."""
    errors = _located_errors(exc, document, root)
    return [(error, loc, str(raw["type"])) for (error, loc), raw in zip(errors, exc.errors(), strict=True)]


def _located_errors(
    exc: ValidationError, document: Any, root: type[BaseModel] = request_model.BenchmarkRequest
) -> list[tuple[FieldError, Loc]]:
    """Each error with its location in the document (union tags dropped)."""
    result: list[tuple[FieldError, Loc]] = []
    for error in exc.errors():
        loc = tuple(error["loc"])
        if error["type"] in ("union_tag_invalid", "union_tag_not_found"):
            loc = (*loc, "kind")
        parts, value, _ = _walk(loc, document, root)
        _, _, parent_model = _walk(loc[:-1], document, root) if loc else ([], None, None)
        missing = error["type"] in ("missing", "union_tag_not_found", MISSING_RULE)
        if missing:
            value = None
        elif value is _MISSING or (error["type"] == RULE and value != error.get("input")):
            # Our rules may name a derived value (a count, one item); when it equals what the
            # user wrote, the user's spelling is shown (5000, not 5000.0).
            value = error.get("input")
        message = _message(dict(error), parent_model)
        result.append((FieldError(_path(parts), value, message, missing), tuple(parts)))
    return result


def _document_order(document: Any, loc: Loc) -> list[int]:
    """Sort key: where ``loc`` is in the document as written (a field not given sorts after its
    siblings), so problems read top to bottom."""
    key: list[int] = []
    node = document
    for part in loc:
        if isinstance(node, dict) and isinstance(part, str):
            names = list(node)
            key.append(names.index(part) if part in names else len(names))
            node = node.get(part)
        elif isinstance(node, list) and isinstance(part, int):
            key.append(part)
            node = node[part] if 0 <= part < len(node) else None
        else:
            key.append(0)
            node = None
    return key

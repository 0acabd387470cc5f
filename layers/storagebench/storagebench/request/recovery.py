"""The rules pydantic skipped: run them on the parts of a failed request that did parse.

Pydantic runs a model's ``after`` validators only when all its fields validated, so a config
whose target has a bad ``size_gib`` never had its instance type or image checked. Here the
document is walked along the models; at each model some of whose fields failed, the fields that
did not fail are validated on their own (so a rule sees exactly the value the model would hold)
and every rule whose inputs are among them runs (``request.rules``). A rule reading a failed field
is not run: its problem would be a consequence of one already reported.
"""

from __future__ import annotations

import copy
import types
import typing
from functools import cache
from typing import Any, Union, cast, get_args, get_origin

from pydantic import BaseModel, TypeAdapter

from storagebench.request.problems import Loc, Problem, Problems
from storagebench.request.rules import rules_of, run_rules


def models_in(annotation: Any) -> list[type[BaseModel]]:
    """The pydantic models a field annotation can hold (through Optional, list, dict, Annotated)."""
    origin = get_origin(annotation)
    if origin is typing.Annotated:
        return models_in(get_args(annotation)[0])
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [annotation]
    if origin in (Union, types.UnionType, list, dict, tuple):
        found: list[type[BaseModel]] = []
        for arg in get_args(annotation):
            found.extend(models_in(arg))
        return found
    return []


def kind_of(model: type[BaseModel]) -> Any:
    """The ``kind`` tag a model of a discriminated union carries (None for other models)."""
    field = model.model_fields.get("kind")
    if field is None:
        return None
    args = get_args(field.annotation)
    return args[0] if args else None


def _pick(models: list[type[BaseModel]], value: dict[str, Any]) -> type[BaseModel] | None:
    if len(models) == 1:
        return models[0]
    chosen = [m for m in models if kind_of(m) == value.get("kind")]
    return chosen[0] if len(chosen) == 1 else None


@cache
def _adapter(model: type[BaseModel], name: str) -> TypeAdapter[Any]:
    """Validates one field of ``model`` as the model does (its constraints, strictness, stripping)."""
    field = copy.copy(model.model_fields[name])
    field.exclude = None  # a dump setting, meaningless (and warned about) on a lone annotation
    annotation = cast(Any, typing.Annotated)[field.annotation, field]  # the field's constraints too
    if isinstance(field.annotation, type) and issubclass(field.annotation, BaseModel):
        return TypeAdapter(annotation)  # a model field: the model's own config applies
    return TypeAdapter(annotation, config=model.model_config)


def _parsed_fields(model: type[BaseModel], raw: dict[str, Any], failed: set[str | int]) -> dict[str, Any]:
    """The fields that validated, with the values the model would hold; defaults for those not given."""
    parsed: dict[str, Any] = {}
    for name, field in model.model_fields.items():
        if name in failed:
            continue
        if name in raw:  # valid in the model, so valid alone: field validators read no sibling
            parsed[name] = _adapter(model, name).validate_python(raw[name])
        elif not field.is_required():
            parsed[name] = field.get_default(call_default_factory=True)
    return parsed


def _rule_problems(model: type[BaseModel], raw: dict[str, Any], failed: set[str | int]) -> list[Problem]:
    parsed = _parsed_fields(model, raw, failed)
    problems = Problems(model.__name__)
    run_rules(model.model_construct(**parsed), problems, parsed=set(parsed))
    return problems.found


def recovered_problems(model: type[BaseModel], document: Any, failed_locs: list[Loc]) -> list[Problem]:
    """Problems the rules of ``model`` (and of the models inside it) find in the fields that parsed,
    where a failure at one of ``failed_locs`` (paths without union tags) stopped pydantic from
    running them. Locations are from the document's root."""
    return _walk(model, document, (), failed_locs)


def _walk(model: type[BaseModel], raw: Any, loc: Loc, failed_locs: list[Loc]) -> list[Problem]:
    if not isinstance(raw, dict):
        return []
    depth = len(loc)
    failed = {f[depth] for f in failed_locs if len(f) > depth and f[:depth] == loc}
    if not failed:
        return []  # everything here validated: its rules ran
    found: list[Problem] = []
    for name in failed:
        field = model.model_fields.get(name) if isinstance(name, str) else None
        if field is None:
            continue  # an unknown field: reported as such
        candidates = models_in(field.annotation)
        value = raw.get(name)
        if not candidates:
            continue
        if isinstance(value, dict):
            nested = _pick(candidates, value)
            if nested is not None:
                found += _walk(nested, value, (*loc, name), failed_locs)
        elif isinstance(value, list):
            for index, item in enumerate(value):
                nested = _pick(candidates, item) if isinstance(item, dict) else None
                if nested is not None:
                    found += _walk(nested, item, (*loc, name, index), failed_locs)
    if rules_of(model):
        found += [
            Problem((*loc, *p.loc), p.value, p.message, p.missing) for p in _rule_problems(model, raw, failed)
        ]
    return found

"""AWS's and storagebench's rules on a request model, each declaring the fields it reads.

A pydantic ``after`` validator runs only once every field of its model parsed, so a request with
a bad ``size_gib`` on one target used to hide the unknown instance type and the wrong image of
the same config until the next round. Rules here are methods marked with the fields they read:
the model's validator runs them all, and ``request.recovery`` runs, on a model whose other
fields failed, every rule whose inputs did parse. One pass reports every problem, and a rule
never runs on a value it cannot trust (no cascade of errors from a field already reported).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Self, TypeVar

from pydantic import BaseModel, ConfigDict, model_validator

from storagebench.request.problems import Problems

RULE_INPUTS = "__storagebench_rule_inputs__"
Method = TypeVar("Method", bound=Callable[..., None])


def rule(*inputs: str) -> Callable[[Method], Method]:
    """Mark ``method(self, problems)`` as a rule reading the fields ``inputs`` of its model.

    An input that is not a field of the model (``filesystem`` on a file-system target) is read
    with ``getattr`` and its default by the rule itself."""

    def mark(method: Method) -> Method:
        setattr(method, RULE_INPUTS, inputs)
        return method

    return mark


_FOUND: dict[type[Any], list[tuple[str, tuple[str, ...]]]] = {}


def rules_of(model: type[Any]) -> list[tuple[str, tuple[str, ...]]]:
    """(method name, inputs) of every rule of ``model``, base classes' first, each once."""
    if model in _FOUND:
        return _FOUND[model]
    found: dict[str, tuple[str, ...]] = {}
    for klass in reversed(model.__mro__):
        for name, member in vars(klass).items():
            inputs = getattr(member, RULE_INPUTS, None)
            if inputs is not None:
                found.pop(name, None)  # an override runs in its own place
                found[name] = inputs
    _FOUND[model] = list(found.items())
    return _FOUND[model]


def run_rules(instance: Any, problems: Problems, parsed: set[str] | None = None) -> None:
    """Run the rules of ``instance``'s model: all of them, or only those whose inputs are in
    ``parsed`` (the fields that validated, for a model whose other fields failed)."""
    fields = type(instance).model_fields
    for name, inputs in rules_of(type(instance)):
        if parsed is not None and any(i in fields and i not in parsed for i in inputs):
            continue
        getattr(instance, name)(problems)


class RequestModel(BaseModel):
    """The base of every request model: strict (JSON's own types, nothing converted), no unknown
    fields, and its ``@rule`` methods run after parsing with their problems raised together."""

    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True, strict=True)

    @model_validator(mode="after")
    def _rules(self) -> Self:
        if rules_of(type(self)):
            problems = Problems(type(self).__name__)
            run_rules(self, problems)
            problems.raise_if_any()
        return self

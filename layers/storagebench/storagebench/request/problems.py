"""Collect rule violations inside a validator and raise them as one located ValidationError.

Pydantic prefixes the locations with the path of the model being validated, so a nested
model reports ``configs[1].targets[0].iops`` without knowing where it sits.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError
from pydantic_core import InitErrorDetails, PydanticCustomError

Loc = tuple[str | int, ...]
RULE = "rule"  # error types our validators raise; the formatter trusts their input value
MISSING_RULE = "missing_rule"


@dataclass(frozen=True)
class Problem:
    """One violated rule, located relative to the model that found it."""

    loc: Loc
    value: Any
    message: str
    missing: bool = False


class Problems:
    def __init__(self, title: str) -> None:
        self.title = title
        self._errors: list[InitErrorDetails] = []
        self.found: list[Problem] = []

    def add(self, loc: Loc, value: Any, message: str, missing: bool = False) -> None:
        """A violated rule at ``loc``; ``missing`` when a required value was not given."""
        self.found.append(Problem(loc, value, message, missing))
        # Braces would be read as template fields by pydantic-core.
        safe = message.replace("{", "(").replace("}", ")")
        kind = MISSING_RULE if missing else RULE
        self._errors.append(InitErrorDetails(type=PydanticCustomError(kind, safe), loc=loc, input=value))

    def __bool__(self) -> bool:
        return bool(self._errors)

    def raise_if_any(self) -> None:
        if self._errors:
            raise ValidationError.from_exception_data(self.title, self._errors)


def fmt_int(value: float) -> str:
    """12,000 rather than 12000 in messages people read."""
    return f"{value:,.0f}" if float(value).is_integer() else f"{value:,g}"

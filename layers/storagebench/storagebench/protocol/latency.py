"""The ``latency`` of an emulated volume in the plan: its modes, read and checked.

``{"modes": [{"weight": 1, "p50_ms": 0.6, "p99_ms": 1.4}, ...]}``: one lognormal mode per entry
(the usual case), two for a bimodal volume. ``check_plan`` refuses a malformed spec with the
field's path and value; the twin (``agent.twin.model.ServiceTime``) draws its service times from
the same modes. Standard library only: both the agent and the domain read it.
"""

from __future__ import annotations

import math
from typing import Any, List, Tuple, Type


class LatencySpecError(ValueError):
    """A latency spec outside what the plan allows; the message names the field and the value."""


def number(path: str, value: object, expected: str, error: Type[ValueError] = LatencySpecError) -> float:
    """``value`` as a float (bools and NaN refused), or ``error`` naming ``path`` and the value."""
    if isinstance(value, bool):
        raise error(f"{path}: {value!r}, {expected}")
    try:
        result = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise error(f"{path}: {value!r}, {expected}") from None
    if math.isnan(result):
        raise error(f"{path}: {value!r}, {expected}")
    return result


def latency_modes(spec: Any) -> List[Tuple[float, float, float]]:
    """(weight, p50_ms, p99_ms) of each mode of ``spec``, or a LatencySpecError naming the field."""
    if not isinstance(spec, dict):
        raise LatencySpecError(f"latency: {spec!r}, an object with modes expected")
    raw = spec.get("modes")
    if not isinstance(raw, list) or not raw:
        raise LatencySpecError(f"latency.modes: {raw!r}, a non-empty list of modes expected")
    modes = []
    for index, item in enumerate(raw):
        path = f"latency.modes[{index}]"
        if not isinstance(item, dict):
            raise LatencySpecError(f"{path}: {item!r}, an object expected")
        for key in ("p50_ms", "p99_ms"):
            if key not in item:
                raise LatencySpecError(f"{path}: {key} missing, p50_ms and p99_ms numbers expected")
        weight = number(f"{path}.weight", item.get("weight", 1.0), "a positive number expected")
        if not weight > 0:
            raise LatencySpecError(f"{path}.weight: {item.get('weight')!r}, a positive number expected")
        p50 = number(f"{path}.p50_ms", item["p50_ms"], "a number expected")
        p99 = number(f"{path}.p99_ms", item["p99_ms"], "a number expected")
        if not 0 < p50 <= p99:
            given = f"p50_ms {item['p50_ms']!r}, p99_ms {item['p99_ms']!r}"
            raise LatencySpecError(f"{path}: {given}: 0 < p50_ms <= p99_ms expected")
        modes.append((weight, p50, p99))
    return modes

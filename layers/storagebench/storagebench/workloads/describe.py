"""The profile library as plain data, for `storagebench workloads` and the API."""

from __future__ import annotations

from typing import Any

from storagebench.workloads.library import PROFILES, SUITES
from storagebench.workloads.params import Param, format_size


def _show(param: Param, value: Any) -> Any:
    if isinstance(value, tuple):
        return [_show(param, v) for v in value]
    if param.kind == "size" and isinstance(value, int):
        return format_size(value)
    return value


def describe_library() -> dict[str, Any]:
    profiles = []
    for profile in PROFILES.values():
        profiles.append(
            {
                "name": profile.name,
                "title": profile.title,
                "family": profile.family,
                "intent": profile.intent,
                "engine": profile.engine,
                "needs": profile.needs,
                "source": profile.source,
                "description": profile.description,
                "params": [
                    {
                        "name": p.name,
                        "kind": p.kind,
                        "default": _show(p, p.default),
                        "allowed": p.allowed(),
                        "scales": p.scales,
                        "sweepable": p.sweepable,
                        "help": p.help,
                    }
                    for p in profile.params
                ],
            }
        )
    return {"profiles": profiles, "suites": {name: list(members) for name, members in SUITES.items()}}

"""What a measurement ran on, as far as it can change between runs of the same suite: fio's
version, the kernel, the image, the instance type (and its generation), the OS and the agent.

The agent records these in its manifest (``system``: ``agent.sysinfo.system_facts``); Collect
keeps them in the config's series document (``analysis.series.extract_series``: ``environment``)
so the report can set the runs of a trend side by side without reading raw output. A change of
any of them at a change point of a metric's history is a possible cause, never silently mixed in.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

__all__ = ["FACTS", "environment_changes", "environment_of", "instance_generation"]

FACTS: dict[str, str] = {
    "fio_version": "fio",
    "kernel": "kernel",
    "image_id": "image",
    "instance_type": "instance",
    "os": "OS",
    "agent_version": "agent",
    "storage_option": "storage",
}
"""Fact -> the word a report uses for it, in the order changes are listed. ``storage_option`` is not
the agent's: the report adds the stored option (without its instance type, named apart)."""

_SYSTEM_FACTS = ("fio_version", "kernel", "os", "agent_version")
_INSTANCE_FACTS = {"imageId": "image_id", "instanceType": "instance_type"}
_FAMILY = re.compile(r"^([a-z]+)(\d+)([a-z-]*)\.")


def environment_of(manifest: Mapping[str, Any]) -> dict[str, str]:
    """The facts of an agent manifest's ``system`` section that are recorded (as text); absent or
    empty ones are left out, so "unknown" is never mistaken for a change."""
    system = manifest.get("system")
    if not isinstance(system, Mapping):
        return {}
    facts = {name: str(system[name]) for name in _SYSTEM_FACTS if system.get(name) not in (None, "")}
    instance = system.get("instance")
    if isinstance(instance, Mapping):
        for source, name in _INSTANCE_FACTS.items():
            if instance.get(source) not in (None, ""):
                facts[name] = str(instance[source])
    return facts


def instance_generation(instance_type: str) -> str | None:
    """The family and generation of an EC2 instance type: ``c6i`` of ``c6i.4xlarge``."""
    match = _FAMILY.match(instance_type)
    return None if match is None else f"{match.group(1)}{match.group(2)}{match.group(3)}"


def _shown(fact: str, value: str) -> str:
    if fact == "fio_version":
        return value.removeprefix("fio-")
    return value


def environment_changes(before: Mapping[str, str], after: Mapping[str, str]) -> list[str]:
    """What differs between two environments, e.g. ``fio 3.35 -> 3.36`` or ``instance generation
    c5 -> c6i (c5.4xlarge -> c6i.4xlarge)``; a fact known on one side only is not a change."""
    changes: list[str] = []
    for fact, word in FACTS.items():
        old, new = before.get(fact), after.get(fact)
        if old is None or new is None or old == new:
            continue
        if fact == "instance_type":
            old_generation, new_generation = instance_generation(old), instance_generation(new)
            if old_generation is not None and new_generation is not None and old_generation != new_generation:
                changes.append(f"instance generation {old_generation} -> {new_generation} ({old} -> {new})")
                continue
        changes.append(f"{word} {_shown(fact, old)} -> {_shown(fact, new)}")
    return changes

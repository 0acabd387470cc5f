"""A ``command`` workload's ``requires`` held against each config it runs on, before launch.

Validation reads only the request. A config booting a catalog image (al2023, debian-12, ...) boots
a stock image: a program like cellranger and data under /data are not on it, so the config's setup
hook has to install and stage them, and a hook that does names them (the program; the path or a
directory above it). A config booting its own image (an AMI id, an SSM parameter under
/storagebench/) may have them: validation cannot see inside it, so the agent checks each entry
on the instance before the command starts and fails the step naming what is missing.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from typing import Any, Protocol

from storagebench.catalog.loader import load_catalog
from storagebench.workloads.command_needs import is_path, parse_requires

__all__ = ["command_need_problems"]


class _Workload(Protocol):
    @property
    def id(self) -> str | None: ...
    @property
    def profile(self) -> str | None: ...
    @property
    def params(self) -> Mapping[str, Any]: ...
    @property
    def targets(self) -> Sequence[str] | None: ...


class _Config(Protocol):
    @property
    def id(self) -> str: ...
    @property
    def image(self) -> str: ...
    @property
    def setup(self) -> str | None: ...
    @property
    def targets(self) -> Sequence[Any]: ...


class _Request(Protocol):
    """What the check reads of a request (``request.model`` imports this module)."""

    @property
    def configs(self) -> Sequence[_Config]: ...
    @property
    def workloads(self) -> Sequence[_Workload]: ...


def _named_by(hook: str, item: str) -> bool:
    """Whether the setup hook names a program (as a word) or a path (or a directory above it)."""
    if not is_path(item):
        return re.search(rf"(?<![\w.+-]){re.escape(item)}(?![\w.+-])", hook) is not None
    parts = item.rstrip("/").split("/")
    prefixes = ["/".join(parts[:n]) for n in range(len(parts), 1, -1)]  # /data/fastqs, /data
    return any(re.search(rf"{re.escape(p)}(?![\w.+-])", hook) for p in prefixes)


def _runs_on(config: _Config, selected: Sequence[str] | None) -> bool:
    """Whether a workload (restricted to ``selected`` target ids, or not) has a target in the config."""
    return any(getattr(t, "prepare", True) and (selected is None or t.id in selected) for t in config.targets)


def command_need_problems(request: _Request) -> Iterator[tuple[tuple[str | int, ...], Any, str]]:
    """(location, value, message) for each config that cannot have what a command workload requires."""
    stock = load_catalog().images
    for position, workload in enumerate(request.workloads):
        text = workload.params.get("requires") if workload.profile == "command" else None
        if not isinstance(text, str):
            continue
        needed = parse_requires(text)
        name = workload.id or workload.profile
        for config in request.configs:
            if config.image not in stock or not _runs_on(config, workload.targets):
                continue  # its own image: checked by the agent on the instance
            hook = config.setup or ""
            missing = [item for item in needed if not _named_by(hook, item)]
            if not missing:
                continue
            why = (
                "its setup hook does not name them"
                if config.setup
                else "it has no setup hook to install and stage them"
            )
            yield (
                ("workloads", position, "params", "requires"),
                text,
                f"{name} requires {', '.join(missing)}, which config {config.id} cannot have: it boots the "
                f"stock image {config.image} and {why}. Give the config an image that has them (an AMI "
                "id, or an SSM parameter under /storagebench/ holding one), or a setup hook that installs "
                "the programs and stages the data (naming each), or leave this config out of the request",
            )

"""Checks that relate parts of a request: ids, references between them, profile/target fit.

They work on plain data (a raw document or the model's own dump), so they run both inside the
model's validation and on a document whose other fields failed: one pass reports every problem.
"""

from __future__ import annotations

from typing import Any

from storagebench.request.requirements import requirement_problems
from storagebench.workloads import PROFILES, SUITES
from storagebench.workloads.naming import requested_name

Loc = tuple[str | int, ...]
Problem = tuple[Loc, Any, str]
BLOCK_KINDS = ("ebs", "instance_store")


def default_target_id(kind: str, position: int) -> str:
    """The id a target gets when the request gives none: its kind and position (ebs0, efs1)."""
    return f"{kind.replace('_', '-')}{position}"


def _dicts(value: Any) -> list[tuple[int, dict[str, Any]]]:
    return (
        [(i, item) for i, item in enumerate(value) if isinstance(item, dict)]
        if isinstance(value, list)
        else []
    )


def _targets(config: dict[str, Any]) -> list[tuple[int, str, str]]:
    """(position, id, mode) of a config's targets, with default ids as the model assigns them."""
    found = []
    for position, target in _dicts(config.get("targets")):
        kind = target.get("kind")
        if not isinstance(kind, str):
            continue
        target_id = target.get("id") or default_target_id(kind, position)
        raw = kind in BLOCK_KINDS and target.get("filesystem") == "raw"
        mode = "unprepared" if target.get("prepare") is False else ("raw" if raw else "filesystem")
        found.append((position, str(target_id), mode))
    return found


def _workload_names(ref: dict[str, Any]) -> list[str]:
    if isinstance(ref.get("suite"), str):
        return list(SUITES.get(ref["suite"], ()))
    return [ref["profile"]] if isinstance(ref.get("profile"), str) else []


def reference_problems(document: Any) -> list[Problem]:
    if not isinstance(document, dict):
        return []
    found: list[Problem] = []
    configs = _dicts(document.get("configs"))
    ids: dict[str, int] = {}
    for position, config in configs:
        config_id = config.get("id")
        if not isinstance(config_id, str):
            continue
        if config_id in ids:
            found.append(
                (
                    ("configs", position, "id"),
                    config_id,
                    f"already names configs[{ids[config_id]}]; config ids must be unique",
                )
            )
        ids.setdefault(config_id, position)
    baseline = document.get("baseline")
    if isinstance(baseline, str) and ids and baseline not in ids:  # another type: the model says so
        found.append((("baseline",), baseline, f"must name a config: {', '.join(ids)}"))
    all_targets = sorted({target_id for _, c in configs for _, target_id, _ in _targets(c)})
    seen: dict[str, int] = {}
    for position, ref in _dicts(document.get("workloads")):
        found.extend(_workload_ids(position, ref, seen))
        targets = ref.get("targets")
        for index, target_id in enumerate(targets if isinstance(targets, list) else []):
            if all_targets and target_id not in all_targets:
                found.append(
                    (
                        ("workloads", position, "targets", index),
                        target_id,
                        f"names no target; targets are: {', '.join(all_targets)}",
                    )
                )
        found.extend(_fit(position, ref, configs))
    found.extend(requirement_problems(document.get("requirements"), list(seen)))
    return found


def _workload_ids(position: int, ref: dict[str, Any], seen: dict[str, int]) -> list[Problem]:
    found: list[Problem] = []
    suite = ref.get("suite")
    for name in _workload_names(ref):
        workload_id = (
            ref.get("id")
            if isinstance(ref.get("id"), str) and not suite
            else requested_name(name, ref.get("params", {}))
        )
        if workload_id in seen:
            if suite:
                message = f"suite {suite} repeats {name}, already run by workloads[{seen[workload_id]}]"
                found.append((("workloads", position, "suite"), suite, message))
            else:
                found.append(
                    (
                        ("workloads", position, "id"),
                        workload_id,
                        f"already used by workloads[{seen[workload_id]}]; give one of them another id",
                    )
                )
            break
        seen[str(workload_id)] = position
    return found


def _fit(position: int, ref: dict[str, Any], configs: list[tuple[int, dict[str, Any]]]) -> list[Problem]:
    """A profile that writes files cannot run on a raw device, and one that needs a raw device
    cannot run on a file system; the first mismatch is reported with the way out."""
    selected = ref.get("targets") if isinstance(ref.get("targets"), list) else None
    for name in _workload_names(ref):
        profile = PROFILES.get(name)
        if profile is None:
            continue
        for c_index, config in configs:
            for t_index, target_id, mode in _targets(config):
                if mode == "unprepared":
                    if selected is not None and target_id in selected:
                        where = f"configs[{c_index}].targets[{t_index}] ({config.get('id')}/{target_id})"
                        field = "suite" if ref.get("suite") else "profile"
                        return [
                            (
                                ("workloads", position, field),
                                ref.get(field),
                                f"{where} has prepare false: the setup hook owns it, no workload runs on it",
                            )
                        ]
                    continue  # left out of every workload by default
                if selected is not None and target_id not in selected:
                    continue
                if profile.needs not in ("any", mode):
                    field = "suite" if ref.get("suite") else "profile"
                    where = f"configs[{c_index}].targets[{t_index}] ({config.get('id')}/{target_id})"
                    message = f"{name} needs a {profile.needs} target but {where} is {mode}"
                    return [
                        (
                            ("workloads", position, field),
                            ref.get(field),
                            message + "; restrict it with targets",
                        )
                    ]
    return []

"""Keep the Distributed Map's per-config branch the inline Map's own (``make asl-branches``).

statemachines/benchmark.asl.json runs each config through one branch (Provision ... Cleanup) in one of
two Map states, chosen per run by RouteConfigs: ``Configs`` (inline, up to 40 configs) or
``DistributedConfigs`` (one child execution per config, past 40). The inline Map's ItemProcessor is
the source: edit it there, then run this script, which copies its ``StartAt``, ``States`` (and
``Comment``) into the Distributed Map's ItemProcessor, keeping that one's ``ProcessorConfig``.
State names must be unique in the whole state machine (the ASL specification; statelint checks it),
so every copied state is renamed ``<name>Child`` (``child_name``), and every ``StartAt``, ``Next``
and ``Default`` with it: the copy is the branch state for state, under those names.
tests/unit/infrastructure/test_asl_branches.py runs it with ``--check`` and fails when they differ.

    python scripts/asl_branches.py [--check]
"""

from __future__ import annotations

import argparse
import copy
import json
import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
ASL = REPO / "statemachines" / "benchmark.asl.json"
SOURCE_MAP = "Configs"
COPY_MAP = "DistributedConfigs"
BRANCH_KEYS = ("Comment", "StartAt", "States")  # everything of an ItemProcessor but its ProcessorConfig
CHILD_SUFFIX = "Child"


class BranchError(ValueError):
    """The definition lacks a Map the script keeps in step, or that Map lacks an ItemProcessor."""


def _processor(definition: dict[str, Any], name: str) -> dict[str, Any]:
    state = definition.get("States", {}).get(name)
    if not isinstance(state, dict) or state.get("Type") != "Map":
        raise BranchError(f"States.{name}: a Map state expected, found {state!r:.80}")
    processor = state.get("ItemProcessor")
    if not isinstance(processor, dict):
        raise BranchError(f"States.{name}.ItemProcessor: missing (Iterator is not supported here)")
    return processor


def branch(processor: dict[str, Any]) -> dict[str, Any]:
    """The per-config branch of an ItemProcessor: what both Maps must share."""
    return {key: processor[key] for key in BRANCH_KEYS if key in processor}


def child_name(name: str) -> str:
    """The name a state of the branch has in the Distributed Map's copy."""
    return f"{name}{CHILD_SUFFIX}"


def parent_name(name: str) -> str:
    """The branch's own name of a state of the Distributed Map's copy (``child_name`` undone)."""
    if not name.endswith(CHILD_SUFFIX):
        raise BranchError(f"state {name!r} of {COPY_MAP} does not end with {CHILD_SUFFIX!r}")
    return name.removesuffix(CHILD_SUFFIX)


def _renamed(node: Any, names: set[str]) -> Any:
    """``node`` with every transition to one of ``names`` (Next, Default, StartAt) renamed."""
    if isinstance(node, list):
        return [_renamed(item, names) for item in node]
    if not isinstance(node, dict):
        return node
    renamed = {}
    for key, value in node.items():
        if key in ("Next", "Default", "StartAt") and isinstance(value, str) and value in names:
            renamed[key] = child_name(value)
        else:
            renamed[key] = _renamed(value, names)
    return renamed


def child_branch(source: dict[str, Any]) -> dict[str, Any]:
    """The inline branch as the Distributed Map runs it: the same states under ``child_name``."""
    names = set(source["States"])
    copied = _renamed(copy.deepcopy(source), names)
    copied["States"] = {child_name(name): state for name, state in copied["States"].items()}
    return copied


def synced(definition: dict[str, Any]) -> dict[str, Any]:
    """The definition with the Distributed Map's branch replaced by a copy of the inline Map's."""
    result = copy.deepcopy(definition)
    source = branch(_processor(result, SOURCE_MAP))
    target = _processor(result, COPY_MAP)
    kept = {key: value for key, value in target.items() if key not in BRANCH_KEYS}
    result["States"][COPY_MAP]["ItemProcessor"] = {**kept, **child_branch(source)}
    return result


def render(definition: dict[str, Any]) -> str:
    """The file's layout: two-space JSON and a final newline (what the ASL file has always had)."""
    return json.dumps(definition, indent=2, ensure_ascii=False) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="fail (exit 1) when the file is not in step")
    parser.add_argument("path", nargs="?", type=Path, default=ASL)
    args = parser.parse_args(argv)
    text = args.path.read_text(encoding="utf-8")
    expected = render(synced(json.loads(text)))
    if expected == text:
        return 0
    if args.check:
        print(
            f"{args.path}: {COPY_MAP}'s ItemProcessor differs from {SOURCE_MAP}'s; run "
            "`make asl-branches` (python scripts/asl_branches.py)",
            file=sys.stderr,
        )
        return 1
    args.path.write_text(expected, encoding="utf-8")
    print(f"{args.path}: {COPY_MAP}'s branch copied from {SOURCE_MAP}'s")
    return 0


if __name__ == "__main__":
    sys.exit(main())

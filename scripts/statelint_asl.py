"""statelint on the state machines, less the one field it does not know yet (``make lint``).

statelint 3.1.0 (its newest release) accepts only ``MaxItems``/``MaxItemsPath`` in an ItemReader's
``ReaderConfig``. AWS requires ``"InputType": "JSON"`` there to read a JSON array from S3 (the
Distributed Map's work items; docs.aws.amazon.com/step-functions/latest/dg/input-output-itemreader.html),
and moto's interpreter does too (without it the items stay one string). That one problem is dropped,
by its exact wording, and only for ``InputType`` values AWS lists; every other problem still fails.

    python scripts/statelint_asl.py statemachines/*.asl.json
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from statelint.linter import Linter

INPUT_TYPES = ("CSV", "JSON", "JSONL", "PARQUET", "MANIFEST")
UNKNOWN_INPUT_TYPE = re.compile(
    r'^Field "InputType" not allowed in State Machine\.States\.(?P<path>[\w.]+)\.ReaderConfig$'
)


def _reader_configs(node: Any, path: str = "") -> Iterator[tuple[str, dict[str, Any]]]:
    """Every ItemReader's ReaderConfig, by statelint's path to the ItemReader (``<Map>.ItemReader``)."""
    if isinstance(node, dict):
        for key, value in node.items():
            where = f"{path}.{key}" if path else key
            if (
                key == "ItemReader"
                and isinstance(value, dict)
                and isinstance(value.get("ReaderConfig"), dict)
            ):
                yield where, value["ReaderConfig"]
            yield from _reader_configs(value, where)


def problems(text: str) -> list[str]:
    """statelint's problems with the definition, less a documented ``InputType`` it does not know."""
    definition = json.loads(text)
    known = {
        path.removeprefix("States."): config
        for path, config in _reader_configs(definition)
        if config.get("InputType") in INPUT_TYPES
    }
    kept = []
    for problem in Linter.validate(text):
        match = UNKNOWN_INPUT_TYPE.match(str(problem))
        if match is None or match["path"] not in known:
            kept.append(str(problem))
    return kept


def main(argv: list[str] | None = None) -> int:
    paths = [Path(p) for p in (sys.argv[1:] if argv is None else argv)]
    if not paths:
        print("usage: statelint_asl.py FILE...", file=sys.stderr)
        return 2
    failed = 0
    for path in paths:
        found = problems(path.read_text(encoding="utf-8"))
        if found:
            failed += 1
            print(f"{path}: {len(found)} problem(s)")
            for problem in found:
                print(f"  {problem}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

"""The one strict JSON reader for request documents (CLI files and API bodies alike).

Python's ``json`` accepts what a request must not carry: ``NaN`` and ``Infinity`` (not JSON), a
key given twice (the last silently wins), and it raises ``RecursionError`` on deep nesting and
``UnicodeDecodeError`` on bytes that are not UTF-8. Here each is a ``JsonDocumentError`` whose
message says what and where.
"""

from __future__ import annotations

import json
from typing import Any

MAX_DEPTH = 64  # a request is at most ~8 levels deep; far below Python's recursion limit


class JsonDocumentError(ValueError):
    """The bytes are not a JSON document storagebench accepts; the message says why and where."""


def _no_constant(name: str) -> Any:
    raise JsonDocumentError(f"{name} is not a JSON number (JSON has no NaN or Infinity)")


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    found: dict[str, Any] = {}
    for key, value in pairs:
        if key in found:
            raise JsonDocumentError(f"the key {key!r} appears twice in one object (which one was meant?)")
        found[key] = value
    return found


def _depth(document: Any) -> int:
    deepest, stack = 0, [(document, 1)]
    while stack:
        node, level = stack.pop()
        deepest = max(deepest, level)
        if isinstance(node, dict):
            stack.extend((v, level + 1) for v in node.values())
        elif isinstance(node, list):
            stack.extend((v, level + 1) for v in node)
    return deepest


def decode_json(data: bytes) -> Any:
    """The document in ``data`` (UTF-8 JSON), or ``JsonDocumentError`` naming the problem."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise JsonDocumentError(f"not UTF-8 at byte {exc.start}") from None
    try:
        document = json.loads(text, parse_constant=_no_constant, object_pairs_hook=_no_duplicates)
    except json.JSONDecodeError as exc:
        raise JsonDocumentError(
            f"not valid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}"
        ) from None
    except RecursionError:
        raise JsonDocumentError(f"nested too deeply (a request has at most {MAX_DEPTH} levels)") from None
    if _depth(document) > MAX_DEPTH:
        raise JsonDocumentError(f"nested too deeply (a request has at most {MAX_DEPTH} levels)")
    return document

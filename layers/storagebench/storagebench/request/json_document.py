"""The one strict JSON reader for request documents (CLI files and API bodies alike).

Python's ``json`` accepts what a request must not carry: ``NaN`` and ``Infinity`` (not JSON, and
``1e400`` reads as Infinity too), a key given twice (the last silently wins), strings holding a
lone UTF-16 surrogate (``"\\ud800"``: not Unicode text, nothing downstream can encode it), and it
raises ``RecursionError`` on deep nesting, ``ValueError`` on an integer of thousands of digits
and ``UnicodeDecodeError`` on bytes that are not UTF-8. Here each is a ``JsonDocumentError``
whose message says what and where (the field path when the value has one).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import Any

MAX_DEPTH = 64  # a request is at most ~8 levels deep; far below Python's recursion limit
MAX_NUMBER_CHARS = 100  # no request number needs more; Python refuses ints of 4,300 digits


class JsonDocumentError(ValueError):
    """The bytes are not a JSON document storagebench accepts; the message says why and where.

    ``path`` is the field path of the offending value (``configs[0].size_gib``) when it has one.
    """

    def __init__(self, message: str, path: str | None = None) -> None:
        super().__init__(f"{path}: {message}" if path else message)
        self.path = path


@dataclass(frozen=True)
class _Refused:
    """A value the parser met and refuses; reported with its path once the whole tree is read."""

    why: str


def _constant(name: str) -> _Refused:
    return _Refused(f"{name} is not a JSON number (JSON has no NaN or Infinity)")


def _number(text: str, kind: type[int] | type[float]) -> int | float | _Refused:
    if len(text) > MAX_NUMBER_CHARS:
        return _Refused(f"a number of {len(text):,} characters is too long (at most {MAX_NUMBER_CHARS})")
    value = kind(text)
    if isinstance(value, float) and not math.isfinite(value):
        return _Refused(f"{text} is too large for a number: it would read as Infinity")
    return value


def _object(pairs: list[tuple[str, Any]]) -> dict[str, Any] | _Refused:
    found: dict[str, Any] = {}
    for key, value in pairs:
        if key in found:
            return _Refused(f"the key {key!r} appears twice in one object (which one was meant?)")
        found[key] = value
    return found


def _not_unicode(text: str) -> str | None:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        return f"holds a lone UTF-16 surrogate ({text[exc.start]!r}), which is not Unicode text"
    return None


def _path(parts: tuple[str | int, ...]) -> str | None:
    out = ""
    for part in parts:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else part)
    return out or None


def _check(document: Any) -> None:
    """Depth, refused values and lone surrogates, in document order; the first problem is raised."""
    stack: list[tuple[Any, tuple[str | int, ...]]] = [(document, ())]
    while stack:
        node, parts = stack.pop()
        if len(parts) >= MAX_DEPTH:
            raise JsonDocumentError(f"nested too deeply (a request has at most {MAX_DEPTH} levels)")
        if isinstance(node, _Refused):
            raise JsonDocumentError(node.why, _path(parts))
        if isinstance(node, str) and (why := _not_unicode(node)) is not None:
            raise JsonDocumentError(f"the text {why}", _path(parts))
        if isinstance(node, dict):
            for key in node:
                if (why := _not_unicode(key)) is not None:
                    raise JsonDocumentError(f"a key {why}", _path(parts))
            stack.extend((value, (*parts, key)) for key, value in reversed(node.items()))
        elif isinstance(node, list):
            stack.extend((value, (*parts, index)) for index, value in reversed(list(enumerate(node))))


def decode_json(data: bytes) -> Any:
    """The document in ``data`` (UTF-8 JSON), or ``JsonDocumentError`` naming the problem."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise JsonDocumentError(f"not UTF-8 at byte {exc.start}") from None
    try:
        document = json.loads(
            text,
            parse_constant=_constant,
            parse_int=lambda raw: _number(raw, int),
            parse_float=lambda raw: _number(raw, float),
            object_pairs_hook=_object,
        )
    except json.JSONDecodeError as exc:
        raise JsonDocumentError(
            f"not valid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}"
        ) from None
    except RecursionError:
        raise JsonDocumentError(f"nested too deeply (a request has at most {MAX_DEPTH} levels)") from None
    _check(document)
    return document

"""Hypothesis strategies from the JSON Schema subset pydantic writes (the OpenAPI document's).

Objects with properties and required keys, $ref into $defs, anyOf/oneOf, enum and const,
strings with patterns and lengths, bounded numbers, arrays, booleans and null. Optional
properties are drawn half the time; values respect the schema, so documents look like requests
(the cross-field rules are what the model then checks).
"""

from __future__ import annotations

import math
from typing import Any

from hypothesis import strategies as st


def from_schema(
    schema: dict[str, Any], root: dict[str, Any] | None = None, depth: int = 0
) -> st.SearchStrategy[Any]:
    root = root or schema
    if "$ref" in schema:
        name = schema["$ref"].rsplit("/", 1)[1]
        return st.deferred(lambda: from_schema(root["$defs"][name], root, depth + 1))
    if "const" in schema:
        return st.just(schema["const"])
    if "enum" in schema:
        return st.sampled_from(schema["enum"])
    for key in ("anyOf", "oneOf"):
        if key in schema:
            return st.one_of([from_schema(option, root, depth) for option in schema[key]])
    kind = schema.get("type")
    if isinstance(kind, list):
        return st.one_of([from_schema({**schema, "type": k}, root, depth) for k in kind])
    if kind == "null":
        return st.none()
    if kind == "boolean":
        return st.booleans()
    if kind == "integer":
        low = schema.get("minimum", schema.get("exclusiveMinimum", -(2**31) - 1) + 1)
        high = schema.get("maximum", schema.get("exclusiveMaximum", 2**31 + 1) - 1)
        return st.integers(math.ceil(low), math.floor(high))
    if kind == "number":
        return st.floats(
            min_value=schema.get("minimum", schema.get("exclusiveMinimum")),
            max_value=schema.get("maximum", schema.get("exclusiveMaximum")),
            exclude_min="exclusiveMinimum" in schema,
            exclude_max="exclusiveMaximum" in schema,
            allow_nan=False,
            allow_infinity=False,
        )
    if kind == "string":
        if "pattern" in schema:
            return st.from_regex(schema["pattern"], fullmatch=True).filter(
                lambda s: schema.get("minLength", 0) <= len(s) <= schema.get("maxLength", 10**6)
            )
        return st.text(min_size=schema.get("minLength", 0), max_size=min(schema.get("maxLength", 20), 40))
    if kind == "array":
        items = schema.get("items", {})
        low = schema.get("minItems", 0)
        high = min(schema.get("maxItems", 3), low + (2 if depth < 3 else 0), 4)
        return st.lists(from_schema(items, root, depth + 1), min_size=low, max_size=max(low, high))
    if kind == "object" or "properties" in schema:
        properties = schema.get("properties", {})
        required = set(schema.get("required", []))
        fixed = {
            name: from_schema(properties[name], root, depth + 1) for name in properties if name in required
        }
        optional = {
            name: from_schema(properties[name], root, depth + 1)
            for name in properties
            if name not in required
        }
        extra = schema.get("additionalProperties")
        extras: st.SearchStrategy[dict[str, Any]] = (
            st.dictionaries(st.text(min_size=1, max_size=8), from_schema(extra, root, depth + 1), max_size=2)
            if isinstance(extra, dict)
            else st.just({})
        )
        if depth > 6:
            optional = {}
        return st.builds(
            lambda a, b, c: {**c, **a, **b},
            st.fixed_dictionaries(fixed),
            st.fixed_dictionaries({}, optional=optional),
            extras,
        )
    return st.none() | st.booleans() | st.integers() | st.text(max_size=10)

"""Python values to DynamoDB's and back, item sizes, and the limits every item stays under."""

from __future__ import annotations

import json
import math
import zlib
from decimal import Decimal
from typing import Any

from boto3.dynamodb.types import Binary  # type: ignore[import-untyped, unused-ignore]

KEY_ATTRIBUTES = ("PK", "SK", "GSI1PK", "GSI1SK", "GSI2PK", "GSI2SK", "GSI3PK", "GSI3SK")
BATCH = 25  # BatchWriteItem's limit
MAX_ITEM_BYTES = 300_000  # DynamoDB allows 400 KB; stay well below
MAX_HISTOGRAM_BUCKETS = 512
MAX_LIST_ENTRIES = 200  # raw artifact paths and labels of one record
BATCH_ATTEMPTS = 6
MAX_PAGE = 1000  # the most items one *_page call returns
REGRESSIONS = "REGRESSIONS#"  # SK prefix of the run's regression verdicts (chunks of MAX_ITEM_BYTES)
MAX_PACKED_BYTES = 200_000  # one packed attribute (compressed): room for the item's other attributes


# ------------------------------------------------------------------------ conversions


def to_dynamo(value: Any) -> Any:
    """JSON-like data -> what boto3's serializer accepts: floats as Decimal (non-finite: None)."""
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, float):
        return Decimal(repr(value)) if math.isfinite(value) else None
    if isinstance(value, int):
        return Decimal(value)
    if isinstance(value, dict):
        return {str(k): to_dynamo(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [to_dynamo(v) for v in value]
    return value


def from_dynamo(value: Any) -> Any:
    """Decimals back to int (integral) or float; sets to sorted lists; binary values to bytes."""
    if isinstance(value, Binary):
        return bytes(value)
    if isinstance(value, Decimal):
        return int(value) if value == value.to_integral_value() else float(value)
    if isinstance(value, dict):
        return {k: from_dynamo(v) for k, v in value.items()}
    if isinstance(value, list):
        return [from_dynamo(v) for v in value]
    if isinstance(value, set | frozenset):
        return sorted(from_dynamo(v) for v in value)
    return value


def finite_json(value: Any) -> Any:
    """JSON-like data with non-finite floats as None (what DynamoDB's numbers would keep)."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {str(k): finite_json(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [finite_json(v) for v in value]
    return value


def pack(value: Any) -> bytes:
    """JSON, compressed: a binary attribute DynamoDB returns as one value (one parse, not one per
    nested attribute) and bills by its compressed size."""
    text = json.dumps(finite_json(value), separators=(",", ":"), allow_nan=False)
    return zlib.compress(text.encode(), 6)


def unpack(value: Any) -> Any:
    """What :func:`pack` packed (``bytes``, or boto3's ``Binary``); ValueError when it is not."""
    try:
        return json.loads(zlib.decompress(bytes(value)))
    except (zlib.error, TypeError, ValueError) as exc:
        raise ValueError(f"not a packed attribute: {type(exc).__name__}: {exc}") from exc


def item_size(item: dict[str, Any]) -> int:
    """DynamoDB's size of an item (names + values), as its documentation counts it (upper bound)."""
    return sum(len(name.encode()) + value_size(value) for name, value in item.items())


def value_size(value: Any) -> int:
    if value is None or isinstance(value, bool):
        return 1
    if isinstance(value, str):
        return len(value.encode())
    if isinstance(value, bytes):
        return len(value)
    if isinstance(value, Decimal | int | float):
        return 21  # at most 38 digits: 1 byte per two significant digits + 1
    if isinstance(value, dict):
        return 3 + sum(len(str(k).encode()) + value_size(v) + 1 for k, v in value.items())
    if isinstance(value, list | tuple | set | frozenset):
        return 3 + sum(value_size(v) + 1 for v in value)
    return len(str(value).encode())


def coarsen_histogram(buckets: list[dict[str, Any]], limit: int) -> list[dict[str, Any]]:
    """Merge neighbouring buckets pairwise until at most ``limit`` remain.

    A merged bucket keeps the upper bound of its pair and the sum of their counts, so the
    total count and the meaning "below le_us" are preserved (the resolution halves).
    """
    result = buckets
    while len(result) > limit:
        merged = []
        for i in range(0, len(result), 2):
            pair = result[i : i + 2]
            merged.append({"le_us": pair[-1]["le_us"], "count": sum(b["count"] for b in pair)})
        result = merged
    return result


# ------------------------------------------------------------------------ store

"""Access to the results table shared by every access pattern: items in and out, gets, batch writes,
and Query pages whose cursor (base64 of LastEvaluatedKey) is checked against the query it returns to."""

from __future__ import annotations

import base64
import binascii
import json
import time
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from boto3.dynamodb.types import TypeDeserializer, TypeSerializer  # type: ignore[import-untyped, unused-ignore]

from storagebench.adapters.aws.dynamo.codec import (
    BATCH_ATTEMPTS,
    KEY_ATTRIBUTES,
    MAX_PAGE,
    from_dynamo,
    to_dynamo,
)
from storagebench.adapters.aws.errors import aws_call
from storagebench.core.clock import Clock, SystemClock
from storagebench.core.errors import (
    ProvisioningError,
    ThrottledError,
    WorkflowError,
)

# The key attributes a cursor (LastEvaluatedKey) of each query holds: the table's, plus the index's.
_CURSOR_KEYS: dict[str | None, frozenset[str]] = {
    None: frozenset({"PK", "SK"}),
    "GSI1": frozenset({"PK", "SK", "GSI1PK", "GSI1SK"}),
    "GSI2": frozenset({"PK", "SK", "GSI2PK", "GSI2SK"}),
    "GSI3": frozenset({"PK", "SK", "GSI3PK", "GSI3SK"}),
}


class TableAccess:
    """The table, its (de)serialization, gets, batch writes and paged queries with opaque cursors."""

    def __init__(
        self,
        dynamodb: Any,
        table: str,
        clock: Clock | None = None,
        page_size: int | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.db = dynamodb
        self.table = table
        self.clock: Clock = clock or SystemClock()
        self.page_size = page_size
        self._sleep = sleep
        self._serializer = TypeSerializer()
        self._deserializer = TypeDeserializer()

    # -------------------------------------------------------------- (de)serialization

    def _item(self, item: dict[str, Any]) -> dict[str, Any]:
        return {k: self._serializer.serialize(v) for k, v in to_dynamo(item).items() if v is not None}

    def _plain(self, item: dict[str, Any]) -> dict[str, Any]:
        return {k: from_dynamo(self._deserializer.deserialize(v)) for k, v in item.items()}

    def _batch_write(self, items: Iterable[dict[str, Any]]) -> None:
        requests: dict[str, list[dict[str, Any]]] = {self.table: [{"PutRequest": {"Item": i}} for i in items]}
        for attempt in range(BATCH_ATTEMPTS):
            with aws_call("store results", ProvisioningError):
                response = self.db.batch_write_item(RequestItems=requests)
            requests = {k: v for k, v in (response.get("UnprocessedItems") or {}).items() if v}
            if not requests:
                return
            self._sleep(min(0.05 * 2**attempt, 2.0))
        left = sum(len(v) for v in requests.values())
        raise ThrottledError(
            f"store results: {left} item(s) still unprocessed after {BATCH_ATTEMPTS} attempts"
        )

    def _get(self, pk: str, sk: str) -> dict[str, Any] | None:
        with aws_call(f"read {pk}/{sk}", ProvisioningError):
            response = self.db.get_item(
                TableName=self.table, Key=self._item({"PK": pk, "SK": sk}), ConsistentRead=True
            )
        item = response.get("Item")
        return self._plain(item) if item else None

    def _query_index(
        self, index: str, partition: str, limit: int, newest_first: bool = True
    ) -> list[dict[str, Any]]:
        """Up to ``limit`` items of one partition of a secondary index, in sort order."""
        found: list[dict[str, Any]] = []
        arguments: dict[str, Any] = {
            "TableName": self.table,
            "IndexName": index,
            "KeyConditionExpression": f"{index}PK = :pk",
            "ExpressionAttributeValues": self._item({":pk": partition}),
            "ScanIndexForward": not newest_first,
            "Limit": min(limit, 100),
        }
        with aws_call(f"query {index} {partition}", WorkflowError):
            while len(found) < limit:
                page = self.db.query(**arguments)
                found.extend(
                    {k: v for k, v in self._plain(raw).items() if k not in KEY_ATTRIBUTES}
                    for raw in page.get("Items", [])
                )
                if "LastEvaluatedKey" not in page:
                    break
                arguments["ExclusiveStartKey"] = page["LastEvaluatedKey"]
        return found[:limit]

    # ================================================================== history, pages, regressions
    #
    # Added for regression detection and for readers that page: every method below is one or more
    # Query calls (never a Scan). A cursor is the URL-safe base64 of DynamoDB's LastEvaluatedKey,
    # opaque to callers; it is checked against the query it is handed back to.

    # -------------------------------------------------------------- cursors

    @staticmethod
    def encode_cursor(last_key: Mapping[str, Any]) -> str:
        """An opaque cursor for a LastEvaluatedKey (its attribute-value JSON, URL-safe base64)."""
        text = json.dumps(dict(last_key), separators=(",", ":"), sort_keys=True)
        return base64.urlsafe_b64encode(text.encode()).decode().rstrip("=")

    @staticmethod
    def decode_cursor(
        cursor: str, index: str | None = None, partition: tuple[str, str] | None = None
    ) -> dict[str, Any]:
        """The ExclusiveStartKey a cursor stands for; ValueError naming the cursor when it is not one
        of this query's (malformed, truncated, of another index or of another partition)."""
        shown = cursor if not isinstance(cursor, str) or len(cursor) <= 80 else cursor[:77] + "..."

        def invalid(why: str) -> ValueError:
            return ValueError(f"invalid pagination cursor {shown!r}: {why}")

        if not isinstance(cursor, str) or not cursor:
            raise invalid("a cursor is the non-empty string a previous page returned")
        try:
            padded = cursor + "=" * (-len(cursor) % 4)
            key = json.loads(base64.urlsafe_b64decode(padded.encode("ascii")))
        except (ValueError, binascii.Error):
            raise invalid("not a cursor this store returned (base64 of a DynamoDB key)") from None
        if not isinstance(key, dict) or not all(
            isinstance(v, dict) and list(v) == ["S"] and isinstance(v["S"], str) for v in key.values()
        ):
            raise invalid("not a cursor this store returned (base64 of a DynamoDB key)")
        expected = _CURSOR_KEYS[index]
        if set(key) != expected:
            where = f"index {index}" if index else "the table"
            raise invalid(f"it holds {sorted(key)}, a query of {where} needs {sorted(expected)}")
        if partition is not None:
            attribute, value = partition
            if key[attribute]["S"] != value:
                raise invalid(
                    f"it belongs to another query ({attribute} {key[attribute]['S']!r}, not {value!r})"
                )
        return key

    def _query_page(
        self,
        what: str,
        arguments: dict[str, Any],
        index: str | None,
        partition: tuple[str, str],
        limit: int,
        cursor: str | None,
    ) -> tuple[list[dict[str, Any]], str | None]:
        """Up to ``limit`` items from where ``cursor`` left off, and the cursor after the last of them.

        Pages are full (``limit`` items) unless the query is exhausted; a filter that rejects items
        or DynamoDB's 1 MB page only mean more round trips. As DynamoDB does, a page that ends
        exactly at the last item may still return a cursor, whose next page is then empty.
        """
        if not 1 <= limit <= MAX_PAGE:
            raise ValueError(f"limit must be between 1 and {MAX_PAGE}, not {limit}")
        if cursor is not None:
            arguments["ExclusiveStartKey"] = self.decode_cursor(cursor, index, partition)
        found: list[dict[str, Any]] = []
        last: dict[str, Any] | None = None
        with aws_call(what, WorkflowError):
            while True:
                arguments["Limit"] = limit - len(found)
                page = self.db.query(**arguments)
                found.extend(self._plain(raw) for raw in page.get("Items", []))
                last = page.get("LastEvaluatedKey")
                if not last or len(found) >= limit:
                    break
                arguments["ExclusiveStartKey"] = last
        return found, (self.encode_cursor(last) if last else None)

    @staticmethod
    def _unkeyed(item: dict[str, Any]) -> dict[str, Any]:
        return {k: v for k, v in item.items() if k not in KEY_ATTRIBUTES}

    def _index_arguments(self, index: str, partition: str, newest_first: bool) -> dict[str, Any]:
        return {
            "TableName": self.table,
            "IndexName": index,
            "KeyConditionExpression": f"{index}PK = :pk",
            "ExpressionAttributeValues": self._item({":pk": partition}),
            "ScanIndexForward": not newest_first,
        }

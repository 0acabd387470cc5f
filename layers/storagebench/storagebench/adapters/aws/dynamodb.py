"""The results store on one DynamoDB table, with the key design of ``storagebench.store.keys``.

Items:

* run ``RUN#<run> / RUN``: status, suite, request, configs, times; GSI1 (suite history) and,
  while RUNNING only, GSI3 (runs in progress: ``finish_run`` REMOVEs those attributes);
* config ``RUN#<run> / CONFIG#<c>``: the last status, the state document, errors, and the time
  each status was first recorded (``at_<STATUS>``, written once);
* result ``RUN#<run> / RESULT#<c>#<record key>``: the record as a map (numbers as Decimal), its
  labels, and GSI2 series keys when a ``storage_option`` label names the series;
* regression verdicts ``RUN#<run> / REGRESSIONS#<nnnn>``: Finalize's comparison with the suite's
  last runs, in parts under the item budget (``record_regressions``); their counts go on the run.

Every write is idempotent: a retried step rewrites the same keys. Every read is a Query (never a
Scan); the ``*_page`` methods hand back an opaque cursor (base64 of LastEvaluatedKey).
"""

from __future__ import annotations

import base64
import binascii
import json
import math
import re
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from decimal import Decimal
from typing import Any

from boto3.dynamodb.types import TypeDeserializer, TypeSerializer  # type: ignore[import-untyped, unused-ignore]

from storagebench.adapters.aws.errors import ClientError, aws_call, error_code, workflow_error
from storagebench.adapters.aws.settings import AwsSettings
from storagebench.core.clock import Clock, SystemClock, iso
from storagebench.core.errors import (
    CollectError,
    InvalidRequestError,
    ProvisioningError,
    ThrottledError,
    WorkflowError,
)
from storagebench.core.regression import INSUFFICIENT, Regression
from storagebench.core.state import ConfigState, RunSummary
from storagebench.results.records import ResultRecord
from storagebench.store import keys

KEY_ATTRIBUTES = ("PK", "SK", "GSI1PK", "GSI1SK", "GSI2PK", "GSI2SK", "GSI3PK", "GSI3SK")
BATCH = 25  # BatchWriteItem's limit
MAX_ITEM_BYTES = 300_000  # DynamoDB allows 400 KB; stay well below
MAX_HISTOGRAM_BUCKETS = 512
MAX_LIST_ENTRIES = 200  # raw artifact paths and labels of one record
BATCH_ATTEMPTS = 6
MAX_PAGE = 1000  # the most items one *_page call returns
REGRESSIONS = "REGRESSIONS#"  # SK prefix of the run's regression verdicts (chunks of MAX_ITEM_BYTES)
# The key attributes a cursor (LastEvaluatedKey) of each query holds: the table's, plus the index's.
_CURSOR_KEYS: dict[str | None, frozenset[str]] = {
    None: frozenset({"PK", "SK"}),
    "GSI1": frozenset({"PK", "SK", "GSI1PK", "GSI1SK"}),
    "GSI2": frozenset({"PK", "SK", "GSI2PK", "GSI2SK"}),
    "GSI3": frozenset({"PK", "SK", "GSI3PK", "GSI3SK"}),
}


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
    """Decimals back to int (integral) or float; sets to sorted lists."""
    if isinstance(value, Decimal):
        return int(value) if value == value.to_integral_value() else float(value)
    if isinstance(value, dict):
        return {k: from_dynamo(v) for k, v in value.items()}
    if isinstance(value, list):
        return [from_dynamo(v) for v in value]
    if isinstance(value, set | frozenset):
        return sorted(from_dynamo(v) for v in value)
    return value


def item_size(item: dict[str, Any]) -> int:
    """DynamoDB's size of an item (names + values), as its documentation counts it (upper bound)."""
    return sum(len(name.encode()) + _value_size(value) for name, value in item.items())


def _value_size(value: Any) -> int:
    if value is None or isinstance(value, bool):
        return 1
    if isinstance(value, str):
        return len(value.encode())
    if isinstance(value, bytes):
        return len(value)
    if isinstance(value, Decimal | int | float):
        return 21  # at most 38 digits: 1 byte per two significant digits + 1
    if isinstance(value, dict):
        return 3 + sum(len(str(k).encode()) + _value_size(v) + 1 for k, v in value.items())
    if isinstance(value, list | tuple | set | frozenset):
        return 3 + sum(_value_size(v) + 1 for v in value)
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


class DynamoResultsStore:
    """``ResultsStore`` on the stack's table (low-level client + boto3's type serializer)."""

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

    @classmethod
    def from_settings(cls, settings: AwsSettings) -> DynamoResultsStore:
        return cls(settings.client("dynamodb"), settings.results_table)

    # -------------------------------------------------------------- (de)serialization

    def _item(self, item: dict[str, Any]) -> dict[str, Any]:
        return {k: self._serializer.serialize(v) for k, v in to_dynamo(item).items() if v is not None}

    def _plain(self, item: dict[str, Any]) -> dict[str, Any]:
        return {k: from_dynamo(self._deserializer.deserialize(v)) for k, v in item.items()}

    # -------------------------------------------------------------- runs

    def start_run(
        self,
        run_id: str,
        suite: str,
        request: dict[str, Any],
        started_at: str,
        expires_at: str,
        configs: list[str],
    ) -> None:
        sort = keys.started_sk(started_at, run_id)
        item = {
            "PK": keys.run_pk(run_id),
            "SK": keys.RUN,
            "GSI1PK": keys.suite_pk(suite),
            "GSI1SK": sort,
            "GSI3PK": keys.ACTIVE,
            "GSI3SK": sort,
            "type": "run",
            "run_id": run_id,
            "suite": suite,
            "status": "RUNNING",
            "request": request,
            "configs": configs,
            "started_at": started_at,
            "expires_at": expires_at,
        }
        try:
            self.db.put_item(
                TableName=self.table, Item=self._item(item), ConditionExpression="attribute_not_exists(PK)"
            )
        except ClientError as exc:
            if error_code(exc) != "ConditionalCheckFailedException":
                raise workflow_error(exc, f"record run {run_id}", ProvisioningError) from exc
            existing = self._get(keys.run_pk(run_id), keys.RUN) or {}
            if existing.get("status") != "RUNNING":
                raise InvalidRequestError(
                    f"run {run_id} already exists with status {existing.get('status')}; "
                    "a run id cannot be reused"
                ) from exc

    def finish_run(self, summary: RunSummary) -> None:
        values = {
            ":status": summary.status,
            ":ended": summary.ended_at,
            ":records": summary.records,
            ":results": [c.model_dump(mode="json") for c in summary.configs],
        }
        try:
            self.db.update_item(
                TableName=self.table,
                Key=self._item({"PK": keys.run_pk(summary.run_id), "SK": keys.RUN}),
                UpdateExpression="SET #status = :status, ended_at = :ended, #records = :records, "
                "config_results = :results REMOVE GSI3PK, GSI3SK",
                ConditionExpression="attribute_exists(PK)",
                ExpressionAttributeNames={"#status": "status", "#records": "records"},
                ExpressionAttributeValues=self._item(values),
            )
        except ClientError as exc:
            if error_code(exc) == "ConditionalCheckFailedException":
                raise ProvisioningError(f"run {summary.run_id} was never recorded; cannot finish it") from exc
            raise workflow_error(exc, f"finish run {summary.run_id}", ProvisioningError) from exc

    def fail_stuck_run(self, run_id: str, reason: str, ended_at: str) -> bool:
        """The janitor's verdict on a run past its deadline: FAILED with the reason, off GSI3.

        Conditional on the run still being RUNNING, so a Finalize that got there first wins and
        two sweeps at once fail it once; False when the condition did not hold."""
        try:
            self.db.update_item(
                TableName=self.table,
                Key=self._item({"PK": keys.run_pk(run_id), "SK": keys.RUN}),
                UpdateExpression="SET #status = :failed, ended_at = :ended, failure_reason = :reason "
                "REMOVE GSI3PK, GSI3SK",
                ConditionExpression="#status = :running",
                ExpressionAttributeNames={"#status": "status"},
                ExpressionAttributeValues=self._item(
                    {":failed": "FAILED", ":running": "RUNNING", ":ended": ended_at, ":reason": reason}
                ),
            )
        except ClientError as exc:
            if error_code(exc) == "ConditionalCheckFailedException":
                return False
            raise workflow_error(exc, f"fail stuck run {run_id}", ProvisioningError) from exc
        return True

    # -------------------------------------------------------------- configs

    def put_config(self, state: ConfigState, status: str) -> None:
        """The config's current status and state; ``at_<STATUS>`` keeps when each status first came."""
        item = state.item
        stamp = "at_" + re.sub(r"[^A-Za-z0-9_]", "_", status)
        values = {
            ":type": "config",
            ":run": item.run_id,
            ":config": item.config_id,
            ":status": status,
            ":now": iso(self.clock.now()),
            ":state": state.model_dump(mode="json"),
            ":errors": [e.model_dump(mode="json") for e in state.errors],
        }
        with aws_call(f"record config {item.run_id}/{item.config_id} as {status}", ProvisioningError):
            self.db.update_item(
                TableName=self.table,
                Key=self._item({"PK": keys.run_pk(item.run_id), "SK": keys.config_sk(item.config_id)}),
                UpdateExpression="SET #type = :type, run_id = :run, config_id = :config, #status = :status, "
                "updated_at = :now, #state = :state, #errors = :errors, "
                "#stamp = if_not_exists(#stamp, :now)",
                ExpressionAttributeNames={
                    "#type": "type",
                    "#status": "status",
                    "#state": "state",
                    "#errors": "errors",
                    "#stamp": stamp,
                },
                ExpressionAttributeValues=self._item(values),
            )

    # -------------------------------------------------------------- results

    def result_item(
        self, run_id: str, config_id: str, record: ResultRecord, started_at: str, labels: dict[str, str]
    ) -> dict[str, Any]:
        """One record's item, bounded in size (plain Python values, before serialization)."""
        document = record.model_dump(mode="json")
        notes: list[str] = []
        histogram = document.get("histogram") or []
        if len(histogram) > MAX_HISTOGRAM_BUCKETS:
            document["histogram"] = coarsen_histogram(histogram, MAX_HISTOGRAM_BUCKETS)
            notes.append(f"histogram coarsened from {len(histogram)} to {len(document['histogram'])} buckets")
        for field in ("raw", "labels"):
            entries = document.get(field) or []
            if len(entries) > MAX_LIST_ENTRIES:
                document[field] = entries[:MAX_LIST_ENTRIES]
                notes.append(f"{field} truncated from {len(entries)} to {MAX_LIST_ENTRIES} entries")
        item: dict[str, Any] = {
            "PK": keys.run_pk(run_id),
            "SK": keys.result_sk(config_id, record),
            "type": "result",
            "run_id": run_id,
            "config_id": config_id,
            "record_key": keys.record_key(record),
            "started_at": started_at,
            "labels": dict(labels),
            "record": document,
        }
        option = labels.get("storage_option")
        if option:
            item["GSI2PK"] = keys.series_pk(option, record)
            item["GSI2SK"] = keys.series_sk(started_at, run_id, record.repetition)
        if notes:
            item["bounded"] = notes
        while item_size(item) > MAX_ITEM_BYTES and len(document.get("histogram") or []) > 16:
            document["histogram"] = coarsen_histogram(document["histogram"], len(document["histogram"]) // 2)
            item["bounded"] = [*notes, f"histogram coarsened to {len(document['histogram'])} buckets to fit"]
        size = item_size(item)
        if size > MAX_ITEM_BYTES:
            raise CollectError(
                f"result {item['SK']} is {size} bytes, over the {MAX_ITEM_BYTES}-byte item budget"
            )
        return item

    def put_results(
        self,
        run_id: str,
        config_id: str,
        records: list[ResultRecord],
        started_at: str,
        labels: dict[str, str],
    ) -> int:
        unique: dict[str, dict[str, Any]] = {}
        for record in records:  # a batch may not hold one key twice: the last record wins
            item = self.result_item(run_id, config_id, record, started_at, labels)
            unique[item["SK"]] = item
        items = list(unique.values())
        for start in range(0, len(items), BATCH):
            self._batch_write(self._item(item) for item in items[start : start + BATCH])
        return len(items)

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

    # -------------------------------------------------------------- reads

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

    def list_runs(self, suite: str, limit: int = 10) -> list[dict[str, Any]]:
        """The latest runs of a suite, newest first (one Query on GSI1)."""
        return self._query_index("GSI1", keys.suite_pk(suite), limit)

    def runs_in_progress(self, limit: int = 100) -> list[dict[str, Any]]:
        """Runs still RUNNING, newest first (GSI3 holds only those: finish_run removes the keys)."""
        return self._query_index("GSI3", keys.ACTIVE, limit)

    def get_run(self, run_id: str) -> dict[str, Any]:
        """The run, its configs and its results from one (paginated) Query; KeyError if unknown."""
        run: dict[str, Any] | None = None
        configs: list[dict[str, Any]] = []
        results: list[dict[str, Any]] = []
        query: dict[str, Any] = {
            "TableName": self.table,
            "KeyConditionExpression": "PK = :pk",
            "ExpressionAttributeValues": self._item({":pk": keys.run_pk(run_id)}),
        }
        pagination: dict[str, Any] = {"PageSize": self.page_size} if self.page_size else {}
        with aws_call(f"read run {run_id}", WorkflowError):
            for page in self.db.get_paginator("query").paginate(**query, PaginationConfig=pagination):
                for raw in page.get("Items", []):
                    item = self._plain(raw)
                    sort = str(item.get("SK", ""))
                    plain = {k: v for k, v in item.items() if k not in KEY_ATTRIBUTES}
                    if sort == keys.RUN:
                        run = plain
                    elif sort.startswith("CONFIG#"):
                        configs.append(plain)
                    elif sort.startswith("RESULT#"):
                        results.append(plain)
        if run is None:
            raise KeyError(run_id)
        return {"run": run, "configs": configs, "results": results}

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

    # -------------------------------------------------------------- pattern 2 and 4, paged

    def list_runs_page(
        self, suite: str, limit: int = 10, cursor: str | None = None
    ) -> tuple[list[dict[str, Any]], str | None]:
        """One page of a suite's runs, newest first (GSI1), and the cursor of the next page (or None)."""
        partition = keys.suite_pk(suite)
        items, after = self._query_page(
            f"list runs of suite {suite}",
            self._index_arguments("GSI1", partition, newest_first=True),
            "GSI1",
            ("GSI1PK", partition),
            limit,
            cursor,
        )
        return [self._unkeyed(i) for i in items], after

    def runs_in_progress_page(
        self, limit: int = 100, cursor: str | None = None
    ) -> tuple[list[dict[str, Any]], str | None]:
        """One page of the runs still RUNNING, newest first (GSI3), and the next page's cursor."""
        items, after = self._query_page(
            "list runs in progress",
            self._index_arguments("GSI3", keys.ACTIVE, newest_first=True),
            "GSI3",
            ("GSI3PK", keys.ACTIVE),
            limit,
            cursor,
        )
        return [self._unkeyed(i) for i in items], after

    # -------------------------------------------------------------- pattern 1, paged

    def get_run_page(
        self, run_id: str, cursor: str | None = None, limit: int = 200
    ) -> tuple[dict[str, Any], str | None]:
        """One page of a run's partition: ``{"run", "configs", "results", "regressions"}``.

        The partition is read in descending key order, so the run item (SK ``RUN``) opens the
        first page (KeyError there if the run is unknown); later pages have ``run`` None. Results
        come in descending key order, then the regression verdicts, then the configs.
        """
        partition = keys.run_pk(run_id)
        arguments: dict[str, Any] = {
            "TableName": self.table,
            "KeyConditionExpression": "PK = :pk",
            "ExpressionAttributeValues": self._item({":pk": partition}),
            "ScanIndexForward": False,
        }
        items, after = self._query_page(
            f"read run {run_id}", arguments, None, ("PK", partition), limit, cursor
        )
        page: dict[str, Any] = {"run": None, "configs": [], "results": [], "regressions": []}
        for item in items:
            sort = str(item.get("SK", ""))
            plain = self._unkeyed(item)
            if sort == keys.RUN:
                page["run"] = plain
            elif sort.startswith("CONFIG#"):
                page["configs"].append(plain)
            elif sort.startswith("RESULT#"):
                page["results"].append(plain)
            elif sort.startswith(REGRESSIONS):
                page["regressions"].extend(plain.get("entries") or [])
        if cursor is None and page["run"] is None:
            raise KeyError(run_id)
        return page, after

    # -------------------------------------------------------------- pattern 3

    @staticmethod
    def series_partition(
        storage_option: str, workload: str, variant: Mapping[str, Any] | str, phase: str, direction: str
    ) -> str:
        """GSI2 partition of one series (variant as a dict, or already spelled ``k=v,k=v`` / ``-``)."""
        return keys.series_partition(storage_option, workload, variant, phase, direction)

    def metric_history_page(
        self,
        storage_option: str,
        workload: str,
        variant: Mapping[str, Any] | str,
        phase: str,
        direction: str,
        since: str,
        until: str | None = None,
        limit: int = 100,
        cursor: str | None = None,
        *,
        suite: str | None = None,
        newest_first: bool = True,
        fields: Sequence[str] | None = None,
    ) -> tuple[list[dict[str, Any]], str | None]:
        """One page of one series' history (one Query on GSI2) and the next page's cursor.

        Runs that started at or after ``since`` and before ``until`` (ISO 8601 UTC, as runs record
        ``started_at``; a date alone works: ``until="2030-02-01"`` stops before that day). The
        sort key is ``<started>#<run>#r<rep>``, so ``BETWEEN since AND until`` is exactly that
        half-open range. Each point: started_at, run_id, config_id, repetition, labels, record.
        ``suite`` keeps only results labelled with it (a filter: still one Query). ``fields`` reads
        only those fields of each record (plus repetition and group): a projection, so less to
        transfer and parse (DynamoDB bills the whole item either way).
        """
        if not since:
            raise ValueError("since must be an ISO date or time, e.g. 2030-01-01 or 2030-01-01T00:00:00Z")
        if until is not None and until < since:
            raise ValueError(f"until ({until}) is before since ({since})")
        partition = self.series_partition(storage_option, workload, variant, phase, direction)
        values: dict[str, Any] = {":pk": partition, ":since": since}
        if until is None:
            condition = "GSI2PK = :pk AND GSI2SK >= :since"
        else:
            condition = "GSI2PK = :pk AND GSI2SK BETWEEN :since AND :until"
            values[":until"] = until
        arguments: dict[str, Any] = {
            "TableName": self.table,
            "IndexName": "GSI2",
            "KeyConditionExpression": condition,
            "ScanIndexForward": not newest_first,
        }
        names: dict[str, str] = {}
        if suite is not None:
            arguments["FilterExpression"] = "#labels.#suite = :suite"
            names.update({"#labels": "labels", "#suite": "suite"})
            values[":suite"] = suite
        if fields is not None:
            wanted = list(dict.fromkeys(["repetition", "group", *fields]))
            names.update({"#labels": "labels", "#record": "record", "#started": "started_at"})
            names.update({f"#f{n}": name for n, name in enumerate(wanted)})
            arguments["ProjectionExpression"] = ", ".join(
                [
                    "#started",
                    "run_id",
                    "config_id",
                    "#labels",
                    *(f"#record.#f{n}" for n in range(len(wanted))),
                ]
            )
        if names:
            arguments["ExpressionAttributeNames"] = names
        arguments["ExpressionAttributeValues"] = self._item(values)
        items, after = self._query_page(
            f"read the history of {partition}", arguments, "GSI2", ("GSI2PK", partition), limit, cursor
        )
        return [self._point(item) for item in items], after

    @staticmethod
    def _point(item: dict[str, Any]) -> dict[str, Any]:
        record = item.get("record") or {}
        return {
            "started_at": item.get("started_at"),
            "run_id": item.get("run_id"),
            "config_id": item.get("config_id"),
            "repetition": record.get("repetition") if isinstance(record, dict) else None,
            "labels": item.get("labels") or {},
            "record": record,
        }

    def metric_history(
        self,
        storage_option: str,
        workload: str,
        variant: Mapping[str, Any] | str,
        phase: str,
        direction: str,
        since: str,
        until: str | None = None,
        limit: int = 1000,
        *,
        suite: str | None = None,
        newest_first: bool = True,
        fields: Sequence[str] | None = None,
    ) -> list[dict[str, Any]]:
        """Pattern 3: every repetition of one series between two dates, newest first, at most
        ``limit`` (see ``metric_history_page``; more than one page only past 1 MB or MAX_PAGE)."""
        if limit < 1:
            raise ValueError(f"limit must be at least 1, not {limit}")
        points: list[dict[str, Any]] = []
        cursor: str | None = None
        while len(points) < limit:
            page, cursor = self.metric_history_page(
                storage_option,
                workload,
                variant,
                phase,
                direction,
                since,
                until,
                min(limit - len(points), MAX_PAGE),
                cursor,
                suite=suite,
                newest_first=newest_first,
                fields=fields,
            )
            points.extend(page)
            if cursor is None:
                break
        return points

    # -------------------------------------------------------------- regressions

    def record_economics(self, run_id: str, summary: Mapping[str, Any]) -> None:
        """The run's cost and comparison summary (``costs.economics.economics_summary``) on the run
        item, so the suite's history (pattern 2) carries each config's cost delta and verdict; the
        full comparison stays in S3 at ``summary["artifact"]``. Idempotent (a SET)."""
        size = _value_size(to_dynamo(dict(summary)))
        if size > MAX_ITEM_BYTES // 2:
            raise ValueError(f"economics summary of run {run_id} is {size} bytes, over half the item budget")
        try:
            self.db.update_item(
                TableName=self.table,
                Key=self._item({"PK": keys.run_pk(run_id), "SK": keys.RUN}),
                UpdateExpression="SET economics = :economics",
                ConditionExpression="attribute_exists(PK)",
                ExpressionAttributeValues=self._item({":economics": dict(summary)}),
            )
        except ClientError as exc:
            if error_code(exc) == "ConditionalCheckFailedException":
                raise ProvisioningError(f"run {run_id} was never recorded; cannot record its costs") from exc
            raise workflow_error(exc, f"record costs of run {run_id}", ProvisioningError) from exc

    def record_regressions(self, run_id: str, regressions: Sequence[Regression | Mapping[str, Any]]) -> int:
        """Keep a run's regression verdicts; returns how many items hold them.

        The run item gets ``regression_counts`` (verdict -> n), ``regression_parts`` and
        ``regressions_at`` (so pattern 2 shows them without another read); the verdicts go to
        ``RUN#<run> / REGRESSIONS#<nnnn>`` items of at most MAX_ITEM_BYTES each. Idempotent: a
        retry rewrites the same items and deletes parts a longer earlier attempt left.
        """
        documents = [r.model_dump(mode="json") if isinstance(r, Regression) else dict(r) for r in regressions]
        counts = {"regression": 0, "improvement": 0, "none": 0, INSUFFICIENT: 0}
        for document in documents:
            verdict = str(document.get("verdict"))
            counts[verdict] = counts.get(verdict, 0) + 1
        budget = MAX_ITEM_BYTES - 1_000  # keys and the chunk's own attributes
        chunks: list[list[dict[str, Any]]] = []
        used = 0
        for document in documents:
            size = _value_size(to_dynamo(document)) + 1
            if size > budget:
                raise ValueError(f"one regression verdict is {size} bytes, over the item budget")
            if not chunks or used + size > budget:
                chunks.append([])
                used = 3
            chunks[-1].append(document)
            used += size
        now = iso(self.clock.now())
        try:
            self.db.update_item(
                TableName=self.table,
                Key=self._item({"PK": keys.run_pk(run_id), "SK": keys.RUN}),
                UpdateExpression="SET regression_counts = :counts, regression_parts = :parts, "
                "regressions_at = :now",
                ConditionExpression="attribute_exists(PK)",
                ExpressionAttributeValues=self._item({":counts": counts, ":parts": len(chunks), ":now": now}),
            )
        except ClientError as exc:
            if error_code(exc) == "ConditionalCheckFailedException":
                raise ProvisioningError(
                    f"run {run_id} was never recorded; cannot record its regressions"
                ) from exc
            raise workflow_error(exc, f"record regressions of run {run_id}", ProvisioningError) from exc
        items = [
            {
                "PK": keys.run_pk(run_id),
                "SK": f"{REGRESSIONS}{part:04d}",
                "type": "regressions",
                "run_id": run_id,
                "part": part,
                "parts": len(chunks),
                "recorded_at": now,
                "entries": chunk,
            }
            for part, chunk in enumerate(chunks)
        ]
        for start in range(0, len(items), BATCH):
            self._batch_write(self._item(item) for item in items[start : start + BATCH])
        written = {item["SK"] for item in items}
        for sort in self._regression_keys(run_id):
            if sort not in written:
                with aws_call(f"delete stale regressions {run_id}/{sort}", ProvisioningError):
                    self.db.delete_item(
                        TableName=self.table, Key=self._item({"PK": keys.run_pk(run_id), "SK": sort})
                    )
        return len(items)

    def _regression_query(self, run_id: str) -> dict[str, Any]:
        return {
            "TableName": self.table,
            "KeyConditionExpression": "PK = :pk AND begins_with(SK, :prefix)",
            "ExpressionAttributeValues": self._item({":pk": keys.run_pk(run_id), ":prefix": REGRESSIONS}),
            "ConsistentRead": True,
        }

    def _regression_keys(self, run_id: str) -> list[str]:
        query = {**self._regression_query(run_id), "ProjectionExpression": "SK"}
        found: list[str] = []
        with aws_call(f"list regressions of run {run_id}", WorkflowError):
            for page in self.db.get_paginator("query").paginate(**query):
                found.extend(str(self._plain(raw)["SK"]) for raw in page.get("Items", []))
        return found

    def get_regressions(self, run_id: str) -> list[dict[str, Any]]:
        """Every regression verdict recorded for a run (one paginated Query), in recorded order."""
        parts: list[dict[str, Any]] = []
        with aws_call(f"read regressions of run {run_id}", WorkflowError):
            for page in self.db.get_paginator("query").paginate(**self._regression_query(run_id)):
                parts.extend(self._plain(raw) for raw in page.get("Items", []))
        if not parts:
            return []
        expected = int(parts[0].get("parts", len(parts)))
        return [
            entry
            for part in sorted(parts, key=lambda p: int(p.get("part", 0)))
            if int(part.get("part", 0)) < expected
            for entry in part.get("entries") or []
        ]

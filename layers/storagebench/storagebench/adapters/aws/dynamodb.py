"""The results store on one DynamoDB table, with the key design of ``storagebench.store.keys``.

Items:

* run ``RUN#<run> / RUN``: status, suite, request, configs, times; GSI1 (suite history) and,
  while RUNNING only, GSI3 (runs in progress: ``finish_run`` REMOVEs those attributes);
* config ``RUN#<run> / CONFIG#<c>``: the last status, the state document, errors, and the time
  each status was first recorded (``at_<STATUS>``, written once);
* result ``RUN#<run> / RESULT#<c>#<record key>``: the record as a map (numbers as Decimal), its
  labels, and GSI2 series keys when a ``storage_option`` label names the series.

Every write is idempotent: a retried step rewrites the same keys.
"""

from __future__ import annotations

import math
import re
import time
from collections.abc import Callable, Iterable
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

from boto3.dynamodb.types import TypeDeserializer, TypeSerializer  # type: ignore[import-untyped, unused-ignore]

from storagebench.adapters.aws.errors import ClientError, aws_call, error_code, workflow_error
from storagebench.adapters.aws.settings import AwsSettings
from storagebench.results.records import ResultRecord
from storagebench.store import keys
from storagebench.workflow.errors import (
    CollectError,
    InvalidRequestError,
    ProvisioningError,
    ThrottledError,
    WorkflowError,
)
from storagebench.workflow.models import ConfigState, RunSummary
from storagebench.workflow.ports import Clock

KEY_ATTRIBUTES = ("PK", "SK", "GSI1PK", "GSI1SK", "GSI2PK", "GSI2SK", "GSI3PK", "GSI3SK")
BATCH = 25  # BatchWriteItem's limit
MAX_ITEM_BYTES = 300_000  # DynamoDB allows 400 KB; stay well below
MAX_HISTOGRAM_BUCKETS = 512
MAX_LIST_ENTRIES = 200  # raw artifact paths and labels of one record
BATCH_ATTEMPTS = 6


class _UtcClock:
    def now(self) -> datetime:
        return datetime.now(UTC)


def _iso(moment: datetime) -> str:
    return moment.astimezone(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


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
        self.clock: Clock = clock or _UtcClock()
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
            ":now": _iso(self.clock.now()),
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

"""The previous item layout's writer: one ``RESULT#`` item per record, its histogram nested, no
history point, histogram or digest item, no ``layout`` on the run item.

No step writes it any more. It is kept so tests and ``make bench-store`` can store runs exactly as
the previous code did and prove that they still read (and time how they read) through the store.
"""

from __future__ import annotations

from typing import Any

from storagebench.adapters.aws.dynamo.codec import (
    BATCH,
    MAX_HISTOGRAM_BUCKETS,
    MAX_ITEM_BYTES,
    MAX_LIST_ENTRIES,
    coarsen_histogram,
    item_size,
)
from storagebench.adapters.aws.dynamodb import DynamoResultsStore
from storagebench.core.errors import CollectError
from storagebench.results.records import ResultRecord
from storagebench.store import keys


class PreviousLayoutStore(DynamoResultsStore):
    """``DynamoResultsStore`` writing runs and results in the previous layout (reads are the store's)."""

    layout = None

    def result_item(
        self, run_id: str, config_id: str, record: ResultRecord, started_at: str, labels: dict[str, str]
    ) -> dict[str, Any]:
        """One record's item, bounded in size, as the previous layout wrote it."""
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

"""Config and result items: what a config did and what it measured."""

from __future__ import annotations

import re
from typing import Any

from storagebench.adapters.aws.dynamo.codec import (
    BATCH,
    MAX_HISTOGRAM_BUCKETS,
    MAX_ITEM_BYTES,
    MAX_LIST_ENTRIES,
    coarsen_histogram,
    item_size,
)
from storagebench.adapters.aws.dynamo.table import TableAccess
from storagebench.adapters.aws.errors import aws_call
from storagebench.core.clock import iso
from storagebench.core.errors import (
    CollectError,
    ProvisioningError,
)
from storagebench.core.state import ConfigState
from storagebench.results.records import ResultRecord
from storagebench.store import keys


class MeasuredItems(TableAccess):
    """Config progress and measured results, written idempotently (a retried step rewrites its keys)."""

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

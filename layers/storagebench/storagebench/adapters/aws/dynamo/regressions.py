"""The run's regression verdicts: ``RUN#<run> / REGRESSIONS#<nnnn>`` items."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from storagebench.adapters.aws.dynamo.codec import BATCH, MAX_ITEM_BYTES, REGRESSIONS, to_dynamo, value_size
from storagebench.adapters.aws.dynamo.table import TableAccess
from storagebench.adapters.aws.errors import ClientError, aws_call, error_code, workflow_error
from storagebench.core.clock import iso
from storagebench.core.errors import (
    ProvisioningError,
    WorkflowError,
)
from storagebench.core.regression import INSUFFICIENT, Regression
from storagebench.store import keys


class RegressionItems(TableAccess):
    """Finalize's regression verdicts, in parts under the item budget, and their counts on the run."""

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
            size = value_size(to_dynamo(document)) + 1
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

"""Pattern 5: a run's latency histograms, kept apart from its results and read only on request."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from storagebench.adapters.aws.dynamo.codec import unpack
from storagebench.adapters.aws.dynamo.table import TableAccess
from storagebench.adapters.aws.errors import aws_call
from storagebench.core.errors import WorkflowError
from storagebench.store import keys

HistogramKey = tuple[str, str]
"""(config id, record key): which result a histogram belongs to."""


class HistogramItems(TableAccess):
    """``HISTOGRAMS#<run> / <config>#<record key>`` items: the buckets, packed."""

    def get_histograms(self, run_id: str) -> dict[HistogramKey, list[dict[str, Any]]]:
        """Every histogram of a run (one paginated Query), by (config id, record key). Runs of the
        previous layout have none here: their histograms are nested in their results."""
        query = {
            "TableName": self.table,
            "KeyConditionExpression": "PK = :pk",
            "ExpressionAttributeValues": self._item({":pk": keys.histograms_pk(run_id)}),
        }
        found: dict[HistogramKey, list[dict[str, Any]]] = {}
        with aws_call(f"read the histograms of run {run_id}", WorkflowError):
            for page in self.db.get_paginator("query").paginate(**query):
                for raw in page.get("Items", []):
                    item = self._plain(raw)
                    try:
                        buckets = unpack(item.get("buckets"))
                    except ValueError as exc:
                        raise WorkflowError(
                            f"histogram {item.get('SK')} of run {run_id} cannot be read: {exc}"
                        ) from exc
                    if isinstance(buckets, list):
                        found[(str(item.get("config_id")), str(item.get("record_key")))] = buckets
        return found


def attach_histograms(
    results: Sequence[dict[str, Any]], histograms: Mapping[HistogramKey, list[dict[str, Any]]]
) -> None:
    """Put each histogram back into its result's record (``get_run(..., histograms=True)``)."""
    for result in results:
        record = result.get("record")
        if not isinstance(record, dict) or record.get("histogram"):
            continue
        buckets = histograms.get((str(result.get("config_id")), str(result.get("record_key"))))
        if buckets is not None:
            record["histogram"] = buckets

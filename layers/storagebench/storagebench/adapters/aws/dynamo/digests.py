"""Pattern 6: the suite's digest, every series value of its runs, for the regression check.

``put_results`` writes one ``DIGEST#<suite> / <started>#<run>#<config>#<batch>#<part>`` item per
call: each record's workload, variant (spelled as the series key), phase, direction, fio job group,
repetition and headline metrics, packed. The last N runs of a suite are then one Query between
two start times, whatever the number of series.
"""

from __future__ import annotations

from typing import Any

from storagebench.adapters.aws.dynamo.codec import unpack
from storagebench.adapters.aws.dynamo.table import TableAccess
from storagebench.adapters.aws.errors import aws_call
from storagebench.core.errors import WorkflowError
from storagebench.store import keys


class DigestItems(TableAccess):
    """Reads the suite's digest (the writes are part of ``MeasuredItems.put_results``)."""

    def series_digests(self, suite: str, since: str, until: str) -> list[dict[str, Any]]:
        """The digest items of the suite's runs that started at or after ``since`` and before
        ``until`` (sort-key bounds, e.g. ``<started>#<run>`` of the run being checked), oldest
        first, each with ``series`` unpacked: ``[workload, variant, phase, direction, group,
        repetition, {metric: value}]`` lists. One paginated Query."""
        if not since or until < since:
            raise ValueError(f"since ({since!r}) must be a start time at or before until ({until!r})")
        query = {
            "TableName": self.table,
            "KeyConditionExpression": "PK = :pk AND SK BETWEEN :since AND :until",
            "ExpressionAttributeValues": self._item(
                {":pk": keys.digest_pk(suite), ":since": since, ":until": until}
            ),
        }
        found: list[dict[str, Any]] = []
        with aws_call(f"read the digest of suite {suite}", WorkflowError):
            for page in self.db.get_paginator("query").paginate(**query):
                for raw in page.get("Items", []):
                    item = self._unkeyed(self._plain(raw))
                    try:
                        series = unpack(item.get("series"))
                    except ValueError as exc:
                        raise WorkflowError(
                            f"digest of run {item.get('run_id')}, config {item.get('config_id')} "
                            f"cannot be read: {exc}"
                        ) from exc
                    found.append({**item, "series": series if isinstance(series, list) else []})
        return found

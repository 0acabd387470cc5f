"""Pattern 3: the history of one series (storage option, workload, variant, phase, direction)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from storagebench.adapters.aws.dynamo.codec import MAX_PAGE, unpack
from storagebench.adapters.aws.dynamo.table import TableAccess
from storagebench.core.errors import WorkflowError
from storagebench.store import keys


class SeriesHistory(TableAccess):
    """One measurement of one storage option across runs, between two dates (GSI2)."""

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
        only those fields of each record (plus repetition and group). History points are small
        (no histogram, the record packed); on results of the previous layout ``fields`` is a
        projection, so less to transfer and parse (DynamoDB bills the whole item either way).
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
            names.update({"#labels": "labels", "#record": "record", "#started": "started_at", "#doc": "doc"})
            names.update({f"#f{n}": name for n, name in enumerate(wanted)})
            arguments["ProjectionExpression"] = ", ".join(
                [
                    "#started",
                    "run_id",
                    "config_id",
                    "#labels",
                    "#doc",
                    *(f"#record.#f{n}" for n in range(len(wanted))),
                ]
            )
        if names:
            arguments["ExpressionAttributeNames"] = names
        arguments["ExpressionAttributeValues"] = self._item(values)
        items, after = self._query_page(
            f"read the history of {partition}", arguments, "GSI2", ("GSI2PK", partition), limit, cursor
        )
        wanted_fields = None if fields is None else {"repetition", "group", *fields}
        return [self._point(item, wanted_fields) for item in items], after

    @staticmethod
    def _point(item: dict[str, Any], fields: set[str] | None) -> dict[str, Any]:
        """A history point from a point item (record packed in ``doc``) or a result item of the
        previous layout (record nested, projected by DynamoDB when ``fields`` are asked for)."""
        record: Any = item.get("record") or {}
        if "doc" in item:
            try:
                record = unpack(item["doc"])
            except ValueError as exc:
                raise WorkflowError(
                    f"history point of run {item.get('run_id')}, config {item.get('config_id')} "
                    f"cannot be read: {exc}"
                ) from exc
            if fields is not None and isinstance(record, dict):
                record = {k: v for k, v in record.items() if k in fields}
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

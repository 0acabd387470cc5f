"""Config and result items: what a config did and what it measured (``store.keys``: the results
packed in the run's partition, history points, histograms, the suite's digest)."""

from __future__ import annotations

import re
from typing import Any

from storagebench.adapters.aws.dynamo.codec import (
    BATCH,
    MAX_HISTOGRAM_BUCKETS,
    MAX_LIST_ENTRIES,
    MAX_PACKED_BYTES,
    coarsen_histogram,
    pack,
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
from storagebench.store.models import measured_metrics


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

    def put_results(
        self,
        run_id: str,
        config_id: str,
        records: list[ResultRecord],
        started_at: str,
        labels: dict[str, str],
    ) -> int:
        """Store measured records; returns how many (one per record key: the last record wins).

        One call writes (``store.keys``): the records packed without their histograms in the run's
        partition (``RESULTS#``: what ``get_run`` reads), one history point per record on GSI2
        (when a ``storage_option`` label names the series), each histogram in the run's
        ``HISTOGRAMS#`` partition, and the series values in the suite's digest (when ``suite`` and
        ``storage_option`` labels are given). Idempotent: the same records rewrite the same keys.
        """
        unique: dict[str, ResultRecord] = {}
        for record in records:
            unique[keys.record_key(record)] = record
        if not unique:
            return 0
        batch = keys.batch_id(list(unique))
        written = iso(self.clock.now())
        entries: list[dict[str, Any]] = []
        details: list[dict[str, Any]] = []
        for key, record in unique.items():
            document, histogram, notes = self._split(record)
            entry: dict[str, Any] = {"record_key": key, "record": document}
            if notes:
                entry["bounded"] = notes
            entries.append(entry)
            details.extend(
                self._details(run_id, config_id, key, record, document, histogram, started_at, labels)
            )
        common = {"run_id": run_id, "config_id": config_id, "started_at": started_at, "labels": dict(labels)}
        parts = packed_parts(entries, f"results of {run_id}/{config_id}")
        items: list[dict[str, Any]] = [
            {
                "PK": keys.run_pk(run_id),
                "SK": keys.results_sk(config_id, batch, part),
                "type": "results",
                **common,
                "batch": batch,
                "part": part,
                "parts": len(parts),
                "count": len(chunk),
                "written_at": written,
                "records": packed,
            }
            for part, (chunk, packed) in enumerate(parts)
        ]
        items.extend(details)
        items.extend(self._digests(run_id, config_id, batch, unique, started_at, labels, written))
        for start in range(0, len(items), BATCH):
            self._batch_write(self._item(item) for item in items[start : start + BATCH])
        return len(unique)

    @staticmethod
    def _split(record: ResultRecord) -> tuple[dict[str, Any], list[dict[str, Any]], list[str]]:
        """The record without its histogram, the histogram (bounded), and what was bounded."""
        document = record.model_dump(mode="json")
        histogram = document.pop("histogram", None) or []
        notes: list[str] = []
        if len(histogram) > MAX_HISTOGRAM_BUCKETS:
            coarse = coarsen_histogram(histogram, MAX_HISTOGRAM_BUCKETS)
            notes.append(f"histogram coarsened from {len(histogram)} to {len(coarse)} buckets")
            histogram = coarse
        for field in ("raw", "labels"):
            values = document.get(field) or []
            if len(values) > MAX_LIST_ENTRIES:
                document[field] = values[:MAX_LIST_ENTRIES]
                notes.append(f"{field} truncated from {len(values)} to {MAX_LIST_ENTRIES} entries")
        return document, histogram, notes

    @staticmethod
    def _details(
        run_id: str,
        config_id: str,
        key: str,
        record: ResultRecord,
        document: dict[str, Any],
        histogram: list[dict[str, Any]],
        started_at: str,
        labels: dict[str, str],
    ) -> list[dict[str, Any]]:
        """The record's history point (with a storage option) and its histogram item (with one)."""
        common = {"run_id": run_id, "config_id": config_id, "record_key": key, "started_at": started_at}
        items: list[dict[str, Any]] = []
        option = labels.get("storage_option")
        if option:
            items.append(
                {
                    "PK": keys.points_pk(run_id),
                    "SK": keys.detail_sk(config_id, key),
                    "GSI2PK": keys.series_pk(option, record),
                    "GSI2SK": keys.series_sk(started_at, run_id, record.repetition),
                    "type": "point",
                    **common,
                    "labels": dict(labels),
                    "doc": pack(document),
                }
            )
        if histogram:
            packed = pack(histogram)
            if len(packed) > MAX_PACKED_BYTES:
                raise CollectError(
                    f"the histogram of {run_id}/{config_id}/{key} packs to {len(packed)} bytes, "
                    f"over the {MAX_PACKED_BYTES}-byte budget"
                )
            items.append(
                {
                    "PK": keys.histograms_pk(run_id),
                    "SK": keys.detail_sk(config_id, key),
                    "type": "histogram",
                    **common,
                    "buckets": packed,
                }
            )
        return items

    @staticmethod
    def _digests(
        run_id: str,
        config_id: str,
        batch: str,
        records: dict[str, ResultRecord],
        started_at: str,
        labels: dict[str, str],
        written: str,
    ) -> list[dict[str, Any]]:
        """The series values of these records for the suite's regression check (``DigestItems``)."""
        suite, option = labels.get("suite"), labels.get("storage_option")
        if not suite or not option:
            return []
        series = [
            [
                r.workload,
                keys.record_variant(r),
                r.phase,
                r.direction,
                r.group,
                r.repetition,
                measured_metrics(r),
            ]
            for r in records.values()
        ]
        parts = packed_parts(series, f"digest of {run_id}/{config_id}")
        return [
            {
                "PK": keys.digest_pk(suite),
                "SK": keys.digest_sk(started_at, run_id, config_id, f"{batch}#{part:03d}"),
                "type": "digest",
                "run_id": run_id,
                "config_id": config_id,
                "started_at": started_at,
                "storage_option": option,
                "written_at": written,
                "series": packed,
            }
            for part, (_, packed) in enumerate(parts)
        ]


def packed_parts(entries: list[Any], what: str) -> list[tuple[list[Any], bytes]]:
    """``entries`` in consecutive parts, each packed under MAX_PACKED_BYTES (halved until they fit)."""
    packed = pack(entries)
    if len(packed) <= MAX_PACKED_BYTES:
        return [(entries, packed)]
    if len(entries) == 1:
        raise CollectError(f"{what}: one entry packs to {len(packed)} bytes, over {MAX_PACKED_BYTES}")
    middle = len(entries) // 2
    return packed_parts(entries[:middle], what) + packed_parts(entries[middle:], what)

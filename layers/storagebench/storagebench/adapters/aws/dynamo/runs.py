"""Pattern 1 (a run with its configs and results), 2 (a suite's runs) and 4 (runs in progress);
the claims of scheduled occurrences and the stop of a run."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from storagebench.adapters.aws.dynamo.codec import (
    KEY_ATTRIBUTES,
    MAX_ITEM_BYTES,
    REGRESSIONS,
    to_dynamo,
    value_size,
)
from storagebench.adapters.aws.dynamo.histograms import HistogramItems, attach_histograms
from storagebench.adapters.aws.dynamo.packed import RunResults, result_documents
from storagebench.adapters.aws.errors import ClientError, aws_call, error_code, workflow_error
from storagebench.core.errors import (
    InvalidRequestError,
    ProvisioningError,
    WorkflowError,
)
from storagebench.core.state import RunSummary
from storagebench.store import keys


class RunItems(HistogramItems):
    """Run items: started, finished, failed by the janitor; read whole (pattern 1), by suite (pattern 2),
    in progress (pattern 4)."""

    layout: int | None = keys.LAYOUT
    """Written on the run item: which layout its results are in (``store.keys``)."""

    # -------------------------------------------------------------- runs

    def start_run(
        self,
        run_id: str,
        suite: str,
        request: dict[str, Any],
        started_at: str,
        expires_at: str,
        configs: list[str],
        cost_bound_usd: float | None = None,
    ) -> None:
        sort = keys.started_sk(started_at, run_id)
        item: dict[str, Any] = {
            "PK": keys.run_pk(run_id),
            "SK": keys.RUN,
            "GSI1PK": keys.suite_pk(suite),
            "GSI1SK": sort,
            "GSI3PK": keys.ACTIVE,
            "GSI3SK": sort,
            "type": "run",
            "layout": self.layout,
            "run_id": run_id,
            "suite": suite,
            "status": "RUNNING",
            "request": request,
            "configs": configs,
            "started_at": started_at,
            "expires_at": expires_at,
        }
        if cost_bound_usd is not None:  # what the stack's budget counts while the run is in progress
            item["cost_bound_usd"] = round(cost_bound_usd, 2)
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

    def claim_occurrence(self, occurrence: str, run_id: str, claimed_at: str) -> str:
        """The conditional write that makes a scheduled occurrence start one run: the first execution
        to claim it holds it; a retry of that execution's Plan finds its own claim."""
        key = {"PK": keys.occurrence_pk(occurrence), "SK": keys.CLAIM}
        claimed = datetime.fromisoformat(claimed_at.replace("Z", "+00:00"))
        item = {
            **key,
            "type": "occurrence",
            "occurrence": occurrence,
            "run_id": run_id,
            "claimed_at": claimed_at,
            keys.EXPIRES: int(claimed.timestamp()) + keys.CLAIM_TTL_S,  # DynamoDB deletes it then
        }
        try:
            self.db.put_item(
                TableName=self.table,
                Item=self._item(item),
                ConditionExpression="attribute_not_exists(PK) OR run_id = :run",
                ExpressionAttributeValues=self._item({":run": run_id}),
            )
            return run_id
        except ClientError as exc:
            if error_code(exc) != "ConditionalCheckFailedException":
                raise workflow_error(exc, f"claim {occurrence} for run {run_id}", ProvisioningError) from exc
        holder = str((self._get(key["PK"], key["SK"]) or {}).get("run_id"))
        with aws_call(f"record the refused start {run_id} of {occurrence}", ProvisioningError):
            self.db.update_item(  # kept on the claim: which executions it turned away
                TableName=self.table,
                Key=self._item(key),
                UpdateExpression="ADD refused :run",
                ExpressionAttributeValues={":run": {"SS": [run_id]}},
            )
        return holder

    def mark_stopping(self, run_id: str, stopped_at: str) -> dict[str, Any] | None:
        """STOPPING from RUNNING only, before the execution is stopped: a launch that completes after
        it sees the run stopping (``steps.provision``). The run stays on GSI3 until SweepRun ends it."""
        try:
            response = self.db.update_item(
                TableName=self.table,
                Key=self._item({"PK": keys.run_pk(run_id), "SK": keys.RUN}),
                UpdateExpression="SET #status = :stopping, stopping_at = :at",
                ConditionExpression="#status = :running",
                ExpressionAttributeNames={"#status": "status"},
                ExpressionAttributeValues=self._item(
                    {":stopping": "STOPPING", ":running": "RUNNING", ":at": stopped_at}
                ),
                ReturnValues="ALL_NEW",
            )
        except ClientError as exc:
            if error_code(exc) == "ConditionalCheckFailedException":
                return None
            raise workflow_error(exc, f"mark run {run_id} stopping", ProvisioningError) from exc
        return self._unkeyed(self._plain(response["Attributes"]))

    def run_status(self, run_id: str) -> str | None:
        item = self._get(keys.run_pk(run_id), keys.RUN)  # strongly consistent: a stop just recorded counts
        return str(item["status"]) if item and item.get("status") else None

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

        Conditional on the run still being RUNNING (or STOPPING: a stop whose sweep never ended it), so
        a Finalize that got there first wins and two sweeps at once fail it once; False when the
        condition did not hold."""
        try:
            self.db.update_item(
                TableName=self.table,
                Key=self._item({"PK": keys.run_pk(run_id), "SK": keys.RUN}),
                UpdateExpression="SET #status = :failed, ended_at = :ended, failure_reason = :reason "
                "REMOVE GSI3PK, GSI3SK",
                ConditionExpression="#status IN (:running, :stopping)",
                ExpressionAttributeNames={"#status": "status"},
                ExpressionAttributeValues=self._item(
                    {
                        ":failed": "FAILED",
                        ":running": "RUNNING",
                        ":stopping": "STOPPING",
                        ":ended": ended_at,
                        ":reason": reason,
                    }
                ),
            )
        except ClientError as exc:
            if error_code(exc) == "ConditionalCheckFailedException":
                return False
            raise workflow_error(exc, f"fail stuck run {run_id}", ProvisioningError) from exc
        return True

    def list_runs(self, suite: str, limit: int = 10) -> list[dict[str, Any]]:
        """The latest runs of a suite, newest first (one Query on GSI1)."""
        return self._query_index("GSI1", keys.suite_pk(suite), limit)

    # -------------------------------------------------------------- the stack's budget

    def spend_in_progress(self) -> tuple[float, int]:
        """The upper bounds of the runs in progress, summed, and how many runs (every page of GSI3)."""
        total, runs, cursor = 0.0, 0, None
        while True:
            page, cursor = self.runs_in_progress_page(limit=100, cursor=cursor)
            runs += len(page)
            total += sum(float(run.get("cost_bound_usd") or 0) for run in page)
            if cursor is None:
                return total, runs

    def reserve_daily_spend(self, day: str, usd: float, cap_usd: float) -> tuple[bool, float]:
        """Add ``usd`` to the day's reserved spend if it stays within ``cap_usd`` (one conditional
        write: two starts cannot both take the last of the budget); (reserved?, the day's total)."""
        key = {"PK": keys.spend_pk(day), "SK": keys.SPEND}
        expires = int(datetime.fromisoformat(f"{day}T00:00:00+00:00").timestamp()) + keys.CLAIM_TTL_S
        try:
            response = self.db.update_item(
                TableName=self.table,
                Key=self._item(key),
                UpdateExpression="ADD reserved_usd :usd, runs :one SET #expires = :expires",
                ConditionExpression="attribute_not_exists(reserved_usd) OR reserved_usd <= :room",
                ExpressionAttributeNames={"#expires": keys.EXPIRES},
                ExpressionAttributeValues=self._item(
                    {":usd": round(usd, 2), ":one": 1, ":room": round(cap_usd - usd, 2), ":expires": expires}
                ),
                ReturnValues="UPDATED_NEW",
            )
        except ClientError as exc:
            if error_code(exc) != "ConditionalCheckFailedException":
                raise workflow_error(exc, f"reserve ${usd:.2f} of {day}'s spend", WorkflowError) from exc
            held = self._get(key["PK"], key["SK"]) or {}
            return False, float(held.get("reserved_usd") or 0)
        return True, float(self._plain(response["Attributes"]).get("reserved_usd") or 0)

    def runs_in_progress(self, limit: int = 100) -> list[dict[str, Any]]:
        """Runs still RUNNING or STOPPING, newest first (GSI3 holds only those: finish_run removes
        the keys)."""
        return self._query_index("GSI3", keys.ACTIVE, limit)

    def get_run(self, run_id: str, *, histograms: bool = False) -> dict[str, Any]:
        """The run, its configs and its results from one (paginated) Query; KeyError if unknown.

        Results come without their latency histograms (kept apart: most readers never look at
        them) unless ``histograms`` asks for them: one more Query (``get_histograms``). Results
        of the previous layout carry theirs either way.
        """
        run: dict[str, Any] | None = None
        configs: list[dict[str, Any]] = []
        results = RunResults()
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
                    elif sort.startswith(keys.CONFIG_PREFIX):
                        configs.append(plain)
                    elif sort.startswith((keys.RESULT_PREFIX, keys.RESULTS_PREFIX)):
                        results.add(sort, plain)
        if run is None:
            raise KeyError(run_id)
        documents = results.documents()
        if histograms:
            attach_histograms(documents, self.get_histograms(run_id))
        return {"run": run, "configs": configs, "results": documents}

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
        come in descending key order (a packed item holds several records: a page may hold more
        results than ``limit``), without histograms, then the regression verdicts, then the configs.
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
            elif sort.startswith(keys.CONFIG_PREFIX):
                page["configs"].append(plain)
            elif sort.startswith((keys.RESULT_PREFIX, keys.RESULTS_PREFIX)):
                page["results"].extend(result_documents(sort, plain))
            elif sort.startswith(REGRESSIONS):
                page["regressions"].extend(plain.get("entries") or [])
        if cursor is None and page["run"] is None:
            raise KeyError(run_id)
        return page, after

    def record_economics(self, run_id: str, summary: Mapping[str, Any]) -> None:
        """The run's cost and comparison summary (``costs.economics.economics_summary``) on the run
        item, so the suite's history (pattern 2) carries each config's cost delta and verdict; the
        full comparison stays in S3 at ``summary["artifact"]``. Idempotent (a SET)."""
        size = value_size(to_dynamo(dict(summary)))
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

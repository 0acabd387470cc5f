"""What each route does, over the ports: no HTTP here, no boto3 either.

A request is validated by the shared request model and checked by the same preview the Plan step
uses (``planning.preview``) before an execution is started, so an invalid or over-limit request
never starts one (Plan checks again: a schedule reaches it without the API).
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Callable
from typing import Any, Literal

from storagebench.api.errors import ApiError, detail
from storagebench.api.models import (
    DryRun,
    ExportFile,
    ReportLink,
    ResultsPage,
    RunCreated,
    RunDetail,
    RunExport,
    RunList,
    RunStopped,
)
from storagebench.api.ports import (
    EXECUTION_INPUT_LIMIT,
    Execution,
    InputTooLargeError,
    ReportLinks,
    RunLauncher,
    RunSweeper,
    execution_input,
)
from storagebench.api.queries import (
    DIRECTIONS,
    MAX_CURSOR,
    CompareQuery,
    ListRunsQuery,
    ResultsQuery,
    RunQuery,
)
from storagebench.api.run_view import RunNotFoundError, RunReader
from storagebench.core.clock import Clock, SystemClock, iso
from storagebench.core.errors import InvalidRequestError
from storagebench.core.guardrails import Guardrails
from storagebench.costs.recommend import Recommendation
from storagebench.costs.recommend_run import NoRequirementsError, recommend_stored_run
from storagebench.costs.run_compare import RunComparison, compare_runs
from storagebench.planning.preview import preview_request
from storagebench.quotas.ports import QuotaPolicy, QuotaReader
from storagebench.request import BenchmarkRequest, RequestError, parse_request
from storagebench.request.privilege import privileged_content
from storagebench.request.requirements import SYNTAX, RequirementError
from storagebench.store.models import StoredRun
from storagebench.workflow.artifact_keys import export_file_of, report_key, run_export_prefix
from storagebench.workflow.events import SweepRunEvent
from storagebench.workflow.ports import ResultsStore
from storagebench.workflow.run_ids import keyed_run_id, new_run_id

REPORT_LINK_S = 900
STOPPED_ERROR = "StoppedByApi"


MAX_IDEMPOTENCY_KEY = 255


def checked_idempotency_key(key: str) -> str:
    """The key, or a 400 naming the header (the CLI's ``--idempotency-key`` checks with this too)."""
    if not 1 <= len(key) <= MAX_IDEMPOTENCY_KEY or not key.isprintable() or not key.isascii():
        raise ApiError(
            400,
            "bad_header",
            "the Idempotency-Key header must be 1-255 printable ASCII characters",
            [detail("Idempotency-Key", key[:300], f"1-{MAX_IDEMPOTENCY_KEY} printable ASCII characters")],
        )
    return key


def check_execution_input(document: Any) -> None:
    """413 when Step Functions would refuse the run's input (the CLI checks with this too): the body
    limit counts the bytes sent, StartExecution the input as the launcher writes it."""
    if (size := len(execution_input(document).encode("utf-8"))) > EXECUTION_INPUT_LIMIT:
        raise _too_large(size)


def _too_large(size: int) -> ApiError:
    return ApiError(
        413,
        "request_too_large",
        f"the request is {size:,} bytes as Step Functions input; StartExecution takes at most "
        f"{EXECUTION_INPUT_LIMIT:,} bytes (256 KiB, UTF-8): use fewer configs or shorter texts",
        [
            detail(
                "(body)",
                size,
                "too large to start",
                f"at most {EXECUTION_INPUT_LIMIT} bytes of execution input",
            )
        ],
    )


def _bad_cursor(value: str, why: str) -> ApiError:
    return ApiError.bad_parameter(
        "cursor", value, why, "the next_cursor of the previous page of the same query", code="bad_cursor"
    )


def _over_budget(parameter: str, total_usd: float, cap_usd: float, message: str) -> ApiError:
    """A start past one of the stack's budget parameters, with the total it would have reached."""
    return ApiError(
        422, "over_budget", message, [detail(parameter, round(total_usd, 2), message, cap_usd, "stack")]
    )


class ApiService:
    def __init__(
        self,
        store: ResultsStore,
        launcher: RunLauncher,
        links: ReportLinks,
        sweeper: RunSweeper,
        guardrails: Guardrails,
        new_id: Callable[[str], str] = new_run_id,
        clock: Clock | None = None,
        quotas: QuotaReader | None = None,
    ) -> None:
        self.store = store
        self.launcher = launcher
        self.links = links
        self.sweeper = sweeper
        self.guardrails = guardrails
        self.new_id = new_id
        self.clock: Clock = clock or SystemClock()
        # The account's EC2 vCPU quotas: the dry run shows them, a start over one is refused (422)
        self.quotas = quotas

    # ------------------------------------------------------------------ POST /runs

    def _check_privilege(self, request: BenchmarkRequest, privileged: bool) -> None:
        shell = privileged_content(request)
        where = ", ".join(p.path for p in shell)
        if privileged and not self.guardrails.allow_privileged:
            raise ApiError(
                403,
                "privileged_runs_disabled",
                "this stack does not run privileged requests (its AllowPrivilegedRuns parameter is false)"
                + (f": {where}" if where else ""),
                [detail(p.path, None, p.what) for p in shell],
            )
        if shell and not privileged:
            details = [detail(p.path, None, f"{p.what}: start it with POST /runs/privileged") for p in shell]
            raise ApiError(
                403,
                "privileged_request",
                f"the request runs shell on the instance ({where}); POST /runs may not start it: use "
                "POST /runs/privileged, which an administrator grants separately",
                details,
            )

    def create_run(
        self,
        document: Any,
        dry_run: bool,
        *,
        privileged: bool = False,
        idempotency_key: str | None = None,
        caller: str = "",
    ) -> RunCreated | DryRun:
        """Validate, check privilege and guardrails, then start (or preview) the run.

        ``privileged``: the caller came through ``POST /runs/privileged``, the route an administrator
        grants separately; only there may a request carry shell, and only if the stack allows it.
        ``caller``: who signed the request (the IAM principal's ARN); an idempotency key is theirs.
        """
        try:
            request = parse_request(document)
        except RequestError as exc:
            details = [
                detail(
                    e.path,
                    e.value,
                    e.message + (" (required)" if e.missing and e.message != "required" else ""),
                )
                for e in exc.errors
            ]
            fields = ", ".join(str(d.field) for d in details)
            raise ApiError(
                422,
                "invalid_request",
                f"invalid benchmark request ({len(details)} problem(s)): {fields}",
                details,
            ) from None
        if request.scheduled is not None:  # else a caller could claim a schedule's next occurrence
            raise ApiError(
                422,
                "invalid_request",
                "invalid benchmark request (1 problem(s)): scheduled",
                [
                    detail(
                        "scheduled",
                        document.get("scheduled"),
                        "set by a schedule of this stack only (EventBridge Scheduler fills it in); remove it",
                    )
                ],
            )
        self._check_privilege(request, privileged)
        check_execution_input(document)
        quotas = QuotaPolicy(self.quotas) if self.quotas is not None else None
        preview = preview_request(request, self.guardrails, quotas=quotas)
        if dry_run:
            return DryRun(preview=preview)
        if not preview.allowed:
            details = [detail(p.field, p.value, p.message, p.limit_value, p.limit) for p in preview.problems]
            raise ApiError(422, "over_limit", preview.problem_text(), details)
        bound = preview.estimate.upper_bound_usd
        try:
            if idempotency_key is None:
                run_id = self.new_id(request.name)
                self._reserve_budget(bound)
                arn = self.launcher.start(run_id, document)
                replayed = False
            else:
                run_id = keyed_run_id(request.name, checked_idempotency_key(idempotency_key), caller)
                arn, replayed = self._start_once(run_id, idempotency_key, document, bound)
        except InputTooLargeError as exc:  # Step Functions counts otherwise than we do
            raise _too_large(exc.size) from None
        return RunCreated(
            run_id=run_id,
            execution_arn=arn,
            location=f"/runs/{run_id}",
            max_concurrency=preview.max_concurrency,
            estimated_cost_usd=round(preview.estimate.total_usd, 2),
            replayed=replayed,
        )

    def _reserve_budget(self, bound_usd: float) -> None:
        """The stack's budget (MaxConcurrentSpendUsd, MaxDailySpendUsd) against this run's upper
        bound: refused with the figures, else the day's share is reserved (one conditional write)."""
        limits = self.guardrails
        active, runs = self.store.spend_in_progress()
        cap = limits.max_concurrent_spend_usd
        if active + bound_usd > cap:
            message = (
                f"the stack's {runs} run(s) in progress may cost ${active:,.2f} together; this run's "
                f"upper bound ${bound_usd:,.2f} would take them to ${active + bound_usd:,.2f}, past "
                f"MaxConcurrentSpendUsd ${cap:,.2f}: start it when a run has ended"
            )
            raise _over_budget("MaxConcurrentSpendUsd", active + bound_usd, cap, message)
        day = self.clock.now().date().isoformat()
        daily = limits.max_daily_spend_usd
        reserved, total = (False, 0.0) if bound_usd > daily else (True, 0.0)
        if reserved:
            reserved, total = self.store.reserve_daily_spend(day, bound_usd, daily)
        if not reserved:
            message = (
                f"the runs started on {day} (UTC) may cost ${total:,.2f} together; this run's upper "
                f"bound ${bound_usd:,.2f} would take them to ${total + bound_usd:,.2f}, past "
                f"MaxDailySpendUsd ${daily:,.2f}"
            )
            raise _over_budget("MaxDailySpendUsd", total + bound_usd, daily, message)

    def _start_once(self, run_id: str, key: str, document: Any, bound_usd: float) -> tuple[str, bool]:
        """The key's run: the one already started with this body, or a new one; another body -> 409."""
        existing = self.launcher.describe(run_id)
        if existing is None and self.store.run_status(run_id) is not None:
            # The key's run is recorded but its execution is gone (Step Functions purges histories
            # after 90 days): starting again would write over that run's request before Plan's
            # conditional write refused the run itself.
            raise ApiError(
                409,
                "idempotency_conflict",
                f"Idempotency-Key {key!r} already named run {run_id}, whose execution history is purged",
                [detail("Idempotency-Key", key, f"names run {run_id}; send a new key for a new run")],
            )
        if existing is None:
            self._reserve_budget(bound_usd)
            try:
                return self.launcher.start(run_id, document), False
            except InvalidRequestError:  # a concurrent start with the same key won the name
                existing = self.launcher.describe(run_id)
                if existing is None:
                    raise
        if existing.input != document:
            raise ApiError(
                409,
                "idempotency_conflict",
                f"Idempotency-Key {key!r} already started run {run_id} with another request body",
                [detail("Idempotency-Key", key, f"names run {run_id}; send a new key for a new run")],
            )
        return existing.arn, True

    # ------------------------------------------------------------------ GET /runs

    def list_runs(self, query: ListRunsQuery) -> RunList:
        try:
            if query.suite is not None:
                runs, after = self.store.list_runs_page(query.suite, query.limit, query.cursor)
            else:
                runs, after = self.store.runs_in_progress_page(query.limit, query.cursor)
        except ValueError as exc:  # the store names a cursor that is not one of this query's
            raise _bad_cursor(query.cursor or "", str(exc)) from None
        return RunList(
            suite=query.suite,
            runs=[{k: v for k, v in r.items() if k != "request"} for r in runs],
            next_cursor=after,
        )

    # ------------------------------------------------------------------ GET /runs/{id}

    def get_run(self, run_id: str, query: RunQuery | None = None) -> RunDetail:
        """The run view (``api.run_view``, which ``results --run`` renders too); ``query.histograms``
        adds each record's latency histogram (the store keeps them apart: one more Query)."""
        reader = RunReader(self.store, self.launcher.describe)
        try:
            return reader.get_run(run_id, histograms=query is not None and query.histograms)
        except RunNotFoundError:
            raise self._no_run(run_id) from None

    @staticmethod
    def _no_run(run_id: str) -> ApiError:
        return ApiError(
            404, "run_not_found", f"no run {run_id!r}", [detail("run_id", run_id, "no run with this id")]
        )

    # ------------------------------------------------------------------ GET /runs/{id}/report

    def report_link(self, run_id: str, form: Literal["html", "md", "csv"]) -> ReportLink:
        try:
            page, _ = self.store.get_run_page(run_id, limit=1)  # the run item opens the first page
        except KeyError:
            raise self._no_run(run_id) from None
        url = self.links.link(report_key(run_id, form), REPORT_LINK_S)
        if url is None:
            status = (page.get("run") or {}).get("status", "unknown")
            raise ApiError(
                404,
                "report_not_found",
                f"run {run_id} has no {form} report (status {status}): Finalize writes it when the run ends",
                [detail("run_id", run_id, f"no report yet; the run is {status}")],
            )
        return ReportLink(run_id=run_id, format=form, url=url, expires_in_s=REPORT_LINK_S)

    # ------------------------------------------------------------------ GET /runs/{id}/export

    def run_export(self, run_id: str) -> RunExport:
        """A presigned link to each config's export Collect wrote (``<config>.jsonl``, and
        ``<config>.attempt<N>.jsonl`` after a Spot relaunch), listed under the run's export prefix."""
        try:
            page, _ = self.store.get_run_page(run_id, limit=1)  # the run item opens the first page
        except KeyError:
            raise self._no_run(run_id) from None
        run = StoredRun.decode(page.get("run"))
        if run.suite is None or run.started_at is None:
            raise self._no_run(run_id)  # not recorded by Plan (which writes both first)
        prefix = run_export_prefix(run.suite, run.started_at, run_id)
        files: list[ExportFile] = []
        notes: list[str] = []
        for link in self.links.links_under(prefix, REPORT_LINK_S):
            named = export_file_of(link.key.removeprefix(prefix))
            if named is None:
                notes.append(f"{link.key}: not a config's export (<config>[.attempt<N>].jsonl); left out")
                continue
            files.append(ExportFile(config_id=named[0], attempt=named[1], key=link.key, url=link.url))
        files.sort(key=lambda f: (f.config_id, f.attempt))
        exported = {f.config_id for f in files}
        return RunExport(
            run_id=run_id,
            suite=run.suite,
            status=run.status or "unknown",
            prefix=prefix,
            files=files,
            configs_without_rows=[c for c in run.configs if c not in exported],
            notes=notes,
            expires_in_s=REPORT_LINK_S,
        )

    # ------------------------------------------------------------------ GET /runs/{id}/recommendation

    def recommendation(self, run_id: str, requirements: list[str]) -> Recommendation:
        """The cheapest config meeting every requirement (the request's when none are given), the
        runners-up and why each other config failed; 400 naming a requirement that cannot be read."""
        try:
            stored = self.store.get_run(run_id)
        except KeyError:
            raise self._no_run(run_id) from None
        try:
            return recommend_stored_run(stored, requirements)
        except RequirementError as exc:
            raise ApiError(
                400,
                "bad_requirement",
                f"requirement {exc.text!r} cannot be judged: {exc.reason}",
                [detail("require", exc.text, f"{exc.problem} (character {exc.position + 1})", exc.allowed)],
            ) from None
        except NoRequirementsError as exc:
            raise ApiError(
                400,
                "no_requirements",
                str(exc),
                [detail("require", None, "required: the run's request has no requirements", SYNTAX)],
            ) from None

    # ------------------------------------------------------------------ GET /runs/{id}/compare

    def compare(self, run_id: str, query: CompareQuery) -> RunComparison:
        """This run (B) against ``query.against`` (A), measurement by measurement and metric by metric,
        with Welch's test; 404 naming the run that does not exist, 400 for a run against itself."""
        if query.against == run_id:
            raise ApiError.bad_parameter(
                "against", query.against, "is the run itself", "the id of another run to compare with"
            )
        documents = []
        for field, wanted in (("against", query.against), ("run_id", run_id)):
            try:
                documents.append(self.store.get_run(wanted))
            except KeyError:
                raise ApiError(
                    404,
                    "run_not_found",
                    f"no run {wanted!r} ({field})",
                    [detail(field, wanted, "no run with this id")],
                ) from None
        return compare_runs(documents[0], documents[1], min_effect_pct=query.min_effect_pct)

    # ------------------------------------------------------------------ GET /results

    def results(self, query: ResultsQuery) -> ResultsPage:
        """One page of a storage option's history; without a direction the pages walk read, write,
        mixed and trim in turn (one Query each), under one cursor."""
        if query.until is not None and query.until < query.since:
            raise ApiError.bad_parameter(
                "until", query.until, f"is before since ({query.since})", "an ISO date or time after since"
            )
        directions = (query.direction,) if query.direction else DIRECTIONS
        position, store_cursor = self._results_cursor(query.cursor, directions)
        points: list[dict[str, Any]] = []
        while position < len(directions):
            remaining = query.limit - len(points)
            try:
                page, after = self.store.metric_history_page(
                    query.storage,
                    query.workload,
                    query.variant,
                    query.phase,
                    directions[position],
                    query.since,
                    query.until,
                    remaining,
                    store_cursor,
                    suite=query.suite,
                )
            except ValueError as exc:
                if store_cursor is not None:
                    raise _bad_cursor(query.cursor or "", str(exc)) from None
                raise ApiError.bad_parameter("since", query.since, str(exc)) from None
            points.extend(page)
            if after is not None:
                return self._results_page(query, points, self._encode(directions[position], after))
            position, store_cursor = position + 1, None
            if len(points) >= query.limit:
                break
        following = self._encode(directions[position], None) if position < len(directions) else None
        return self._results_page(query, points, following)

    @staticmethod
    def _results_page(query: ResultsQuery, points: list[dict[str, Any]], cursor: str | None) -> ResultsPage:
        return ResultsPage(storage=query.storage, workload=query.workload, points=points, next_cursor=cursor)

    @staticmethod
    def _encode(direction: str, store_cursor: str | None) -> str:
        text = json.dumps({"d": direction, "c": store_cursor}, separators=(",", ":"))
        return base64.urlsafe_b64encode(text.encode()).decode().rstrip("=")

    @staticmethod
    def _results_cursor(cursor: str | None, directions: tuple[str, ...]) -> tuple[int, str | None]:
        if cursor is None:
            return 0, None
        try:
            padded = cursor + "=" * (-len(cursor) % 4)
            decoded = json.loads(base64.urlsafe_b64decode(padded.encode("ascii")))
        except (ValueError, binascii.Error, UnicodeEncodeError):
            raise _bad_cursor(cursor, "not a cursor this API returned") from None
        if not isinstance(decoded, dict) or set(decoded) != {"d", "c"}:
            raise _bad_cursor(cursor, "not a cursor this API returned")
        direction, inner = decoded["d"], decoded["c"]
        if direction not in directions:
            raise _bad_cursor(cursor, f"it continues direction {direction!r}, not one of this query's")
        if inner is not None and (not isinstance(inner, str) or not inner or len(inner) > MAX_CURSOR):
            raise _bad_cursor(cursor, "not a cursor this API returned")
        return directions.index(direction), inner

    # ------------------------------------------------------------------ DELETE /runs/{id}

    def stop_run(self, run_id: str) -> RunStopped:
        """Record the run STOPPING, stop its execution, hand the release to SweepRun.

        Step Functions lets a Lambda invocation under way finish after StopExecution, so a Provision
        may launch after the first sweep: it sees STOPPING and releases what it made
        (``steps.provision``), and SweepRun sweeps again once such an invocation must have ended."""
        execution = self.launcher.describe(run_id)
        try:
            page, _ = self.store.get_run_page(run_id, limit=1)
            run = StoredRun.decode(page["run"]) if page.get("run") is not None else None
        except KeyError:
            run = None
        if execution is None and run is None:
            raise self._no_run(run_id)
        status = execution.status if execution is not None else str(run.status if run else None)
        if status != "RUNNING":
            raise ApiError(
                409,
                "run_finished",
                f"run {run_id} is {status}: only a running run can be stopped",
                [detail("run_id", run_id, f"the run is {status}", "a run whose status is RUNNING")],
            )
        if run is not None:
            # Recorded before the stop: a Provision under way sees it once its launch completes
            self.store.mark_stopping(run_id, iso(self.clock.now()))
        if execution is not None:
            self.launcher.stop(run_id, STOPPED_ERROR, f"DELETE /runs/{run_id}")
        stopped_at = iso(self.clock.now())  # the execution starts no task after this
        if run is None:
            # Plan may have recorded the run since the read above (then it is stopping too); if not,
            # nothing was launched: Plan records the run before the first launch
            recorded = self.store.mark_stopping(run_id, stopped_at)
            if recorded is None:
                return RunStopped(run_id=run_id, execution_arn=_arn(execution), cleanup="not_needed")
            run = StoredRun.decode(recorded)
        self.sweeper.sweep(
            SweepRunEvent(
                run_id=run_id,
                suite=str(run.suite),
                started_at=str(run.started_at),
                config_ids=run.configs,
                caught={"Error": STOPPED_ERROR, "Cause": f"stopped by DELETE /runs/{run_id}"},
                stopped_at=stopped_at,
            )
        )
        return RunStopped(run_id=run_id, execution_arn=_arn(execution), cleanup="started")


def _arn(execution: Execution | None) -> str | None:
    return execution.arn if execution is not None else None

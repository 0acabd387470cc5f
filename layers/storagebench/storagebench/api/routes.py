"""HTTP API routes on Powertools' event handler: the route table, request parsing, the error shape.

``ROUTES`` is the one description of the API: the resolver is built from it and so is the OpenAPI
document (``api.openapi``). Every answer is JSON; every error is ``errors.ErrorBody`` with a 4xx
for anything the caller sent (malformed JSON, wrong content type, unknown or bad parameters,
oversized body or request, unknown route or method), 503 when AWS could not answer, 500 for a bug.
"""

from __future__ import annotations

import base64
import binascii
import logging
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from aws_lambda_powertools.event_handler import APIGatewayHttpResolver, Response
from aws_lambda_powertools.event_handler.exceptions import NotFoundError
from pydantic import BaseModel

from storagebench.api.errors import ApiError, ErrorBody, detail
from storagebench.api.models import (
    DryRun,
    ReportLink,
    ResultsPage,
    RunCreated,
    RunDetail,
    RunExport,
    RunList,
    RunStopped,
)
from storagebench.api.queries import (
    CompareQuery,
    CreateRunQuery,
    ListRunsQuery,
    RecommendationQuery,
    ReportQuery,
    ResultsQuery,
    RunPath,
    RunQuery,
    parse_params,
)
from storagebench.api.service import ApiService
from storagebench.core.errors import WorkflowError
from storagebench.costs.recommend import Recommendation
from storagebench.costs.run_compare import RunComparison
from storagebench.planning.preview import RunPreview
from storagebench.request import BenchmarkRequest
from storagebench.request.json_document import JsonDocumentError, decode_json

log = logging.getLogger("storagebench.api")
MAX_BODY_BYTES = 256 * 1024  # a 40-config request is ~30 KB; the Lambda payload limit is 6 MB
JSON = "application/json"


@dataclass(frozen=True)
class RouteSpec:
    method: str
    path: str  # OpenAPI style: /runs/{run_id}
    operation_id: str
    summary: str
    query: type[BaseModel] | None = None
    path_params: type[BaseModel] | None = None
    body: type[BaseModel] | None = None
    responses: dict[int, tuple[str, type[BaseModel]]] = field(default_factory=dict)

    @property
    def resolver_path(self) -> str:
        return re.sub(r"\{(\w+)\}", r"<\1>", self.path)

    @property
    def pattern(self) -> re.Pattern[str]:
        return re.compile("^" + re.sub(r"\{\w+\}", r"[^/]+", self.path) + "/?$")


ERRORS: dict[int, tuple[str, type[BaseModel]]] = {
    400: ("malformed JSON, or a bad or unknown parameter", ErrorBody),
}
RUN_ERRORS: dict[int, tuple[str, type[BaseModel]]] = {**ERRORS, 404: ("no such run", ErrorBody)}
# Both start routes answer alike; only what their 403 means differs.
START_RESPONSES: dict[int, tuple[str, type[BaseModel]]] = {
    202: ("the run started: its id and execution ARN", RunCreated),
    200: ("dry run: the expanded plan, the cost estimate and guardrail problems", DryRun),
    **ERRORS,
    413: (
        "the body is larger than 256 KiB (body_too_large), or the request is larger than Step Functions "
        "takes as execution input, 262,144 bytes of UTF-8 JSON (request_too_large)",
        ErrorBody,
    ),
    415: ("the body is not application/json", ErrorBody),
    409: ("the Idempotency-Key started another run body (idempotency_conflict)", ErrorBody),
    422: (
        "the request is invalid (invalid_request), over a limit of the stack (over_limit) or past "
        "its budget (over_budget: MaxConcurrentSpendUsd, MaxDailySpendUsd)",
        ErrorBody,
    ),
}

ROUTES: tuple[RouteSpec, ...] = (
    RouteSpec(
        "POST",
        "/runs",
        "createRun",
        "Start a benchmark run (202), or preview it with dry_run=true (200): plan, cost, guardrails. "
        "With an Idempotency-Key header the same caller's same key and body return the first run "
        "(replayed: true); the same key with another body is a 409; another caller's key is its own",
        query=CreateRunQuery,
        body=BenchmarkRequest,
        responses={
            **START_RESPONSES,
            403: ("the request runs shell (hooks, command, custom fio): use /runs/privileged", ErrorBody),
        },
    ),
    RouteSpec(
        "POST",
        "/runs/privileged",
        "createPrivilegedRun",
        "Start a run whose request runs shell on the instance (setup/teardown hooks, command workloads, "
        "custom fio job files): a separate route, so IAM grants it separately",
        query=CreateRunQuery,
        body=BenchmarkRequest,
        responses={
            **START_RESPONSES,
            403: ("the stack does not allow privileged runs (AllowPrivilegedRuns=false)", ErrorBody),
        },
    ),
    RouteSpec(
        "GET",
        "/runs",
        "listRuns",
        "A suite's runs, newest first, or the runs in progress (paginated)",
        query=ListRunsQuery,
        responses={200: ("one page of runs", RunList), **ERRORS},
    ),
    RouteSpec(
        "GET",
        "/runs/{run_id}",
        "getRun",
        "One run: status, per-config progress, aggregated results, costs and verdicts, regressions; "
        "with histograms=true also each record's latency histogram (kept apart in the store: one more "
        "read, so only on request)",
        query=RunQuery,
        path_params=RunPath,
        responses={200: ("the run", RunDetail), **RUN_ERRORS},
    ),
    RouteSpec(
        "GET",
        "/runs/{run_id}/report",
        "getRunReport",
        "A presigned link to the run's report (404 until Finalize wrote it)",
        query=ReportQuery,
        path_params=RunPath,
        responses={200: ("the link", ReportLink), **RUN_ERRORS},
    ),
    RouteSpec(
        "GET",
        "/runs/{run_id}/export",
        "getRunExport",
        "A presigned link to each config's flat export (JSON Lines, one row per record, the export "
        "schema's columns) as Collect wrote it, listed under the run's export prefix; a config not "
        "collected yet has no file",
        path_params=RunPath,
        responses={200: ("the links", RunExport), **RUN_ERRORS},
    ),
    RouteSpec(
        "GET",
        "/runs/{run_id}/recommendation",
        "getRunRecommendation",
        "The cheapest config whose 95 % confidence bound meets every requirement (require=..., repeated; "
        "else the run's request's), the runners-up, and why each other config failed",
        query=RecommendationQuery,
        path_params=RunPath,
        responses={
            200: (
                "the recommendation (recommended is null when no config meets every requirement)",
                Recommendation,
            ),
            **ERRORS,
            400: (
                "a requirement that cannot be read or names no workload of the run (bad_requirement), no "
                "requirement given or in the request (no_requirements), or a bad parameter",
                ErrorBody,
            ),
            404: ("no such run", ErrorBody),
        },
    ),
    RouteSpec(
        "GET",
        "/runs/{run_id}/compare",
        "compareRuns",
        "This run (B) against another (against=A): per storage option, workload and metric both means, the "
        "delta with its 95 % interval, Welch's p-value, and a verdict that is faster or slower only on a "
        "significant difference (else how many repetitions per side would tell); what one run measured "
        "alone is listed",
        query=CompareQuery,
        path_params=RunPath,
        responses={
            200: ("the comparison", RunComparison),
            **ERRORS,
            404: ("no such run: the error names which, run_id or against", ErrorBody),
        },
    ),
    RouteSpec(
        "DELETE",
        "/runs/{run_id}",
        "stopRun",
        "Stop a running run and release everything it launched, by its tags",
        path_params=RunPath,
        responses={
            202: ("stopping; cleanup started", RunStopped),
            **RUN_ERRORS,
            409: ("the run is not running", ErrorBody),
        },
    ),
    RouteSpec(
        "GET",
        "/results",
        "getResults",
        "One storage option's metric history for a workload (paginated)",
        query=ResultsQuery,
        responses={200: ("one page of points", ResultsPage), **ERRORS},
    ),
)

# Every model a response refers to (for the OpenAPI components)
RESPONSE_MODELS: tuple[type[BaseModel], ...] = (
    RunCreated,
    DryRun,
    RunPreview,
    RunList,
    RunDetail,
    ReportLink,
    RunExport,
    RunStopped,
    ResultsPage,
    Recommendation,
    RunComparison,
    ErrorBody,
)


def _json_response(status: int, model: BaseModel, headers: dict[str, str] | None = None) -> Response[str]:
    return Response(
        status_code=status,
        content_type=JSON,
        body=model.model_dump_json(exclude_none=False),
        headers=headers or {},
    )


def _error_response(error: ApiError, headers: dict[str, str] | None = None) -> Response[str]:
    return _json_response(error.status, error.body(), headers)


def read_json_body(event: dict[str, Any]) -> Any:
    """The body as JSON, or ApiError 413/415/400 naming what is wrong with it."""
    headers = {str(k).lower(): str(v) for k, v in (event.get("headers") or {}).items()}
    content_type = headers.get("content-type", "")
    media = content_type.split(";", 1)[0].strip().lower()
    if media != JSON:
        raise ApiError(
            415,
            "unsupported_media_type",
            f"the body must be {JSON}, not {content_type or 'absent'!r}",
            [detail("content-type", content_type or None, "unsupported media type", JSON)],
        )
    raw = event.get("body")
    if raw is None or raw == "":
        raise ApiError(
            400,
            "bad_json",
            "the body is empty: send a benchmark request",
            [detail("(body)", None, "required", "a benchmark request (JSON object)")],
        )
    if event.get("isBase64Encoded"):
        try:
            data = base64.b64decode(str(raw), validate=True)
        except (binascii.Error, ValueError):
            raise ApiError(
                400, "bad_json", "the body is not valid base64", [detail("(body)", None, "not valid base64")]
            ) from None
    else:
        data = str(raw).encode("utf-8", errors="surrogatepass")
    if len(data) > MAX_BODY_BYTES:
        raise ApiError(
            413,
            "body_too_large",
            f"the body is {len(data):,} bytes; at most {MAX_BODY_BYTES:,} are accepted",
            [detail("(body)", len(data), "too large", f"at most {MAX_BODY_BYTES} bytes")],
        )
    try:
        return decode_json(data)
    except JsonDocumentError as exc:
        message, where = str(exc), exc.path or "(body)"
    raise ApiError(
        400,
        "bad_json",
        f"the body cannot be read: {message}",
        [detail(where, None, message, "a JSON object")],
    )


def _caller(app: APIGatewayHttpResolver) -> str:
    """The IAM principal that signed the request (the route's IAM authorizer fills it in)."""
    context = app.current_event.raw_event.get("requestContext") or {}
    iam = (context.get("authorizer") or {}).get("iam") or {}
    return str(iam.get("userArn") or "")


def build_resolver(service: Callable[[], ApiService]) -> APIGatewayHttpResolver:
    """The resolver for ``ROUTES``; ``service`` is called on first use (a Lambda container builds one)."""
    app = APIGatewayHttpResolver()

    def query(model: type[BaseModel]) -> Any:
        return parse_params(model, app.current_event.query_string_parameters)

    def run_path(run_id: str) -> str:
        parsed: RunPath = parse_params(RunPath, {"run_id": run_id}, where="path")
        return parsed.run_id

    def no_query() -> None:
        parse_params(_NoQuery, app.current_event.query_string_parameters)

    def start(privileged: bool) -> Response[str]:
        options: CreateRunQuery = query(CreateRunQuery)
        document = read_json_body(app.current_event.raw_event)
        key = (app.current_event.headers or {}).get("idempotency-key")
        result = service().create_run(
            document, options.dry_run, privileged=privileged, idempotency_key=key, caller=_caller(app)
        )
        if isinstance(result, DryRun):
            return _json_response(200, result)
        return _json_response(200 if result.replayed else 202, result, {"Location": result.location})

    @app.post("/runs")
    def create_run() -> Response[str]:
        return start(privileged=False)

    @app.post("/runs/privileged")
    def create_privileged_run() -> Response[str]:
        return start(privileged=True)

    @app.get("/runs")
    def list_runs() -> Response[str]:
        return _json_response(200, service().list_runs(query(ListRunsQuery)))

    @app.get("/runs/<run_id>")
    def get_run(run_id: str) -> Response[str]:
        options: RunQuery = query(RunQuery)
        return _json_response(200, service().get_run(run_path(run_id), options))

    @app.get("/runs/<run_id>/report")
    def get_report(run_id: str) -> Response[str]:
        options: ReportQuery = query(ReportQuery)
        return _json_response(200, service().report_link(run_path(run_id), options.format))

    @app.get("/runs/<run_id>/export")
    def get_export(run_id: str) -> Response[str]:
        no_query()
        return _json_response(200, service().run_export(run_path(run_id)))

    @app.get("/runs/<run_id>/recommendation")
    def get_recommendation(run_id: str) -> Response[str]:
        given = RecommendationQuery.from_params(app.current_event.query_string_parameters)
        options: RecommendationQuery = parse_params(RecommendationQuery, given)
        return _json_response(200, service().recommendation(run_path(run_id), list(options.require)))

    @app.get("/runs/<run_id>/compare")
    def compare_runs(run_id: str) -> Response[str]:
        checked = run_path(run_id)  # the path first: a bad id is named before a missing parameter
        return _json_response(200, service().compare(checked, query(CompareQuery)))

    @app.delete("/runs/<run_id>")
    def stop_run(run_id: str) -> Response[str]:
        no_query()
        return _json_response(202, service().stop_run(run_path(run_id)))

    @app.get("/results")
    def results() -> Response[str]:
        return _json_response(200, service().results(query(ResultsQuery)))

    def api_error(error: ApiError) -> Response[str]:
        return _error_response(error)

    @app.not_found
    def not_found(_: NotFoundError) -> Response[str]:
        method = app.current_event.http_method.upper()
        path = app.current_event.path
        allowed = sorted({r.method for r in ROUTES if r.pattern.match(path)})
        if allowed:
            error = ApiError(
                405,
                "method_not_allowed",
                f"{method} is not allowed on {path}; allowed: {', '.join(allowed)}",
                [detail("(method)", method, "not allowed on this path", allowed)],
            )
            return _error_response(error, {"Allow": ", ".join(allowed)})
        paths = sorted({r.path for r in ROUTES})
        error = ApiError(
            404, "not_found", f"no route {path}", [detail("(path)", path, "no such route", paths)]
        )
        return _error_response(error)

    def upstream(error: WorkflowError) -> Response[str]:
        log.warning("AWS could not answer: %s", error, exc_info=True)
        return _error_response(ApiError(503, "unavailable", f"AWS could not answer, retry later: {error}"))

    def bug(error: Exception) -> Response[str]:
        # The traceback goes to the log; the caller gets the error shape, not API Gateway's bare 500
        log.error(
            "unhandled error in %s %s", app.current_event.http_method, app.current_event.path, exc_info=error
        )
        return _error_response(
            ApiError(500, "internal", f"internal error ({type(error).__name__}); see the logs")
        )

    # (called, not decorated: Powertools' exception_handler is untyped)
    app.exception_handler(ApiError)(api_error)
    app.exception_handler(WorkflowError)(upstream)
    app.exception_handler(Exception)(bug)
    return app


class _NoQuery(BaseModel):
    model_config = {"extra": "forbid"}


__all__ = ["MAX_BODY_BYTES", "RESPONSE_MODELS", "ROUTES", "RouteSpec", "build_resolver", "read_json_body"]

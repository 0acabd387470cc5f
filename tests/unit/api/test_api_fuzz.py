"""Bad input, measured: requests generated from the checked-in OpenAPI document, through the handler.

Each generated request is an HTTP API v2 event for the Lambda handler of functions/api on moto:
a documented operation (or another method, or an unknown path) with parameters drawn from their
schemas or junk, unknown parameters, and bodies that are valid requests (events/*.json), valid
requests with one field broken, documents drawn from the request schema in the OpenAPI document
(schema_strategies), arbitrary JSON, and bytes that are not JSON. Asserted for every one: no
5xx, the stable error shape on every 4xx, and that an execution starts exactly for the 202s of
POST /runs, each for a request the shared model accepts and the guardrails allow.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from schema_strategies import from_schema
from tests.support.api_events import call
from tests.support.api_stack import EVENTS, Stack

from storagebench.api.openapi import request_schema
from storagebench.core.guardrails import Guardrails
from storagebench.planning.preview import preview_request
from storagebench.request import RequestError, parse_request
from storagebench.request.privilege import privileged_content

REPO = Path(__file__).resolve().parents[3]
DOCUMENT = json.loads((REPO / "openapi.json").read_text(encoding="utf-8"))
EXAMPLES = 1200
KNOWN_RUNS = ("demo-1", "demo-2")
VALID = [json.loads(p.read_text(encoding="utf-8")) for p in sorted(EVENTS.glob("*.json"))]
# Between the shipped events' upper bounds (nightly $24.50, local-demo $58.57, nightly-default
# $99.31; report-card $131.18, virtual-san $455.09), so both allowed and over-limit requests come
GUARDRAILS = Guardrails(max_run_cost_usd=100, max_configs_per_run=4)

OPERATIONS = [
    (path, method.upper(), op) for path, item in DOCUMENT["paths"].items() for method, op in item.items()
]
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=10), inner, max_size=4),
    max_leaves=12,
)


def _paths(document: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    found = [prefix] if prefix else []
    if isinstance(document, dict):
        for key, value in document.items():
            found += _paths(value, (*prefix, key))
    elif isinstance(document, list):
        for index, value in enumerate(document):
            found += _paths(value, (*prefix, index))
    return found


@st.composite
def broken_request(draw: st.DrawFn) -> Any:
    """A shipped request with one field replaced by arbitrary JSON, or removed."""
    document = json.loads(json.dumps(draw(st.sampled_from(VALID))))
    path = draw(st.sampled_from(_paths(document)))
    parent = document
    for key in path[:-1]:
        parent = parent[key]
    if draw(st.booleans()) and isinstance(parent, dict):
        del parent[path[-1]]
    else:
        parent[path[-1]] = draw(json_values)
    return document


def _as_text(value: Any) -> str:
    if isinstance(value, bool):
        return str(value).lower()
    return value if isinstance(value, str) else json.dumps(value)


@st.composite
def parameters(draw: st.DrawFn, operation: dict[str, Any], where: str) -> dict[str, str]:
    values: dict[str, str] = {}
    for parameter in operation.get("parameters", []):
        if parameter["in"] != where:
            continue
        schema = parameter["schema"]
        choices = ["schema"] * 6 + ["omit"] * 3 + ["junk"]
        if parameter["required"] and where == "path":
            choices = ["schema"] * 9 + ["junk"]
        choice = draw(st.sampled_from(choices))
        if choice == "omit":
            continue
        if choice == "schema":
            values[parameter["name"]] = _as_text(draw(from_schema(schema)))
        else:
            values[parameter["name"]] = draw(st.text(min_size=1, max_size=30))
    if where == "query" and draw(st.integers(0, 19)) == 0:
        values[draw(st.text(min_size=1, max_size=8))] = draw(st.text(max_size=8))
    return values


def _startable(document: Any) -> bool:
    """A shipped event the oracle expects to start: valid, within GUARDRAILS, no shell."""
    parsed = parse_request(document)
    return preview_request(parsed, GUARDRAILS).allowed and not privileged_content(parsed)


REQUEST_SCHEMA = request_schema(DOCUMENT)
# A third of the valid bodies are events that start, whatever else events/ holds: the oracle must
# see runs start however many shipped events are over these guardrails or privileged.
STARTABLE = [document for document in VALID if _startable(document)]
assert STARTABLE, "no shipped event starts under GUARDRAILS: the oracle would never see a run start"
bodies = st.sampled_from(
    ["valid", "valid", "startable", "broken", "broken", "schema", "schema", "json", "text"]
).flatmap(
    lambda kind: {
        "valid": st.sampled_from(VALID).map(json.dumps),
        "startable": st.sampled_from(STARTABLE).map(json.dumps),
        "broken": broken_request().map(json.dumps),
        "schema": from_schema(REQUEST_SCHEMA).map(json.dumps),
        "json": json_values.map(json.dumps),
        "text": st.text(max_size=60),
    }[kind]
)


@st.composite
def api_request(draw: st.DrawFn) -> dict[str, Any]:
    kind = draw(st.sampled_from(["operation"] * 8 + ["other-method", "unknown-path"]))
    # POST /runs weighs three times: starting a run is what the oracle must see happen
    path, method, operation = draw(
        st.sampled_from(OPERATIONS + [o for o in OPERATIONS if o[:2] == ("/runs", "POST")] * 2)
    )
    path_values = draw(parameters(operation, "path"))
    if "run_id" in path_values and draw(st.booleans()):
        path_values["run_id"] = draw(st.sampled_from(KNOWN_RUNS))
    concrete = path
    for name, value in path_values.items():
        concrete = concrete.replace("{" + name + "}", value.replace("/", "_") or "_")
    request: dict[str, Any] = {
        "method": method,
        "path": concrete,
        "query": draw(parameters(operation, "query")),
    }
    if kind == "other-method":
        request["method"] = draw(
            st.sampled_from(["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"])
        )
    elif kind == "unknown-path":
        request["path"] = "/" + draw(st.text(alphabet="abcxyz/-_", min_size=1, max_size=20))
    if request["method"] == "POST":
        request["body"] = draw(bodies)
        request["headers"] = {
            "content-type": draw(
                st.sampled_from(["application/json"] * 6 + ["text/plain", "application/json; charset=utf-8"])
            )
        }
    return request


def _expected_to_start(request: dict[str, Any]) -> bool:
    """The oracle: a POST /runs that is not a dry run, with a valid, allowed JSON request that
    runs no shell on the instance (that one belongs on /runs/privileged)."""
    if request["method"] != "POST" or request["path"] != "/runs":
        return False
    if request["headers"]["content-type"].split(";")[0] != "application/json":
        return False
    if set(request["query"]) - {"dry_run"} or request["query"].get("dry_run", "false") not in (
        "false",
        "0",
        "no",
        "off",
        "f",
        "n",
    ):
        return False
    try:
        document = json.loads(request["body"])
        parsed = parse_request(document)
    except (ValueError, RequestError):
        return False
    return preview_request(parsed, GUARDRAILS).allowed and not privileged_content(parsed)


@pytest.mark.slow
def test_generated_requests_get_no_5xx_the_error_shape_and_start_only_valid_runs(
    stack: Stack, capsys: pytest.CaptureFixture[str]
) -> None:
    stack.service.guardrails = GUARDRAILS
    for day, run_id in enumerate(KNOWN_RUNS, start=1):
        stack.store.start_run(
            run_id, "local-demo", {}, f"2030-01-0{day}T00:00:00Z", "2030-02-01T00:00:00Z", ["gp2"]
        )
    statuses: Counter[int] = Counter()
    codes: Counter[str] = Counter()
    expected_starts = 0

    @settings(
        max_examples=EXAMPLES,
        deadline=None,
        derandomize=True,
        database=None,
        suppress_health_check=[
            HealthCheck.function_scoped_fixture,
            HealthCheck.too_slow,
            HealthCheck.data_too_large,
        ],
    )
    @given(api_request())
    def exercise(request: dict[str, Any]) -> None:
        nonlocal expected_starts
        before = len(stack.launcher.started)
        status, body, _ = call(
            stack.handler,
            request["method"],
            request["path"],
            query=request["query"] or None,
            body=request.get("body"),
            headers=request.get("headers"),
        )
        statuses[status] += 1
        assert status < 500, (request, body)
        started = len(stack.launcher.started) - before
        if status >= 400:
            error = body["error"]
            codes[error["code"]] += 1
            assert set(error) == {"status", "code", "message", "details"} and error["status"] == status
            assert all(set(d) == {"field", "value", "message", "allowed", "limit"} for d in error["details"])
        should_start = _expected_to_start(request)
        expected_starts += should_start
        assert started == (1 if should_start else 0), (request, status, body)
        assert (status == 202 and request["method"] == "POST") == should_start, (request, status, body)

    exercise()
    sent = sum(statuses.values())
    figures = {
        "requests": sent,
        "statuses": dict(sorted(statuses.items())),
        "error_codes": dict(sorted(codes.items())),
        "runs_started": len(stack.launcher.started),
        "valid_non_dry_run_posts": expected_starts,
    }
    with capsys.disabled():
        print("\nAPI fuzz figures:", json.dumps(figures))
    assert sent >= 1000
    assert len(stack.launcher.started) == expected_starts > 0
    assert statuses[202] > 0 and statuses[200] > 0 and statuses[422] > 0 and statuses[400] > 0

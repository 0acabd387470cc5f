"""The checked-in OpenAPI document is the one the code generates; its body is the request model."""

from __future__ import annotations

import json
from pathlib import Path

from storagebench.api.openapi import build_openapi, render, request_schema
from storagebench.api.routes import ROUTES
from storagebench.request import BenchmarkRequest

REPO = Path(__file__).resolve().parents[3]
CHECKED_IN = REPO / "openapi.json"


def test_the_checked_in_document_is_current() -> None:
    assert CHECKED_IN.read_text(encoding="utf-8") == render(), (
        "openapi.json drifted from the API's routes and models: run `make openapi` and commit it"
    )


def test_the_request_body_is_the_shared_request_schema() -> None:
    document = json.loads(CHECKED_IN.read_text(encoding="utf-8"))
    body = document["paths"]["/runs"]["post"]["requestBody"]["content"]["application/json"]["schema"]
    assert body == {"$ref": "#/components/schemas/BenchmarkRequest"}
    assert request_schema(document) == BenchmarkRequest.model_json_schema()  # = `storagebench schema`


def test_every_route_and_its_errors_are_documented() -> None:
    document = build_openapi()
    documented = {(method.upper(), path) for path, item in document["paths"].items() for method in item}
    assert documented == {(r.method, r.path) for r in ROUTES}
    for path, item in document["paths"].items():
        for method, operation in item.items():
            codes = set(operation["responses"])
            assert "400" in codes, (method, path)
            for code, response in operation["responses"].items():
                ref = response["content"]["application/json"]["schema"]["$ref"]
                assert ref.rsplit("/", 1)[1] in document["components"]["schemas"]
                if code.startswith("4"):
                    assert ref.endswith("/ErrorBody")
    parameters = {p["name"] for p in document["paths"]["/results"]["get"]["parameters"]}
    assert {"storage", "workload", "since", "until", "cursor", "limit"} <= parameters
    run_id = document["paths"]["/runs/{run_id}"]["get"]["parameters"][0]
    assert run_id["in"] == "path" and run_id["required"] and run_id["schema"]["pattern"]

"""The OpenAPI 3.1 document of the HTTP API, generated from the route table and the models.

Parameters come from the query and path models (``api.queries``), the request body is the shared
request model's JSON Schema (what ``storagebench schema`` prints, its ``$defs`` moved to
``components/schemas``), responses from ``api.models`` and ``api.errors``. The document is checked
in as ``openapi.json``; ``make openapi`` rewrites it and a test fails when the two differ.

    python -m storagebench.api.openapi openapi.json
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from pydantic import BaseModel
from pydantic.json_schema import models_json_schema

from storagebench.api.routes import RESPONSE_MODELS, ROUTES, RouteSpec
from storagebench.request import BenchmarkRequest

REF = "#/components/schemas/{model}"
TITLE = "storagebench"
VERSION = "1"


def _parameters(model: type[BaseModel], where: str, schemas: dict[str, Any]) -> list[dict[str, Any]]:
    schema = model.model_json_schema(ref_template=REF)
    schemas.update(schema.pop("$defs", {}))
    required = set(schema.get("required", []))
    parameters = []
    for name, declared in schema.get("properties", {}).items():
        prop = dict(declared)
        description = prop.pop("description", None)
        prop.pop("title", None)
        parameter: dict[str, Any] = {"name": name, "in": where, "required": name in required, "schema": prop}
        if description:
            parameter["description"] = description
        parameters.append(parameter)
    return parameters


def _operation(route: RouteSpec, schemas: dict[str, Any]) -> dict[str, Any]:
    operation: dict[str, Any] = {
        "operationId": route.operation_id,
        "summary": route.summary,
        "security": [{"sigv4": []}],
    }
    parameters: list[dict[str, Any]] = []
    if route.path_params is not None:
        parameters += _parameters(route.path_params, "path", schemas)
    if route.query is not None:
        parameters += _parameters(route.query, "query", schemas)
    if parameters:
        operation["parameters"] = parameters
    if route.body is not None:
        operation["requestBody"] = {
            "required": True,
            "content": {"application/json": {"schema": {"$ref": REF.format(model=route.body.__name__)}}},
        }
    operation["responses"] = {
        str(status): {
            "description": description,
            "content": {"application/json": {"schema": {"$ref": REF.format(model=model.__name__)}}},
        }
        for status, (description, model) in sorted(route.responses.items())
    }
    return operation


def build_openapi() -> dict[str, Any]:
    schemas: dict[str, Any] = {}
    models: list[type[BaseModel]] = [BenchmarkRequest, *RESPONSE_MODELS]
    _, definitions = models_json_schema([(m, "validation") for m in models], ref_template=REF)
    schemas.update(definitions.get("$defs", {}))
    paths: dict[str, dict[str, Any]] = {}
    for route in ROUTES:
        paths.setdefault(route.path, {})[route.method.lower()] = _operation(route, schemas)
    return {
        "openapi": "3.1.0",
        "info": {
            "title": TITLE,
            "version": VERSION,
            "description": (
                "Benchmark AWS storage on demand. Every call is signed with AWS SigV4 (service "
                "execute-api) and needs execute-api:Invoke. Errors: "
                '{"error": {"status", "code", "message", "details": [{"field", "value", "message", '
                '"allowed", "limit"}]}}.'
            ),
        },
        "paths": paths,
        "components": {
            "schemas": dict(sorted(schemas.items())),
            "securitySchemes": {
                "sigv4": {
                    "type": "apiKey",
                    "name": "Authorization",
                    "in": "header",
                    "description": "AWS Signature Version 4 (service execute-api)",
                }
            },
        },
    }


def render() -> str:
    return json.dumps(build_openapi(), indent=2, sort_keys=False) + "\n"


def request_schema(document: dict[str, Any]) -> dict[str, Any]:
    """The request body's schema out of an OpenAPI document, standalone again (``$defs``): what
    ``storagebench schema`` prints, when the document is current."""
    schemas = document["components"]["schemas"]
    text = json.dumps(schemas["BenchmarkRequest"])
    needed: dict[str, Any] = {}
    pending = [text]
    while pending:
        for name in _refs(pending.pop()):
            if name not in needed:
                needed[name] = schemas[name]
                pending.append(json.dumps(schemas[name]))
    schema: dict[str, Any] = json.loads(text.replace("#/components/schemas/", "#/$defs/"))
    if needed:
        schema["$defs"] = json.loads(
            json.dumps(dict(sorted(needed.items()))).replace("#/components/schemas/", "#/$defs/")
        )
    return schema


def _refs(text: str) -> list[str]:
    marker = '"#/components/schemas/'
    found = []
    start = text.find(marker)
    while start != -1:
        end = text.index('"', start + len(marker))
        found.append(text[start + len(marker) : end])
        start = text.find(marker, end)
    return found


def main(argv: list[str] | None = None) -> None:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        raise SystemExit("usage: python -m storagebench.api.openapi OUTPUT.json")
    Path(args[0]).write_text(render(), encoding="utf-8")


if __name__ == "__main__":
    main()

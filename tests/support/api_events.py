"""API Gateway HTTP API (payload 2.0) events, as the API function receives them, and a caller."""

from __future__ import annotations

import base64
import json
from typing import Any
from urllib.parse import quote, urlencode

from aws_lambda_powertools.utilities.typing import LambdaContext

API_ID = "a1b2c3d4e5"


class Context(LambdaContext):
    """The Lambda context the handler's Powertools decorators read."""

    _function_name = "storagebench-ApiFunction"
    _memory_limit_in_mb = 512
    _invoked_function_arn = "arn:aws:lambda:us-east-1:123456789012:function:storagebench-ApiFunction"
    _aws_request_id = "00000000-0000-0000-0000-000000000000"


def http_event(
    method: str,
    path: str,
    query: dict[str, str] | None = None,
    body: str | bytes | None = None,
    headers: dict[str, str] | None = None,
    base64_body: bool = False,
    caller: str = "arn:aws:iam::123456789012:user/tester",
) -> dict[str, Any]:
    """One HTTP API v2 event: lower-case headers, query joined as API Gateway does, IAM caller."""
    given = {k.lower(): v for k, v in (headers or {}).items()}
    if body is not None and "content-type" not in given:
        given["content-type"] = "application/json"
    event: dict[str, Any] = {
        "version": "2.0",
        "routeKey": "$default",
        "rawPath": quote(path, safe="/"),
        "rawQueryString": urlencode(query or {}),
        "headers": {"host": f"{API_ID}.execute-api.us-east-1.amazonaws.com", **given},
        "requestContext": {
            "accountId": "123456789012",
            "apiId": API_ID,
            "authorizer": {"iam": {"accountId": "123456789012", "userArn": caller}},
            "domainName": f"{API_ID}.execute-api.us-east-1.amazonaws.com",
            "domainPrefix": API_ID,
            "http": {
                "method": method,
                "path": path,
                "protocol": "HTTP/1.1",
                "sourceIp": "192.0.2.1",
                "userAgent": "storagebench-tests",
            },
            "requestId": "test-request",
            "routeKey": "$default",
            "stage": "$default",
            "time": "01/Jan/2030:00:00:00 +0000",
            "timeEpoch": 1893456000000,
        },
        "isBase64Encoded": base64_body,
    }
    if query:
        event["queryStringParameters"] = dict(query)
    if body is not None:
        raw = body.encode() if isinstance(body, str) else body
        event["body"] = (
            base64.b64encode(raw).decode() if base64_body else raw.decode("utf-8", "surrogateescape")
        )
    return event


def call(handler: Any, method: str, path: str, **kwargs: Any) -> tuple[int, dict[str, Any], dict[str, str]]:
    """Invoke the handler; (status, JSON body, headers)."""
    if "json_body" in kwargs:
        kwargs["body"] = json.dumps(kwargs.pop("json_body"))
    response = handler(http_event(method, path, **kwargs), Context())
    body = response.get("body") or ""
    if response.get("isBase64Encoded"):
        body = base64.b64decode(body).decode()
    headers = {k.lower(): v for k, v in (response.get("headers") or {}).items()}
    return int(response["statusCode"]), json.loads(body) if body else {}, headers

"""The API on moto served over HTTP as a deployed stack's would be: every request's SigV4 signature
checked against the caller's credentials, then handed to the API's handler (the ``served`` fixture),
and the ``storagebench`` command line run against it (``cli``)."""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qsl, urlsplit

import boto3
import pytest
from botocore.auth import SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials
from tests.support.api_events import Context, http_event
from tests.support.api_stack import Stack
from typer.testing import CliRunner

from storagebench.cli.main import app

AUTHORIZATION = re.compile(
    r"^AWS4-HMAC-SHA256 "
    r"Credential=(?P<key>[^/]+)/(?P<date>\d{8})/(?P<region>[a-z0-9-]+)/execute-api/aws4_request, "
    r"SignedHeaders=(?P<signed>[a-z0-9;-]+), Signature=(?P<signature>[0-9a-f]{64})$"
)


@dataclass
class Signed:
    checked: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


def verify(method: str, url: str, headers: dict[str, str], body: bytes, signed: Signed) -> None:
    authorization = headers.get("authorization", "")
    match = AUTHORIZATION.match(authorization)
    if match is None:
        signed.problems.append(
            f"{method} {url}: no well-formed SigV4 Authorization header: {authorization!r}"
        )
        return
    names = match["signed"].split(";")
    if "host" not in names or "x-amz-date" not in names:
        signed.problems.append(f"{method} {url}: host and x-amz-date must be signed, got {names}")
    request = AWSRequest(
        method=method, url=url, data=body or None, headers={n: headers[n] for n in names if n != "host"}
    )
    # The caller's credentials (moto puts its own in the environment while it mocks)
    known = boto3.session.Session().get_credentials().get_frozen_credentials()
    if match["key"] != known.access_key:
        signed.problems.append(f"{method} {url}: signed by {match['key']}, not the caller's key")
    credentials = Credentials(match["key"], known.secret_key, headers.get("x-amz-security-token"))
    auth = SigV4Auth(credentials, "execute-api", match["region"])
    request.context["timestamp"] = headers["x-amz-date"]
    expected = auth.signature(auth.string_to_sign(request, auth.canonical_request(request)), request)
    if expected != match["signature"]:
        signed.problems.append(f"{method} {url}: the signature does not match the request")
    signed.checked.append(f"{method} {urlsplit(url).path}")


Hook = Callable[[str, str], None]


@pytest.fixture
def hooks() -> list[Hook]:
    """Called with (method, path) before the API answers each request: a test moves the stack on."""
    return []


@pytest.fixture
def served(stack: Stack, hooks: list[Hook]) -> Iterator[tuple[str, Signed]]:
    signed = Signed()

    class Handler(BaseHTTPRequestHandler):
        def _serve(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length) if length else b""
            headers = {k.lower(): v for k, v in self.headers.items()}
            url = f"http://{headers['host']}{self.path}"
            verify(self.command, url, headers, body, signed)
            parts = urlsplit(self.path)
            for hook in hooks:
                hook(self.command, parts.path)
            event = http_event(
                self.command,
                parts.path,
                query=dict(parse_qsl(parts.query)) or None,
                body=body.decode() if body else None,
                headers=headers,
            )
            response = stack.handler(event, Context())
            payload = (response.get("body") or "").encode()
            self.send_response(int(response["statusCode"]))
            for name, value in (response.get("headers") or {}).items():
                self.send_header(name, value)
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        do_GET = do_POST = do_DELETE = _serve  # noqa: N815 - http.server's method names

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", signed
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def cli(*args: str) -> Any:
    return CliRunner().invoke(app, list(args))

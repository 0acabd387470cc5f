"""A fake AWS on 127.0.0.1 for the agent's own calls: IMDSv2, S3 PutObject, Step Functions callbacks.

It checks what AWS would refuse (an IMDS read without a token, a request without a SigV4
Authorization or security token) and records every call, so the agent's tests see its wire
behaviour without botocore (the agent's tests run on a bare Python 3.9).
"""

from __future__ import annotations

import json
import threading
import urllib.parse
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

ROLE = "storagebench-instance"
TOKEN = "imds-session-token"


class FakeAws:
    def __init__(self) -> None:
        self.objects: dict[str, bytes] = {}  # "bucket/key" -> body
        self.calls: list[tuple[str, dict[str, Any]]] = []  # (X-Amz-Target action, body)
        self.imds_reads: list[str] = []
        self.fail: dict[str, int] = {}  # action or "PutObject" -> HTTP status to answer with
        self.missing_buckets: set = set()
        self.expiration = "2099-01-01T00:00:00Z"
        self.credential_fetches = 0
        self.gets: list[str] = []  # "bucket/key" of every signed GetObject answered
        self.files: dict[str, bytes] = {}  # path -> body served on GET (the presigned plan)
        self.unsigned: list[str] = []
        self.spot_notice: dict[str, str] | None = None  # served at spot/instance-action once set
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        threading.Thread(target=self._server.serve_forever, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def actions(self) -> list[str]:
        return [action for action, _ in self.calls]

    def _handler(self) -> Any:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def _reply(self, status: int, body: bytes = b"", content_type: str = "application/json") -> None:
                self.send_response(status)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def _signed(self) -> bool:
                auth = self.headers.get("Authorization", "")
                ok = auth.startswith("AWS4-HMAC-SHA256 Credential=") and bool(
                    self.headers.get("X-Amz-Security-Token")
                )
                if not ok:
                    fake.unsigned.append(self.path)
                return ok

            def do_PUT(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length)
                if self.path == "/latest/api/token":
                    self._reply(200, TOKEN.encode(), "text/plain")
                    return
                if not self._signed():
                    self._reply(403, b"<Error><Code>AccessDenied</Code><Message>unsigned</Message></Error>")
                    return
                bucket, _, key = urllib.parse.unquote(self.path).lstrip("/").partition("/")
                if bucket in fake.missing_buckets:
                    self._reply(404, b"<Error><Code>NoSuchBucket</Code><Message>no bucket</Message></Error>")
                    return
                status = fake.fail.get("PutObject")
                if status:
                    self._reply(status, b"<Error><Code>InternalError</Code><Message>x</Message></Error>")
                    return
                fake.objects[f"{bucket}/{key}"] = body
                self._reply(200)

            def do_GET(self) -> None:
                if self.path.startswith("/latest/"):
                    if self.headers.get("X-aws-ec2-metadata-token") != TOKEN:
                        self._reply(401)  # IMDSv2 only
                        return
                    fake.imds_reads.append(self.path)
                    base = "/latest/meta-data/iam/security-credentials/"
                    if self.path == base:
                        self._reply(200, ROLE.encode(), "text/plain")
                    elif self.path == "/latest/meta-data/spot/instance-action" and fake.spot_notice:
                        self._reply(200, json.dumps(fake.spot_notice).encode())
                    elif self.path == base + ROLE:
                        fake.credential_fetches += 1
                        document = {
                            "Code": "Success",
                            "AccessKeyId": f"ASIA{fake.credential_fetches}",
                            "SecretAccessKey": "secret",
                            "Token": f"session-{fake.credential_fetches}",
                            "Expiration": fake.expiration,
                        }
                        self._reply(200, json.dumps(document).encode())
                    else:
                        self._reply(404)
                    return
                path = self.path.split("?", 1)[0]
                if path in fake.files:  # a presigned GET: no credentials of the instance's own
                    self._reply(200, fake.files[path], "application/octet-stream")
                elif "Authorization" in self.headers:  # a signed GetObject
                    name = urllib.parse.unquote(path).lstrip("/")
                    if not self._signed():
                        self._reply(
                            403, b"<Error><Code>AccessDenied</Code><Message>unsigned</Message></Error>"
                        )
                    elif name in fake.objects:
                        fake.gets.append(name)
                        self._reply(200, fake.objects[name], "application/octet-stream")
                    else:
                        self._reply(404, b"<Error><Code>NoSuchKey</Code><Message>no key</Message></Error>")
                else:
                    self._reply(403, b"<Error><Code>AccessDenied</Code><Message>expired</Message></Error>")

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                action = str(self.headers.get("X-Amz-Target", "")).rsplit(".", 1)[-1]
                if not self._signed():
                    self._reply(400, json.dumps({"__type": "MissingAuthenticationToken"}).encode())
                    return
                fake.calls.append((action, body))
                status = fake.fail.get(action)
                if status == 400:
                    document = {
                        "__type": "com.amazonaws.swf.service.model.v20120810#TaskTimedOut",
                        "message": "gone",
                    }
                    self._reply(400, json.dumps(document).encode())
                elif status:
                    self._reply(status, json.dumps({"__type": "InternalFailure", "message": "down"}).encode())
                else:
                    self._reply(200, b"{}")

        return Handler


def environment(fake: FakeAws, extra: dict[str, str] | None = None) -> dict[str, str]:
    env = {"AWS_ENDPOINT_URL": fake.url, "AWS_EC2_METADATA_SERVICE_ENDPOINT": fake.url}
    env.update(extra or {})
    return env


def use_fake_aws(server: FakeAws, monkeypatch: pytest.MonkeyPatch) -> None:
    """This process as the agent on an instance talking to ``server``: no credentials of the host,
    the fake's endpoints, and no waits between the agent's retries and polls."""
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_ENDPOINT_URL_SFN"):
        monkeypatch.delenv(name, raising=False)
    for name, value in environment(server).items():
        monkeypatch.setenv(name, value)
    monkeypatch.setattr("storagebench.agent.task.time.sleep", lambda _: None)
    monkeypatch.setattr("storagebench.agent.aws.client.time.sleep", lambda _: None)


@pytest.fixture
def fake_server() -> Iterator[FakeAws]:
    """A fake AWS server for the test, closed after it."""
    server = FakeAws()
    yield server
    server.close()


@pytest.fixture
def fake(fake_server: FakeAws, monkeypatch: pytest.MonkeyPatch) -> FakeAws:
    """The fake AWS server with this process as the agent talking to it (``use_fake_aws``)."""
    use_fake_aws(fake_server, monkeypatch)
    return fake_server

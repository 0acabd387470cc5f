"""The instance's world broken on purpose, for the fault matrix: never the document, always what it meets.

* ``broken_packages``: an image whose package manager fails (``dpkg-query``/``rpm`` find nothing,
  ``apt-get``/``dnf``/``zypper`` exit 100 naming the package), ahead on the instance's PATH;
* ``CallbackRefusal``: a Step Functions endpoint that passes heartbeats on to the workflow's
  backend but answers every ``SendTaskSuccess``/``SendTaskFailure`` with HTTP 500, as a regional
  outage of the callback would; the instance reaches it through ``AWS_ENDPOINT_URL_SFN``.
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from botocore.exceptions import ClientError

FAILING_TOOLS = {
    "dpkg-query": 'echo "dpkg-query: no packages found matching $*" >&2; exit 1',
    "rpm": 'echo "package $* is not installed"; exit 1',
    "apt-get": 'echo "E: Unable to locate package ${*##* }" >&2; exit 100',
    "dnf": 'echo "Error: Unable to find a match: ${*##* }" >&2; exit 1',
    "yum": 'echo "Error: Unable to find a match: ${*##* }" >&2; exit 1',
    "zypper": "echo \"No provider of '${*##* }' found.\" >&2; exit 104",
}


def broken_packages(directory: Path) -> Path:
    """A bin directory of failing package tools (created once); put it first on PATH."""
    bin_dir = directory / "broken-packages" / "bin"
    bin_dir.mkdir(parents=True, exist_ok=True)
    for name, body in FAILING_TOOLS.items():
        tool = bin_dir / name
        if not tool.exists():
            tool.write_text(f"#!/bin/sh\n{body}\n")
            tool.chmod(0o755)
    return bin_dir


class CallbackRefusal:
    """An HTTP endpoint on 127.0.0.1 that heartbeats through and refuses the final callback."""

    def __init__(self, sfn: Any) -> None:
        self.sfn = sfn
        self.refused: list[str] = []
        self._server: ThreadingHTTPServer | None = None
        self._lock = threading.Lock()

    @property
    def endpoint(self) -> str:
        with self._lock:
            if self._server is None:
                self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
                threading.Thread(
                    target=self._server.serve_forever, name="callback-refusal", daemon=True
                ).start()
            port = self._server.server_address[1]
        return f"http://127.0.0.1:{port}"

    def close(self) -> None:
        with self._lock:
            if self._server is not None:
                self._server.shutdown()
                self._server.server_close()
                self._server = None

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                action = str(self.headers.get("X-Amz-Target", "")).rsplit(".", 1)[-1]
                if action == "SendTaskHeartbeat":
                    try:
                        owner.sfn.send_task_heartbeat(taskToken=body["taskToken"])
                    except ClientError as exc:  # the task is over: the agent must hear it as AWS says it
                        error = exc.response.get("Error", {})
                        self._reply(
                            400, {"__type": error.get("Code", "Unknown"), "message": error.get("Message", "")}
                        )
                        return
                    self._reply(200, {})
                    return
                owner.refused.append(action)
                self._reply(500, {"__type": "InternalFailure", "message": f"injected: {action} refused"})

            def _reply(self, status: int, document: dict[str, Any]) -> None:
                data = json.dumps(document).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/x-amz-json-1.0")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: Any) -> None:
                pass

        return Handler

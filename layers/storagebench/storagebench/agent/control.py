"""A node's control endpoint: the primary client asks its state and tells it when to finish.

    GET  /status  -> 200 {"role", "index", "state", "error"}
    POST /finish  -> 202 (the node starts its teardown)
    POST /node-loss?step=ID -> 202 (the measured phase of step ID starts: the node's planned
                               removal, ``plan.power_off``, counts from now); 409 when this node's
                               plan holds no removal in that step

HTTP on the machine's own private address (``topology.machines[].ip``) and the topology's
``control_port``: only the config's own instances can reach it (the config's security group),
and on one host every local instance has its own loopback address, so nodes share the port
number. States: ``setting-up`` -> ``ready`` | ``failed`` -> ``finished`` (after teardown).
"""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Dict, Optional
from urllib.parse import parse_qs, urlsplit

SETTING_UP = "setting-up"
READY = "ready"
FAILED = "failed"
FINISHED = "finished"
STATES = (SETTING_UP, READY, FAILED, FINISHED)


class ControlEndpoint:
    """The HTTP server in a daemon thread and the state it reports."""

    def __init__(self, role: str, index: int, ip: str, port: int, loss_step: Optional[str] = None) -> None:
        self.role = role
        self.index = index
        self.loss_step = loss_step  # the step whose phase removes this node (plan.power_off), if any
        self.loss_started = threading.Event()  # the primary said that phase starts
        self.loss_started_at: Optional[float] = None  # when (time.monotonic()), to time the removal
        self._lock = threading.Lock()
        self._state = SETTING_UP
        self._error: Optional[str] = None
        self.finish_requested = threading.Event()
        self.finished_seen = threading.Event()  # someone was told ``finished``: the node may exit
        try:
            self._server = ThreadingHTTPServer((ip, port), self._handler())
        except OSError as exc:
            raise OSError(
                exc.errno, f"cannot serve the control endpoint on {ip}:{port}: {exc.strerror}"
            ) from None
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, name="control", daemon=True)
        self._thread.start()

    @property
    def address(self) -> str:
        host, port = self._server.server_address[:2]
        return f"{host!s}:{port}"

    def status(self) -> Dict[str, Any]:
        with self._lock:
            return {"role": self.role, "index": self.index, "state": self._state, "error": self._error}

    def _served(self) -> Dict[str, Any]:
        answer = self.status()
        if answer["state"] == FINISHED:
            self.finished_seen.set()
        return answer

    def set_state(self, state: str, error: Optional[str] = None) -> None:
        """Move to ``state``; a failure's error stays reported after ``finished``."""
        if state not in STATES:
            raise ValueError(f"state {state!r} is not one of {', '.join(STATES)}")
        with self._lock:
            self._state = state
            if error is not None:
                self._error = error

    def start_loss(self, step: str) -> Optional[str]:
        """The primary says ``step``'s measured phase starts; why it is refused, or None."""
        if self.loss_step is None:
            return f"{self.role}-{self.index} has no planned removal (its plan has no power_off)"
        if step != self.loss_step:
            return f"{self.role}-{self.index} is removed in step {self.loss_step}, not {step}"
        if not self.loss_started.is_set():
            self.loss_started_at = time.monotonic()
            self.loss_started.set()
        return None

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def _handler(self) -> Any:
        endpoint = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass  # the agent's log says what matters; one line per poll would drown it

            def _reply(self, status: int, document: Dict[str, Any]) -> None:
                body = json.dumps(document).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def do_GET(self) -> None:
                if self.path == "/status":
                    self._reply(200, endpoint._served())
                else:
                    self._reply(404, {"error": f"no {self.path}: GET /status or POST /finish"})

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                if length:
                    self.rfile.read(min(length, 65536))
                url = urlsplit(self.path)
                if url.path == "/finish":
                    endpoint.finish_requested.set()
                    self._reply(202, endpoint._served())
                elif url.path == "/node-loss":
                    step = (parse_qs(url.query).get("step") or [""])[0]
                    refused = endpoint.start_loss(step)
                    if refused is None:
                        self._reply(202, endpoint._served())
                    else:
                        self._reply(409, {**endpoint._served(), "error": refused})
                else:
                    self._reply(
                        404, {"error": f"no {self.path}: GET /status, POST /finish or POST /node-loss?step="}
                    )

        return Handler

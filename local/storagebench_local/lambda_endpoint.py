"""A local Lambda Invoke endpoint: the template's functions, run in this process.

``LocalLambda`` answers the one Lambda API call Step Functions makes,
``POST /2015-03-31/functions/<name or ARN>/invocations``, the way Lambda does, so boto3 (and moto's
ASL interpreter, which creates a plain ``boto3.client("lambda")``) reaches it through
``AWS_ENDPOINT_URL_LAMBDA``::

    with LocalLambda.from_template(template, mapping) as functions:
        os.environ["AWS_ENDPOINT_URL_LAMBDA"] = functions.endpoint_url
        ...  # start executions; functions.invocations lists what ran

What it does, as Lambda does it:

* a result is ``200`` with the handler's JSON, ``x-amzn-RequestId`` and ``X-Amz-Executed-Version``;
* an exception is ``200`` + ``X-Amz-Function-Error: Unhandled`` + ``{"errorType": <class name>,
  "errorMessage", "requestId", "stackTrace"}``, so ASL ``Retry``/``Catch`` match on the class name;
  an import failure is ``Runtime.ImportModuleError``, a missing handler ``Runtime.HandlerNotFound``,
  a syntax error ``Runtime.UserCodeSyntaxError``, ``sys.exit`` ``Runtime.ExitError``, a result
  ``json`` cannot encode ``Runtime.MarshalError``, a result over 6 MB ``Function.ResponseSizeTooLarge``;
* ``X-Amz-Invocation-Type: Event`` answers ``202`` at once and runs the handler in a thread;
  ``DryRun`` answers ``204``; ``X-Amz-Log-Type: Tail`` returns a base64 ``REPORT`` line;
* an unknown function is ``404`` ``ResourceNotFoundException``, an unparsable payload ``400``
  ``InvalidRequestContentException``, a request over 6 MB ``413`` ``RequestTooLargeException``.

What differs from Lambda:

* Handler modules load by file path (``importlib.util.spec_from_file_location``) under a unique
  module name per function (``_sblocal_<Function>__app``), since every function's file is
  ``app.py``; a module loads on the function's first invocation (its cold start) and stays
  loaded until ``stop()``. While it loads, its code directory is first on ``sys.path``, so a
  function may import a sibling module, but sibling modules share ``sys.modules`` until
  ``stop()`` forgets them: two functions with a same-named helper would see one. Shared code
  belongs in the ``storagebench`` layer, importable here because it is installed in the
  virtualenv (the layer directory is appended to ``sys.path`` too, for a checkout not installed).
* Invocations run concurrently in the server's threads, in one process: a function's module
  globals are shared by its concurrent invocations (Lambda would give each its own sandbox).
* The environment is process-global. Every function of this template shares ``Globals``, so
  ``start()`` sets the union of the functions' variables once in ``os.environ`` and ``stop()``
  restores the previous values (``env_mode == "shared"``): invocations run concurrently (moto
  runs a Map's iterations in parallel) and a handler may read its variables at import time.
  A variable already set in the process when ``start()`` runs keeps its value
  (``keep_existing=True``, so a caller's ``POWERTOOLS_LOG_LEVEL=ERROR`` wins over the template's);
  ``environment=`` values always win. Only when two functions give one variable different
  values (``env_mode == "per-invocation"``) are the variables they disagree on set around each
  invocation (to "" for a function without one: keys never leave ``os.environ`` while threads may
  iterate it), and invocations then run one at a time, so no handler sees another's value.
* ``before_invoke(function_name, event)`` runs before each handler call, inside the invocation:
  an exception it raises is the invocation's error (fault injection).
* ``Timeout`` is not enforced: ``context.get_remaining_time_in_millis()`` counts down from it, and
  an invocation that ran longer is recorded with ``over_timeout=True`` and logged.

Every invocation is recorded (``invocations``, ``summary()``) for tests and metrics.
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import importlib.util
import json
import logging
import math
import os
import re
import socket
import sys
import threading
import time
import traceback
import uuid
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import ModuleType, TracebackType
from typing import Any
from urllib.parse import unquote, urlsplit

from storagebench_local.template import (
    DEFAULT_REGION,
    LOCAL_ACCOUNT_ID,
    FunctionSpec,
    Template,
    lambda_arn,
)

__all__ = ["Invocation", "InvokeReply", "LambdaContext", "LocalFunction", "LocalLambda"]

log = logging.getLogger("storagebench_local.lambda")

MAX_SYNC_PAYLOAD = 6 * 1024 * 1024  # Lambda's 6 MB limit on a RequestResponse request and response
_INVOKE_PATH = re.compile(r"^/2015-03-31/functions/(?P<function>[^/]+)/invocations$")
_LAYER_ROOT = Path(__file__).resolve().parents[2] / "layers" / "storagebench"  # holds storagebench/
_IMPORT_LOCK = threading.Lock()  # sys.path and module loading are process-global


@dataclass(frozen=True)
class LocalFunction:
    """A function as the endpoint runs it; ``FunctionSpec`` converts with Lambda's defaults."""

    name: str
    code_dir: Path
    handler: str = "app.handler"
    environment: Mapping[str, str] = field(default_factory=dict)
    timeout_s: float = 3.0
    memory_mb: int = 128

    @classmethod
    def of(cls, spec: FunctionSpec | LocalFunction) -> LocalFunction:
        if isinstance(spec, LocalFunction):
            return spec
        return cls(spec.logical_id, Path(spec.code_dir), spec.handler, dict(spec.environment))


@dataclass(frozen=True)
class Invocation:
    """One invocation as it happened."""

    function: str
    request_id: str
    invocation_type: str  # RequestResponse or Event
    started_at: float  # time.time()
    duration_s: float
    error_type: str | None  # None when the handler returned
    error_message: str | None
    cold_start: bool
    over_timeout: bool
    event: Any = field(repr=False)
    result: Any = field(repr=False)  # the handler's return value (None on error)

    @property
    def ok(self) -> bool:
        return self.error_type is None


class LambdaContext:
    """The attributes of Lambda's context object that handlers and Powertools read."""

    function_version = "$LATEST"
    identity = None
    tenant_id = None

    def __init__(
        self, function: LocalFunction, arn: str, request_id: str, client_context: Any = None
    ) -> None:
        self.function_name = function.name
        self.invoked_function_arn = arn
        self.memory_limit_in_mb = function.memory_mb
        self.aws_request_id = request_id
        self.log_group_name = f"/aws/lambda/{function.name}"
        self.log_stream_name = f"local/[$LATEST]{uuid.uuid4().hex}"
        self.client_context = client_context
        self._deadline = time.monotonic() + function.timeout_s

    def get_remaining_time_in_millis(self) -> int:
        return max(0, int((self._deadline - time.monotonic()) * 1000))


class _FunctionError(Exception):
    """A Lambda runtime error (errorType, errorMessage, stackTrace) to answer with."""

    def __init__(self, error_type: str, message: str, trace: list[str] | None = None) -> None:
        super().__init__(message)
        self.error_type = error_type
        self.message = message
        self.trace = trace or []


@dataclass
class InvokeReply:
    status: int
    body: bytes = b""
    headers: dict[str, str] = field(default_factory=dict)


def _function_name(identifier: str) -> str:
    """A function name from a name, ``name:qualifier``, a partial ARN or a full ARN."""
    parts = identifier.split(":")
    if identifier.startswith("arn:") and len(parts) >= 7:
        return parts[6]
    if len(parts) >= 3 and parts[1] == "function":
        return parts[2]
    return parts[0]


def _safe(text: str) -> str:
    return re.sub(r"\W", "_", text)


def _ensure_layer_importable() -> None:
    layer = str(_LAYER_ROOT)
    if (_LAYER_ROOT / "storagebench").is_dir() and layer not in sys.path:
        sys.path.append(layer)


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False

    def __init__(self, address: tuple[str, int], owner: LocalLambda) -> None:
        super().__init__(address, _RequestHandler)
        self.owner = owner
        self.connections: set[socket.socket] = set()
        self.connections_lock = threading.Lock()

    def process_request_thread(self, request: Any, client_address: Any) -> None:
        with self.connections_lock:
            self.connections.add(request)
        try:
            super().process_request_thread(request, client_address)
        finally:
            with self.connections_lock:
                self.connections.discard(request)

    def close_connections(self) -> None:
        """End kept-alive connections, so no pooled client connection is served after stop()."""
        with self.connections_lock:
            connections = list(self.connections)
        for connection in connections:
            with contextlib.suppress(OSError):
                connection.shutdown(socket.SHUT_RDWR)

    def handle_error(self, request: Any, client_address: Any) -> None:
        error = sys.exc_info()[1]
        if isinstance(error, ConnectionError):
            return  # a client closed its kept-alive connection: nothing went wrong
        log.exception("local Lambda endpoint: error serving %s", client_address)


class _RequestHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:
        log.debug("%s %s", self.address_string(), format % args)

    def _send(self, reply: InvokeReply) -> None:
        self.send_response(reply.status)
        headers = {"Content-Type": "application/json", **reply.headers}
        headers.setdefault("x-amzn-RequestId", str(uuid.uuid4()))
        for name, value in headers.items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(reply.body)))
        self.end_headers()
        self.wfile.write(reply.body)

    def _body(self) -> bytes:
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length > 0 else b""

    def do_POST(self) -> None:
        body = self._body()
        match = _INVOKE_PATH.match(urlsplit(self.path).path)
        if match is None:
            self._send(
                _error_reply(
                    404,
                    "UnknownOperationException",
                    f"the local Lambda endpoint only serves Invoke, not POST {self.path}",
                )
            )
            return
        self._send(
            self.server.owner.handle_invoke(
                unquote(match.group("function")),
                body,
                self.headers.get("X-Amz-Invocation-Type") or "RequestResponse",
                self.headers.get("X-Amz-Log-Type") or "None",
                self.headers.get("X-Amz-Client-Context"),
            )
        )

    def do_GET(self) -> None:
        self._body()
        self._send(
            _error_reply(
                404,
                "UnknownOperationException",
                f"the local Lambda endpoint only serves Invoke, not GET {self.path}",
            )
        )

    def do_PUT(self) -> None:
        self.do_GET()

    def do_DELETE(self) -> None:
        self.do_GET()


def _error_reply(status: int, error_type: str, message: str) -> InvokeReply:
    body = json.dumps({"Type": "User", "Message": message, "message": message}).encode()
    return InvokeReply(status, body, {"x-amzn-ErrorType": error_type})


class LocalLambda:
    """The template's functions behind a local Lambda Invoke endpoint (see the module docstring)."""

    def __init__(
        self,
        functions: Iterable[FunctionSpec | LocalFunction],
        *,
        region: str = DEFAULT_REGION,
        account_id: str = LOCAL_ACCOUNT_ID,
        environment: Mapping[str, str] | None = None,
        keep_existing: bool = True,
        before_invoke: Callable[[str, Any], None] | None = None,
        host: str = "127.0.0.1",
        port: int = 0,
    ) -> None:
        self.functions: dict[str, LocalFunction] = {}
        for spec in functions:
            function = LocalFunction.of(spec)
            if function.name in self.functions:
                raise ValueError(f"two functions named {function.name!r}")
            self.functions[function.name] = function
        self.region = region
        self.account_id = account_id
        self.extra_environment = dict(environment or {})
        self.keep_existing = keep_existing
        self.before_invoke = before_invoke
        self._address = (host, port)
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None
        self._modules: dict[str, tuple[str, Callable[..., Any]]] = {}
        self._load_locks = {name: threading.Lock() for name in self.functions}
        self._records: list[Invocation] = []
        self._records_lock = threading.Lock()
        self._events: set[threading.Thread] = set()
        self._events_lock = threading.Condition()
        self._saved_environment: dict[str, str | None] = {}
        self._serial = threading.Lock()
        self.shared_environment, self.conflicting_variables = self._split_environment()

    @classmethod
    def from_template(
        cls,
        template: Template,
        mapping: Mapping[str, Any] | None = None,
        *,
        environment: Mapping[str, str] | None = None,
        keep_existing: bool = True,
        before_invoke: Callable[[str, Any], None] | None = None,
        port: int = 0,
    ) -> LocalLambda:
        """Every function of the template, with its Timeout and MemorySize (Globals merged)."""
        functions = []
        for spec in template.functions(mapping):
            properties = template.function_properties(spec.logical_id)
            timeout = template.resolve(properties.get("Timeout", 3), mapping)
            memory = template.resolve(properties.get("MemorySize", 128), mapping)
            functions.append(
                LocalFunction(
                    spec.logical_id,
                    spec.code_dir,
                    spec.handler,
                    spec.environment,
                    float(timeout),
                    int(memory),
                )
            )
        return cls(
            functions,
            region=template.region,
            account_id=template.account_id,
            environment=environment,
            keep_existing=keep_existing,
            before_invoke=before_invoke,
            port=port,
        )

    # ------------------------------------------------------------------ environment
    def _split_environment(self) -> tuple[dict[str, str], frozenset[str]]:
        values: dict[str, set[str]] = {}
        for function in self.functions.values():
            for name, value in function.environment.items():
                values.setdefault(name, set()).add(value)
        conflicting = frozenset(
            name for name, seen in values.items() if len(seen) > 1 and name not in self.extra_environment
        )
        shared = {name: next(iter(seen)) for name, seen in values.items() if name not in conflicting}
        shared.update(self.extra_environment)
        return shared, conflicting

    @property
    def env_mode(self) -> str:
        return "per-invocation" if self.conflicting_variables else "shared"

    def _set_environment(self, values: Mapping[str, str]) -> dict[str, str | None]:
        saved = {name: os.environ.get(name) for name in values}
        os.environ.update(values)
        return saved

    @staticmethod
    def _restore_environment(saved: Mapping[str, str | None]) -> None:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value

    @contextlib.contextmanager
    def _function_environment(self, function: LocalFunction) -> Iterator[None]:
        if not self.conflicting_variables:
            yield
            return
        with self._serial:
            # Set, never removed: another thread (moto's interpreter, botocore) may be iterating
            # os.environ, and a key that vanishes between its listing and its read is a KeyError
            # there. A variable this function lacks reads as empty, as an unset one does.
            own = {k: function.environment.get(k, "") for k in self.conflicting_variables}
            saved = self._set_environment(own)
            try:
                yield
            finally:
                self._restore_environment(saved)

    # ------------------------------------------------------------------ lifecycle
    @property
    def endpoint_url(self) -> str:
        if self._server is None:
            raise RuntimeError("LocalLambda is not started")
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    def arn(self, name: str) -> str:
        return lambda_arn(name, self.region, self.account_id)

    def start(self) -> LocalLambda:
        if self._server is not None:
            return self
        _ensure_layer_importable()
        values = dict(self.shared_environment)
        # present from the start (empty between invocations): _function_environment only sets them
        values.update({k: "" for k in self.conflicting_variables if k not in values})
        if self.keep_existing:
            template_only = set(values) - set(self.extra_environment)
            values = {k: v for k, v in values.items() if k not in template_only or k not in os.environ}
        self._saved_environment = self._set_environment(values)
        try:
            self._server = _Server(self._address, self)
        except OSError:
            self._restore_environment(self._saved_environment)
            raise
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.1}, name="local-lambda", daemon=True
        )
        self._thread.start()
        log.info("local Lambda endpoint %s serving %s", self.endpoint_url, ", ".join(self.functions))
        return self

    def stop(self, event_timeout_s: float = 10.0) -> None:
        """Stop serving, let Event invocations finish (up to ``event_timeout_s``), restore the environment."""
        if self._server is None:
            return
        self._server.shutdown()
        self._server.server_close()
        self._server.close_connections()
        if self._thread is not None:
            self._thread.join()
        self.wait_for_events(event_timeout_s)
        self._server = None
        self._thread = None
        self._unload_modules()
        self._restore_environment(self._saved_environment)
        self._saved_environment = {}

    def _unload_modules(self) -> None:
        """Forget the handler modules and every module loaded from a function's code directory."""
        for module_name, _ in self._modules.values():
            sys.modules.pop(module_name, None)
        self._modules.clear()
        code_dirs = [function.code_dir.resolve() for function in self.functions.values()]
        for name, module in list(sys.modules.items()):
            path = getattr(module, "__file__", None)
            if not path:
                continue
            resolved = Path(path).resolve()  # once per module, not per code directory: thousands are loaded
            if any(resolved.is_relative_to(code_dir) for code_dir in code_dirs):
                sys.modules.pop(name, None)

    def __enter__(self) -> LocalLambda:
        return self.start()

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        self.stop()

    # ------------------------------------------------------------------ records
    @property
    def invocations(self) -> list[Invocation]:
        with self._records_lock:
            return list(self._records)

    def invocations_of(self, name: str) -> list[Invocation]:
        return [record for record in self.invocations if record.function == name]

    def clear_invocations(self) -> None:
        with self._records_lock:
            self._records.clear()

    def summary(self) -> dict[str, dict[str, Any]]:
        """Per function: invocations, errors by type, cold starts, total/mean/max duration in seconds."""
        summary: dict[str, dict[str, Any]] = {}
        for record in self.invocations:
            entry = summary.setdefault(
                record.function,
                {"invocations": 0, "errors": {}, "cold_starts": 0, "total_s": 0.0, "max_s": 0.0},
            )
            entry["invocations"] += 1
            entry["cold_starts"] += int(record.cold_start)
            entry["total_s"] += record.duration_s
            entry["max_s"] = max(entry["max_s"], record.duration_s)
            if record.error_type is not None:
                entry["errors"][record.error_type] = entry["errors"].get(record.error_type, 0) + 1
        for entry in summary.values():
            entry["mean_s"] = entry["total_s"] / entry["invocations"]
        return summary

    def wait_for_events(self, timeout_s: float = 10.0) -> bool:
        """Wait until every Event invocation has finished; False when some still run after ``timeout_s``."""
        deadline = time.monotonic() + timeout_s
        with self._events_lock:
            while self._events:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return False
                self._events_lock.wait(remaining)
        return True

    # ------------------------------------------------------------------ invocation
    def handle_invoke(
        self,
        identifier: str,
        payload: bytes,
        invocation_type: str = "RequestResponse",
        log_type: str = "None",
        client_context: str | None = None,
    ) -> InvokeReply:
        """Answer one Invoke request (the HTTP layer calls this; tests may too)."""
        name = _function_name(identifier)
        function = self.functions.get(name)
        if function is None:
            return _error_reply(
                404,
                "ResourceNotFoundException",
                f"Function not found: {self.arn(name)} "
                f"(the local endpoint serves: {', '.join(self.functions) or 'nothing'})",
            )
        if invocation_type not in ("RequestResponse", "Event", "DryRun"):
            return _error_reply(
                400, "InvalidParameterValueException", f"unknown InvocationType {invocation_type!r}"
            )
        if invocation_type == "RequestResponse" and len(payload) > MAX_SYNC_PAYLOAD:
            return _error_reply(
                413,
                "RequestTooLargeException",
                f"request payload of {len(payload)} bytes exceeds {MAX_SYNC_PAYLOAD}",
            )
        try:
            event = json.loads(payload) if payload.strip() else {}
        except (UnicodeDecodeError, json.JSONDecodeError) as error:
            return _error_reply(
                400, "InvalidRequestContentException", f"Could not parse request body into json: {error}"
            )
        try:
            context_value = json.loads(base64.b64decode(client_context)) if client_context else None
        except (binascii.Error, UnicodeDecodeError, json.JSONDecodeError):
            return _error_reply(
                400, "InvalidRequestContentException", "X-Amz-Client-Context is not base64 JSON"
            )
        request_id = str(uuid.uuid4())
        headers = {"x-amzn-RequestId": request_id}
        if invocation_type == "DryRun":
            return InvokeReply(204, b"", headers)
        if invocation_type == "Event":
            thread = threading.Thread(
                target=self._run_event,
                args=(function, event, request_id, context_value),
                name=f"local-lambda-event-{name}",
                daemon=True,
            )
            with self._events_lock:
                self._events.add(thread)
            thread.start()
            return InvokeReply(202, b"", headers)
        body, error_type, duration = self._run(function, event, request_id, "RequestResponse", context_value)
        headers["X-Amz-Executed-Version"] = "$LATEST"
        if error_type is not None:
            headers["X-Amz-Function-Error"] = "Unhandled"
        if log_type == "Tail":
            report = (
                f"REPORT RequestId: {request_id}\tDuration: {duration * 1000:.2f} ms\t"
                f"Billed Duration: {math.ceil(duration * 1000)} ms\tMemory Size: {function.memory_mb} MB\n"
            )
            headers["X-Amz-Log-Result"] = base64.b64encode(report.encode()).decode()
        return InvokeReply(200, body, headers)

    def _run_event(self, function: LocalFunction, event: Any, request_id: str, client_context: Any) -> None:
        try:
            self._run(function, event, request_id, "Event", client_context)
        finally:
            with self._events_lock:
                self._events.discard(threading.current_thread())
                self._events_lock.notify_all()

    def _run(
        self, function: LocalFunction, event: Any, request_id: str, invocation_type: str, client_context: Any
    ) -> tuple[bytes, str | None, float]:
        context = LambdaContext(function, self.arn(function.name), request_id, client_context)
        started_at = time.time()
        start = time.perf_counter()
        cold_start = function.name not in self._modules
        result: Any = None
        error: _FunctionError | None = None
        body = b""
        with self._function_environment(function):
            try:
                handler = self._handler(function)
                if self.before_invoke is not None:
                    self.before_invoke(function.name, event)
                result = handler(event, context)
            except _FunctionError as failure:
                error = failure
            except SystemExit as failure:
                error = _FunctionError(
                    "Runtime.ExitError", f"RequestId: {request_id} Error: exited with {failure.code!r}"
                )
            except Exception as failure:
                error = _user_error(failure)
        if error is None:
            try:
                body = json.dumps(result).encode()
            except (TypeError, ValueError) as failure:
                result = None
                error = _FunctionError("Runtime.MarshalError", f"Unable to marshal response: {failure}")
            else:
                if len(body) > MAX_SYNC_PAYLOAD and invocation_type == "RequestResponse":
                    result = None
                    error = _FunctionError(
                        "Function.ResponseSizeTooLarge",
                        f"Response payload size ({len(body)} bytes) exceeded maximum allowed payload size "
                        f"({MAX_SYNC_PAYLOAD} bytes).",
                    )
        duration = time.perf_counter() - start
        over_timeout = duration > function.timeout_s
        if over_timeout:
            log.warning(
                "%s ran %.1f s, over its %.0f s Timeout (Lambda would have stopped it)",
                function.name,
                duration,
                function.timeout_s,
            )
        if error is not None:
            body = json.dumps(
                {
                    "errorType": error.error_type,
                    "errorMessage": error.message,
                    "requestId": request_id,
                    "stackTrace": error.trace,
                }
            ).encode()
        record = Invocation(
            function=function.name,
            request_id=request_id,
            invocation_type=invocation_type,
            started_at=started_at,
            duration_s=duration,
            error_type=None if error is None else error.error_type,
            error_message=None if error is None else error.message,
            cold_start=cold_start,
            over_timeout=over_timeout,
            event=event,
            result=result,
        )
        with self._records_lock:
            self._records.append(record)
        log.debug("%s %s %.3f s %s", function.name, request_id, duration, record.error_type or "ok")
        return body, record.error_type, duration

    def _handler(self, function: LocalFunction) -> Callable[..., Any]:
        loaded = self._modules.get(function.name)
        if loaded is not None:
            return loaded[1]
        with self._load_locks[function.name]:
            loaded = self._modules.get(function.name)
            if loaded is None:
                loaded = _load_handler(function)
                self._modules[function.name] = loaded
        return loaded[1]


def _user_error(error: BaseException) -> _FunctionError:
    frames = traceback.extract_tb(error.__traceback__)[1:]  # drop this module's frame
    return _FunctionError(type(error).__name__, str(error), traceback.format_list(frames))


def _load_handler(function: LocalFunction) -> tuple[str, Callable[..., Any]]:
    module_part, _, attribute = function.handler.rpartition(".")
    if not module_part or not attribute:
        raise _FunctionError(
            "Runtime.MalformedHandlerName", f"Bad handler '{function.handler}': not enough values"
        )
    relative = Path(*module_part.replace("/", ".").split("."))
    path = function.code_dir / relative.with_suffix(".py")
    if not path.is_file() and (function.code_dir / relative / "__init__.py").is_file():
        path = function.code_dir / relative / "__init__.py"
    module_name = f"_sblocal_{_safe(function.name)}__{_safe(module_part)}"
    if not path.is_file():
        raise _FunctionError(
            "Runtime.ImportModuleError",
            f"Unable to import module '{module_part}': no {path} for {function.name}",
        )
    spec = importlib.util.spec_from_file_location(module_name, path)
    if spec is None or spec.loader is None:
        raise _FunctionError(
            "Runtime.ImportModuleError", f"Unable to import module '{module_part}' from {path}"
        )
    module: ModuleType = importlib.util.module_from_spec(spec)
    with _IMPORT_LOCK:
        sys.modules[module_name] = module
        code_dir = str(function.code_dir)
        sys.path.insert(0, code_dir)
        try:
            spec.loader.exec_module(module)
        except SyntaxError as error:
            sys.modules.pop(module_name, None)
            raise _FunctionError(
                "Runtime.UserCodeSyntaxError", f"Syntax error in module '{module_part}': {error}"
            ) from error
        except Exception as error:
            sys.modules.pop(module_name, None)
            raise _FunctionError(
                "Runtime.ImportModuleError",
                f"Unable to import module '{module_part}': {error}",
                traceback.format_list(traceback.extract_tb(error.__traceback__)),
            ) from error
        finally:
            with contextlib.suppress(ValueError):
                sys.path.remove(code_dir)
    handler = getattr(module, attribute, None)
    if not callable(handler):
        sys.modules.pop(module_name, None)
        raise _FunctionError(
            "Runtime.HandlerNotFound", f"Handler '{attribute}' missing on module '{module_part}'"
        )
    return module_name, handler

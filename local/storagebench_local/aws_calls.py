"""Every AWS call a local run makes, and as whom: the input of the IAM evaluation (tests/iam).

Off unless asked for: ``LocalSession(aws_calls=AwsCallRecorder())``, or
``STORAGEBENCH_RECORD_AWS_CALLS=<file.jsonl>`` for a run started any other way (the calls are written
there, one JSON object a line, when the session ends).

Who makes a call, as on AWS:

* a handler: its SAM function's role. A botocore ``before-parameter-build`` hook sees every call
  (and every presigned URL, signed with the signer's rights) of every client created while the
  recorder is installed; the principal is the function the local Lambda endpoint is invoking on
  this thread (``LocalSession`` says which through ``invoking``, from its before-invoke hook);
* an instance: its instance profile's role. The agent calls moto's server over HTTP, signed with
  the credentials ec2-metadata-mock hands out, whose session token is
  ``local-instance-token-<instance id>``: a WSGI middleware around that server records each such
  request (service from the signature's credential scope, operation from the method and path or
  the ``X-Amz-Target``/``Action``). Presigned GETs the instance fetches carry the signer's
  credentials, not the instance's: they were recorded when the handler signed them. The local SSM
  agent uploads a command's output in-process from thread ``ssm-<command>-<instance id>``: that
  is the instance's SSM agent, so the instance's role too;
* the state machine: its role. moto's interpreter invokes the Lambda tasks from threads of its
  own; an ``Invoke`` on no handler's or instance's thread is the state machine's.

Anything else (the session creating its network, bucket and table, starting and polling
executions, the SSM agent stand-in looking for terminated instances) is no principal of the stack:
it is only counted, in ``unattributed``.

For each call the recorder also notes what IAM conditions read from the resources it names, as
they are at the time of the call: the tags of instances, volumes and file systems, the owner and
snapshots of an image, the subnet of a network interface (``AwsCall.facts``, by resource id).
Read-only calls (Describe/List/Get/Head) are not looked up.
"""

from __future__ import annotations

import io
import json
import logging
import re
import sys
import threading
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from types import FrameType
from typing import Any
from urllib.parse import parse_qs, unquote

__all__ = ["ENV_VARIABLE", "AwsCall", "AwsCallRecorder", "load_calls"]

log = logging.getLogger("storagebench_local.aws_calls")

ENV_VARIABLE = "STORAGEBENCH_RECORD_AWS_CALLS"
FUNCTION = "function"
INSTANCE = "instance"
STATE_MACHINE = "state-machine"
INSTANCE_TOKEN = re.compile(r"local-instance-token-(i-[0-9a-zA-Z]+)")  # ssm/instance.py's metadata service
SSM_AGENT_THREAD = re.compile(r"ssm-[0-9a-zA-Z]+-(i-[0-9a-zA-Z]+)")  # ssm/agent.py's command threads
CREDENTIAL_SCOPE = re.compile(r"Credential=[^/,\s]+/\d{8}/[^/]+/([^/]+)/aws4_request")
READ_ONLY = ("Describe", "List", "Get", "Head")
LOOKED_UP = {"ec2", "ssm", "efs", "fsx"}  # services whose conditions read resource tags and attributes
SIGNING_TO_SERVICE = {"states": "stepfunctions", "elasticfilesystem": "efs"}
_CHECKOUT = str(Path(__file__).resolve().parents[2]) + "/"  # sites are named relative to it
_SDK_PATHS = ("/botocore/", "/boto3/", "/moto/", "/s3transfer/", "/urllib3/", "/werkzeug/", "/responses/")
_ID = {
    "instance": re.compile(r"i-[0-9a-f]{8,17}"),
    "volume": re.compile(r"vol-[0-9a-f]{8,17}"),
    "image": re.compile(r"ami-[0-9a-f]{8,17}"),
    "network-interface": re.compile(r"eni-[0-9a-f]{8,17}"),
    "security-group": re.compile(r"sg-[0-9a-f]{8,17}"),
    "file-system": re.compile(r"fs-[0-9a-f]{8,17}"),
    "mount-target": re.compile(r"fsmt-[0-9a-f]{8,17}"),
}


@dataclass(frozen=True)
class AwsCall:
    """One call as IAM would authorise it: who, which operation, with what, on what."""

    kind: str  # function | instance | state-machine
    principal: str  # the SAM function's logical id, the instance id, or the state machine's logical id
    service: str  # botocore's service name: ec2, s3, ssm, stepfunctions, dynamodb, lambda, efs, fsx, ...
    operation: str  # the API operation: RunInstances, PutObject, SendTaskSuccess, ...
    params: dict[str, Any]  # the call's parameters (bodies and streams replaced by a placeholder)
    facts: dict[str, dict[str, Any]] = field(default_factory=dict)  # resource id -> tags, owner, subnet...
    via: str = "sdk"  # sdk | presign | http | ssm-agent
    site: str = ""  # the first frame of our code on the way to the call

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> AwsCall:
        return cls(**data)

    def describe(self) -> str:
        return f"{self.kind} {self.principal}: {self.service}.{self.operation} ({self.via}, {self.site})"


def load_calls(path: Path) -> list[AwsCall]:
    """The calls a recorder wrote (``STORAGEBENCH_RECORD_AWS_CALLS``), one JSON object a line."""
    lines = path.read_text(encoding="utf-8").splitlines()
    return [AwsCall.from_json(json.loads(line)) for line in lines if line.strip()]


def _plain(value: Any, depth: int = 0) -> Any:
    """A JSON-safe copy of call parameters; bodies, streams and anything exotic become a placeholder."""
    if depth > 12:
        return "<nested too deep>"
    if isinstance(value, dict):
        return {str(k): _plain(v, depth + 1) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v, depth + 1) for v in value]
    if value is None or isinstance(value, bool | int | float):
        return value
    if isinstance(value, str):
        return value if len(value) <= 4096 else f"<{len(value)} characters>"
    if isinstance(value, bytes | bytearray):
        return f"<{len(value)} bytes>"
    return f"<{type(value).__name__}>"


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, dict):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)
    elif isinstance(value, str):
        yield value


def _site() -> str:
    """file:line function of the innermost frame that is neither an SDK's nor this module's."""
    frame: FrameType | None = sys._getframe(2)
    while frame is not None:
        name = frame.f_code.co_filename
        if name != __file__ and not any(part in name for part in _SDK_PATHS):
            short = name.removeprefix(_CHECKOUT).split("/site-packages/")[-1]
            return f"{short}:{frame.f_lineno} {frame.f_code.co_name}"
        frame = frame.f_back
    return "?"


class AwsCallRecorder:
    """Records the AWS calls of a local run by principal (see the module docstring)."""

    def __init__(
        self,
        region: str = "us-east-1",
        path: Path | None = None,
        state_machine: str = "BenchmarkStateMachine",
    ) -> None:
        self.region = region
        self.path = path
        self.state_machine = state_machine
        self.calls: list[AwsCall] = []
        self.unattributed: Counter[str] = Counter()  # "service.Operation" -> count
        self.errors: list[str] = []  # requests the middleware could not read
        self._lock = threading.Lock()
        self._local = threading.local()
        self._active = False
        self._clients: dict[str, Any] = {}

    # ------------------------------------------------------------------ who is calling

    def invoking(self, function: str) -> None:
        """The local Lambda endpoint is about to run ``function``'s handler on this thread."""
        self._local.function = function

    def _carrying_principal(self, submit: Callable[..., Future[Any]]) -> Callable[..., Future[Any]]:
        """``ThreadPoolExecutor.submit`` that runs the task as the submitting thread's function.

        ``download_file`` and friends (s3transfer) make their HeadObject and GetObject calls from
        executor threads: they are still the calls of the handler that asked for the download.
        """
        recorder = self

        def carried(
            executor: ThreadPoolExecutor, fn: Callable[..., Any], /, *args: Any, **kwargs: Any
        ) -> Any:
            function = getattr(recorder._local, "function", None)
            if not function or not recorder._active:
                return submit(executor, fn, *args, **kwargs)

            def as_function(*inner_args: Any, **inner_kwargs: Any) -> Any:
                before = getattr(recorder._local, "function", None)
                recorder._local.function = function
                try:
                    return fn(*inner_args, **inner_kwargs)
                finally:
                    recorder._local.function = before

            return submit(executor, as_function, *args, **kwargs)

        return carried

    def _principal(self) -> tuple[str, str, str] | None:
        function = getattr(self._local, "function", None)
        if function:
            return FUNCTION, str(function), "sdk"
        agent = SSM_AGENT_THREAD.fullmatch(threading.current_thread().name)
        if agent:
            return INSTANCE, agent.group(1), "ssm-agent"
        return None

    # ------------------------------------------------------------------ lifecycle

    @contextmanager
    def recording(self) -> Iterator[AwsCallRecorder]:
        """Hooks every botocore client created from now on (and boto3's default session's)."""
        import boto3
        import botocore.handlers

        entry = ("before-parameter-build", self._on_sdk_call)
        botocore.handlers.BUILTIN_HANDLERS.append(entry)
        submit = ThreadPoolExecutor.submit
        ThreadPoolExecutor.submit = self._carrying_principal(submit)  # type: ignore[method-assign]
        default = boto3.DEFAULT_SESSION
        if default is not None:
            default.events.register("before-parameter-build", self._on_sdk_call, unique_id=id(self))
        self._active = True
        try:
            yield self
        finally:
            self._active = False
            ThreadPoolExecutor.submit = submit  # type: ignore[method-assign]
            if entry in botocore.handlers.BUILTIN_HANDLERS:
                botocore.handlers.BUILTIN_HANDLERS.remove(entry)
            if default is not None:
                default.events.unregister("before-parameter-build", unique_id=id(self))
            if self.path is not None:
                self.dump(self.path)

    @contextmanager
    def aside(self) -> Iterator[None]:
        """This thread's calls in the block are neither recorded nor counted (a test's own lookups)."""
        quiet = getattr(self._local, "quiet", False)
        self._local.quiet = True
        try:
            yield
        finally:
            self._local.quiet = quiet

    def dump(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        with self._lock:
            lines = [json.dumps(call.to_json(), sort_keys=True) for call in self.calls]
        path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")

    def _append(self, call: AwsCall) -> None:
        with self._lock:
            self.calls.append(call)

    # ------------------------------------------------------------------ handlers (botocore)

    def _on_sdk_call(self, params: Any, model: Any, context: Any = None, **_: Any) -> None:
        if not self._active or getattr(self._local, "quiet", False):
            return
        service = str(model.service_model.service_name)
        operation = str(model.name)
        principal = self._principal()
        if principal is None and service == "lambda" and operation == "Invoke":
            principal = STATE_MACHINE, self.state_machine, "sdk"
        if principal is None:
            with self._lock:
                self.unattributed[f"{service}.{operation}"] += 1
            return
        kind, who, via = principal
        if isinstance(context, dict) and context.get("is_presign_request"):
            via = "presign"
        plain = _plain(params)
        self._append(
            AwsCall(
                kind, who, service, operation, plain, self._facts(service, operation, plain), via, _site()
            )
        )

    # ------------------------------------------------------------------ instances (moto's server)

    def wrap_server(self, server: Any) -> None:
        """Wrap a started ``moto.server.ThreadedMotoServer``'s WSGI app (werkzeug reads
        ``server.app`` on every request, so the wrapper serves every request from now on)."""
        wsgi = server._server  # ThreadedMotoServer keeps its werkzeug server there once started
        if wsgi is None:
            raise RuntimeError("start the moto server before wrapping it")
        wsgi.app = self._middleware(wsgi.app)

    def _middleware(self, app: Callable[..., Iterable[bytes]]) -> Callable[..., Iterable[bytes]]:
        def recorded(environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
            if self._active:
                try:
                    self._on_http_request(environ)
                except Exception as exc:  # a request we cannot read must fail the evaluation, not the run
                    log.exception(
                        "cannot record %s %s", environ.get("REQUEST_METHOD"), environ.get("PATH_INFO")
                    )
                    with self._lock:
                        self.errors.append(
                            f"{environ.get('REQUEST_METHOD')} {environ.get('PATH_INFO')}: {exc!r}"
                        )
            return app(environ, start_response)

        return recorded

    def _on_http_request(self, environ: dict[str, Any]) -> None:
        query = parse_qs(str(environ.get("QUERY_STRING") or ""), keep_blank_values=True)
        token = environ.get("HTTP_X_AMZ_SECURITY_TOKEN") or (query.get("X-Amz-Security-Token") or [""])[0]
        instance = INSTANCE_TOKEN.fullmatch(str(token or ""))
        authorization = str(environ.get("HTTP_AUTHORIZATION") or "")
        scope = CREDENTIAL_SCOPE.search(authorization) or CREDENTIAL_SCOPE.search(
            "Credential=" + (query.get("X-Amz-Credential") or [""])[0]
        )
        signing = scope.group(1) if scope else "unsigned"
        service = SIGNING_TO_SERVICE.get(signing, signing)
        if instance is None:  # a presigned URL (recorded when signed), or not an instance at all
            kind = "presigned" if "X-Amz-Credential" in query else "unsigned"
            with self._lock:
                self.unattributed[f"http:{kind}:{service}"] += 1
            return
        method = str(environ.get("REQUEST_METHOD") or "GET")
        path = str(environ.get("PATH_INFO") or "/")
        if service == "s3":
            operation, params = _s3_operation(method, path, query, environ)
        else:
            body = _read_body(environ)
            operation, params = _rpc_operation(environ, body)
        self._append(
            AwsCall(INSTANCE, instance.group(1), service, operation, _plain(params), {}, "http", "agent")
        )

    # ------------------------------------------------------------------ resources at call time

    def _client(self, service: str) -> Any:
        with self._lock:
            client = self._clients.get(service)
            if client is None:
                import boto3

                client = boto3.client(service, region_name=self.region)
                self._clients[service] = client
            return client

    def _facts(self, service: str, operation: str, params: dict[str, Any]) -> dict[str, dict[str, Any]]:
        if operation.startswith(READ_ONLY) or service not in LOOKED_UP:
            return {}
        ids: dict[str, set[str]] = {kind: set() for kind in _ID}
        for text in _strings(params):
            for kind, pattern in _ID.items():
                if pattern.fullmatch(text):
                    ids[kind].add(text)
        facts: dict[str, dict[str, Any]] = {}
        quiet = getattr(self._local, "quiet", False)
        self._local.quiet = True
        try:
            self._ec2_facts(ids, facts)
            if service == "ec2":  # a placement group is named, not numbered: found in its parameters
                self._placement_facts(params, facts)
            if ids["file-system"] or ids["mount-target"]:
                if service == "fsx":
                    self._fsx_facts(ids["file-system"], facts)
                else:
                    self._efs_facts(ids["file-system"], ids["mount-target"], facts)
        finally:
            self._local.quiet = quiet
        return facts

    def _ec2_facts(self, ids: dict[str, set[str]], facts: dict[str, dict[str, Any]]) -> None:
        tagged = sorted(ids["instance"] | ids["volume"] | ids["security-group"])
        if tagged:
            ec2 = self._client("ec2")
            found: dict[str, dict[str, str]] = {resource: {} for resource in tagged}
            try:
                pages = ec2.get_paginator("describe_tags").paginate(
                    Filters=[{"Name": "resource-id", "Values": tagged}]
                )
                for page in pages:
                    for tag in page["Tags"]:
                        found.setdefault(tag["ResourceId"], {})[tag["Key"]] = tag["Value"]
            except Exception as exc:
                found = {}
                for resource in tagged:
                    facts[resource] = {"error": repr(exc)}
            for resource, tags in found.items():
                facts[resource] = {"tags": tags}
        for image in sorted(ids["image"]):
            try:
                described = self._client("ec2").describe_images(ImageIds=[image])["Images"][0]
                facts[image] = {
                    "owner": described.get("OwnerId"),
                    "owner_alias": described.get("ImageOwnerAlias"),
                    "snapshots": [
                        m["Ebs"]["SnapshotId"]
                        for m in described.get("BlockDeviceMappings") or []
                        if (m.get("Ebs") or {}).get("SnapshotId")
                    ],
                }
            except Exception as exc:
                facts[image] = {"error": repr(exc)}
        for interface in sorted(ids["network-interface"]):
            try:
                described = self._client("ec2").describe_network_interfaces(NetworkInterfaceIds=[interface])
                facts[interface] = {"subnet": described["NetworkInterfaces"][0].get("SubnetId")}
            except Exception as exc:
                facts[interface] = {"error": repr(exc)}

    def _placement_facts(self, params: dict[str, Any], facts: dict[str, dict[str, Any]]) -> None:
        """The tags of the placement group a launch uses or a delete names (Placement.GroupName,
        GroupName), as IAM reads them (aws:ResourceTag)."""
        name = (params.get("Placement") or {}).get("GroupName") or params.get("GroupName")
        if not name:
            return
        try:
            found = self._client("ec2").describe_placement_groups(GroupNames=[str(name)])["PlacementGroups"]
            facts[str(name)] = {"tags": {t["Key"]: t["Value"] for t in found[0].get("Tags") or []}}
        except Exception as exc:
            facts[str(name)] = {"error": repr(exc)}

    def _efs_facts(
        self, file_systems: set[str], mount_targets: set[str], facts: dict[str, dict[str, Any]]
    ) -> None:
        efs = self._client("efs")
        for target in sorted(mount_targets):
            try:
                described = efs.describe_mount_targets(MountTargetId=target)["MountTargets"][0]
                facts[target] = {"file_system": described["FileSystemId"]}
                file_systems = file_systems | {str(described["FileSystemId"])}
            except Exception as exc:
                facts[target] = {"error": repr(exc)}
        for file_system in sorted(file_systems):
            try:
                described = efs.describe_file_systems(FileSystemId=file_system)["FileSystems"][0]
                facts[file_system] = {"tags": {t["Key"]: t["Value"] for t in described.get("Tags") or []}}
            except Exception as exc:
                facts[file_system] = {"error": repr(exc)}

    def _fsx_facts(self, file_systems: set[str], facts: dict[str, dict[str, Any]]) -> None:
        fsx = self._client("fsx")
        for file_system in sorted(file_systems):
            try:
                described = fsx.describe_file_systems(FileSystemIds=[file_system])["FileSystems"][0]
                facts[file_system] = {"tags": {t["Key"]: t["Value"] for t in described.get("Tags") or []}}
            except Exception as exc:
                facts[file_system] = {"error": repr(exc)}


# ---------------------------------------------------------------------- reading HTTP requests


def _read_body(environ: dict[str, Any]) -> bytes:
    """The request body, put back for the app behind us."""
    try:
        length = int(environ.get("CONTENT_LENGTH") or 0)
    except ValueError:
        length = 0
    body = environ["wsgi.input"].read(length) if length > 0 else b""
    environ["wsgi.input"] = io.BytesIO(body)
    return bytes(body)


def _s3_operation(
    method: str, path: str, query: dict[str, list[str]], environ: dict[str, Any]
) -> tuple[str, dict[str, Any]]:
    """S3's REST operation of a path-style request (the agent addresses a local endpoint by path)."""
    bucket, _, key = path.lstrip("/").partition("/")
    params: dict[str, Any] = {"Bucket": unquote(bucket)}
    if key:
        params["Key"] = unquote(key)
        if method == "PUT" and environ.get("HTTP_X_AMZ_COPY_SOURCE"):
            params["CopySource"] = unquote(str(environ["HTTP_X_AMZ_COPY_SOURCE"]))
            return "CopyObject", params
        if "uploadId" in query:
            operation = {
                "PUT": "UploadPart",
                "POST": "CompleteMultipartUpload",
                "DELETE": "AbortMultipartUpload",
            }
            return operation.get(method, f"Unknown{method}Upload"), params
        if method == "POST" and "uploads" in query:
            return "CreateMultipartUpload", params
        if query.keys() - {"x-id", "versionId"} and method in ("GET", "PUT", "DELETE"):
            return f"Unknown{method}Object?{'&'.join(sorted(query))}", params  # tagging, acl, ...
        operation = {"PUT": "PutObject", "GET": "GetObject", "HEAD": "HeadObject", "DELETE": "DeleteObject"}
        return operation.get(method, f"Unknown{method}Object"), params
    if method == "GET" and not (
        query.keys()
        - {
            "list-type",
            "prefix",
            "delimiter",
            "continuation-token",
            "max-keys",
            "encoding-type",
            "start-after",
        }
    ):
        params["Prefix"] = (query.get("prefix") or [""])[0]
        return ("ListObjectsV2" if "list-type" in query else "ListObjects"), params
    if method == "GET" and "encryption" in query:
        return "GetBucketEncryption", params
    if method == "HEAD":
        return "HeadBucket", params
    return f"Unknown{method}Bucket?{'&'.join(sorted(query))}", params


def _rpc_operation(environ: dict[str, Any], body: bytes) -> tuple[str, dict[str, Any]]:
    """The operation of a JSON (``X-Amz-Target``) or query (``Action=``) protocol request."""
    target = str(environ.get("HTTP_X_AMZ_TARGET") or "")
    if target:
        try:
            params = json.loads(body or b"{}")
        except ValueError:
            params = {"<body>": f"<{len(body)} bytes, not JSON>"}
        return target.rsplit(".", 1)[-1], params if isinstance(params, dict) else {"<body>": params}
    form = parse_qs(body.decode("utf-8", "replace"), keep_blank_values=True)
    query = parse_qs(str(environ.get("QUERY_STRING") or ""), keep_blank_values=True)
    merged = {**query, **form}
    action = (merged.pop("Action", None) or ["Unknown"])[0]
    return action, {k: v[0] if len(v) == 1 else v for k, v in merged.items()}

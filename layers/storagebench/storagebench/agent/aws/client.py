"""Signed HTTPS requests with the SDKs' endpoint rules and retries (standard mode, simplified).

Endpoints: ``AWS_ENDPOINT_URL_<SERVICE>`` then ``AWS_ENDPOINT_URL`` (the SDKs' variables, which is
how a local instance reaches the local server), else the service's regional endpoint. Retried:
connection errors, 5xx and throttling, up to five attempts with full-jitter backoff; anything
else raises ``AwsError`` naming the operation, the HTTP status and AWS's error code.
"""

from __future__ import annotations

import json
import os
import random
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Callable, Dict, Mapping, Optional, Tuple

from storagebench.agent.aws.credentials import CredentialsError, CredentialSource
from storagebench.agent.aws.sigv4 import sha256_hex, sign

MAX_ATTEMPTS = 5
BASE_DELAY_S = 0.5
MAX_DELAY_S = 8.0
TIMEOUT_S = 60.0
THROTTLING = frozenset(
    {
        "Throttling",
        "ThrottlingException",
        "ThrottledException",
        "RequestThrottled",
        "SlowDown",
        "TooManyRequestsException",
        "RequestLimitExceeded",
        "ProvisionedThroughputExceededException",
    }
)
ENV_NAMES = {"s3": "S3", "states": "SFN"}  # AWS_ENDPOINT_URL_<name>, as the SDKs spell them


class AwsError(RuntimeError):
    def __init__(self, operation: str, status: int, code: str, message: str) -> None:
        super().__init__(f"{operation}: HTTP {status} {code}: {message}".rstrip(": "))
        self.operation = operation
        self.status = status
        self.code = code

    @property
    def retryable(self) -> bool:
        return self.status >= 500 or self.code in THROTTLING or self.status == 0


@dataclass(frozen=True)
class Response:
    status: int
    headers: Dict[str, str]
    body: bytes


def endpoint(service: str, region: str, environ: Optional[Mapping[str, str]] = None) -> Optional[str]:
    """The endpoint override for the service, if the environment sets one."""
    env = os.environ if environ is None else environ
    name = ENV_NAMES.get(service, service.upper())
    found = env.get(f"AWS_ENDPOINT_URL_{name}") or env.get("AWS_ENDPOINT_URL")
    return found.rstrip("/") if found else None


def regional(service: str, region: str) -> str:
    suffix = "amazonaws.com.cn" if region.startswith("cn-") else "amazonaws.com"
    return f"https://{service}.{region}.{suffix}"


def _error_code(body: bytes) -> Tuple[str, str]:
    """(code, message) from an XML (S3) or JSON (Step Functions) error body."""
    text = body.decode("utf-8", "replace")
    try:
        document = json.loads(text)
        code = str(document.get("__type", "")).rsplit("#", 1)[-1]
        return code, str(document.get("message") or document.get("Message") or "")
    except ValueError:
        pass
    code = _between(text, "<Code>", "</Code>")
    return code, _between(text, "<Message>", "</Message>")


def _between(text: str, start: str, end: str) -> str:
    _, found, tail = text.partition(start)
    return tail.partition(end)[0] if found else ""


class Client:
    """One service in one region, signing with the instance's credentials."""

    def __init__(
        self,
        service: str,
        region: str,
        credentials: Optional[CredentialSource] = None,
        environ: Optional[Mapping[str, str]] = None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        if not region:
            raise ValueError("a region is required (the document passes --region)")
        self.service = service
        self.region = region
        self.credentials = credentials or CredentialSource(environ)
        self.override = endpoint(service, region, environ)
        self.sleep = sleep

    def request(
        self,
        operation: str,
        method: str,
        url: str,
        body: bytes = b"",
        headers: Optional[Dict[str, str]] = None,
    ) -> Response:
        last: Optional[AwsError] = None
        for attempt in range(MAX_ATTEMPTS):
            if attempt:
                self.sleep(random.uniform(0, min(MAX_DELAY_S, BASE_DELAY_S * 2**attempt)))
            try:
                return self._once(operation, method, url, body, dict(headers or {}))
            except AwsError as exc:
                if not exc.retryable:
                    raise
                last = exc
        assert last is not None
        raise AwsError(
            operation, last.status, last.code or "GaveUp", f"{last} (after {MAX_ATTEMPTS} attempts)"
        )

    def _once(self, operation: str, method: str, url: str, body: bytes, headers: Dict[str, str]) -> Response:
        try:
            credentials = self.credentials.get()
        except CredentialsError as exc:
            raise AwsError(operation, 0, "NoCredentials", str(exc)) from exc
        signed = sign(
            method,
            url,
            headers,
            sha256_hex(body),
            self.region,
            self.service,
            credentials,
            datetime.now(timezone.utc),
        )
        request = urllib.request.Request(url, data=body if method in ("PUT", "POST") else None, method=method)
        for name, value in signed.items():
            request.add_header(name, value)
        try:
            with urllib.request.urlopen(request, timeout=TIMEOUT_S) as response:
                return Response(response.status, dict(response.headers.items()), response.read())
        except urllib.error.HTTPError as exc:
            payload = exc.read()
            code, message = _error_code(payload)
            raise AwsError(operation, exc.code, code or exc.reason, message) from None
        except (urllib.error.URLError, OSError) as exc:
            raise AwsError(operation, 0, "ConnectionError", str(exc)) from None

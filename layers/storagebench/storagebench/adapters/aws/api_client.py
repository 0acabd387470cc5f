"""A client of a deployed stack's HTTP API: SigV4-signed calls with the caller's AWS credentials.

The API URL is the stack's CloudFormation output ``ApiUrl`` (or given). Calls go through the
standard library's HTTP client; botocore only signs them (service ``execute-api``).
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from typing import Any
from urllib.parse import urlencode, urlsplit

API_URL_OUTPUT = "ApiUrl"
TIMEOUT_S = 35  # the API answers within 30 s (its integration timeout)


class ApiClientError(RuntimeError):
    """The API could not be reached or named (no credentials, no stack, no output, network)."""


class ApiResponseError(RuntimeError):
    """The API answered with an error; ``status`` and ``error`` hold its error document."""

    def __init__(self, status: int, error: dict[str, Any]) -> None:
        self.status = status
        self.error = error
        details = [
            f"{d.get('field')}: {d.get('message')}"
            + (f" (got {json.dumps(d.get('value'))})" if d.get("value") is not None else "")
            for d in error.get("details") or []
        ]
        text = f"{status} {error.get('code', 'error')}: {error.get('message', '')}"
        if details and len(details) > 1:
            text += "\n  " + "\n  ".join(details)
        super().__init__(text)


def api_url_of_stack(stack: str, session: Any) -> str:
    """The ``ApiUrl`` output of a deployed stack."""
    from botocore.exceptions import BotoCoreError, ClientError  # type: ignore[import-untyped, unused-ignore]

    try:
        stacks = session.client("cloudformation").describe_stacks(StackName=stack)["Stacks"]
    except ClientError as exc:
        raise ApiClientError(f"cannot read stack {stack!r}: {exc}") from exc
    except BotoCoreError as exc:
        raise ApiClientError(f"cannot reach CloudFormation for stack {stack!r}: {exc}") from exc
    outputs = {o["OutputKey"]: o["OutputValue"] for s in stacks for o in s.get("Outputs") or []}
    if API_URL_OUTPUT not in outputs:
        raise ApiClientError(
            f"stack {stack!r} has no {API_URL_OUTPUT} output "
            f"(outputs: {', '.join(sorted(outputs)) or 'none'}); is it a storagebench stack with the API?"
        )
    return str(outputs[API_URL_OUTPUT]).rstrip("/")


class StackApi:
    def __init__(self, base_url: str, session: Any, region: str | None = None) -> None:
        parts = urlsplit(base_url)
        if parts.scheme not in ("https", "http") or not parts.netloc:
            raise ApiClientError(
                f"--api-url {base_url!r} is not an http(s) URL such as https://abc.execute-api.us-east-1.amazonaws.com"
            )
        self.base_url = base_url.rstrip("/")
        self.session = session
        # The region the API lives in signs the call: its host says, else --region, else the profile's
        self.region = _region_of(parts.netloc) or region or session.region_name
        if not self.region:
            raise ApiClientError("no AWS region: pass --region or set AWS_REGION")
        credentials = session.get_credentials()
        if credentials is None:
            raise ApiClientError("no AWS credentials found (aws configure, AWS_PROFILE or the environment)")
        self.credentials = credentials

    def call(
        self,
        method: str,
        path: str,
        query: dict[str, Any] | None = None,
        body: Any = None,
        headers: dict[str, str] | None = None,
    ) -> tuple[int, Any]:
        """Send one signed request (``headers`` are signed too); (status, JSON) for 2xx,
        ApiResponseError for an error answer."""
        from botocore.auth import SigV4Auth  # type: ignore[import-untyped, unused-ignore]
        from botocore.awsrequest import AWSRequest  # type: ignore[import-untyped, unused-ignore]

        params = {k: _text(v) for k, v in (query or {}).items() if v is not None}
        url = self.base_url + path + (f"?{urlencode(params)}" if params else "")
        data = json.dumps(body).encode() if body is not None else None
        sent = {**(headers or {}), **({"Content-Type": "application/json"} if data is not None else {})}
        signed = AWSRequest(method=method, url=url, data=data, headers=sent)
        SigV4Auth(self.credentials.get_frozen_credentials(), "execute-api", self.region).add_auth(signed)
        request = urllib.request.Request(url, data=data, method=method, headers=dict(signed.headers.items()))
        try:
            with urllib.request.urlopen(request, timeout=TIMEOUT_S) as response:
                return response.status, _json(response.read())
        except urllib.error.HTTPError as exc:
            document = _json(exc.read())
            error = document.get("error") if isinstance(document, dict) else None
            if not isinstance(error, dict):  # API Gateway's own answers (403 signature, 429) are {"message"}
                message = document.get("message") if isinstance(document, dict) else None
                error = {"code": "http_error", "message": str(message or exc.reason), "details": []}
            raise ApiResponseError(exc.code, error) from None
        except (urllib.error.URLError, TimeoutError, OSError) as exc:
            raise ApiClientError(f"cannot reach {self.base_url}: {getattr(exc, 'reason', exc)}") from exc


def _text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _json(raw: bytes) -> Any:
    if not raw:
        return {}
    try:
        return json.loads(raw)
    except ValueError:
        return {"message": raw[:200].decode("utf-8", "replace")}


def _region_of(host: str) -> str | None:
    """abc.execute-api.<region>.amazonaws.com -> <region>."""
    parts = host.split(".")
    return parts[2] if len(parts) > 3 and parts[1] == "execute-api" else None

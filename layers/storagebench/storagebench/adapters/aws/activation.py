"""The activation key of a Storage Gateway appliance, from its HTTP endpoint.

``GET http://<appliance-ip>/?activationRegion=<region>`` answers with a redirect whose Location
carries ``activationKey=<key>`` in its query (docs: "Getting an activation key for your gateway").
The appliance is reachable only inside the VPC, so on AWS this runs in the activator function; in
tests it hits a server on 127.0.0.1. Redirects are read, never followed.
"""

from __future__ import annotations

import http.client
import json
import socket
from collections.abc import Callable
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

from storagebench.adapters.aws.errors import aws_call
from storagebench.core.errors import NotYetConsistentError, ProvisioningError

REDIRECTS = (301, 302, 303, 307, 308)


class HttpActivationKeys:
    """``ActivationKeys`` over plain HTTP (the appliance serves port 80 only)."""

    def __init__(
        self, port: int = 80, timeout_s: float = 10.0, resolve: Callable[[str], str] | None = None
    ) -> None:
        self.port = port
        self.timeout_s = timeout_s
        self.resolve = resolve or (lambda ip: ip)  # tests map the appliance's address to 127.0.0.1

    def fetch(self, appliance_ip: str, region: str) -> str:
        host = self.resolve(appliance_ip)
        path = "/?" + urlencode({"activationRegion": region})
        connection = http.client.HTTPConnection(host, self.port, timeout=self.timeout_s)
        try:
            connection.request("GET", path)
            response = connection.getresponse()
            status, location = response.status, response.getheader("Location") or ""
            response.read()
        except (TimeoutError, ConnectionError, socket.gaierror, OSError) as exc:
            raise NotYetConsistentError(
                f"appliance {appliance_ip} does not answer on HTTP yet: {exc}"
            ) from None
        finally:
            connection.close()
        if status >= 500:
            raise NotYetConsistentError(f"appliance {appliance_ip} answered HTTP {status} (still starting)")
        if status not in REDIRECTS:
            raise ProvisioningError(
                f"activation refused: appliance {appliance_ip} answered HTTP {status} without a redirect"
            )
        query = parse_qs(urlsplit(location).query)
        keys = query.get("activationKey") or []
        if not keys or not keys[0]:
            why = (query.get("errorMessage") or query.get("error") or ["no activationKey in the redirect"])[0]
            raise ProvisioningError(f"activation refused by appliance {appliance_ip}: {why}")
        return keys[0]


class InvokedActivationKeys:
    """``ActivationKeys`` through the activator function (functions/activator), which runs in the
    VPC with a security group the appliance admits on port 80; Lambdas outside the VPC cannot reach
    the appliance. The function's error type (NotYetConsistentError, ProvisioningError) carries over."""

    def __init__(self, lambda_client: Any, function_name: str) -> None:
        self.client = lambda_client
        self.function_name = function_name

    def fetch(self, appliance_ip: str, region: str) -> str:
        payload = json.dumps({"appliance_ip": appliance_ip, "region": region}).encode()
        with aws_call(f"invoke {self.function_name} for {appliance_ip}", ProvisioningError):
            answer = self.client.invoke(FunctionName=self.function_name, Payload=payload)
        body = json.loads(answer["Payload"].read() or b"null")
        if answer.get("FunctionError"):
            kind = body.get("errorType") if isinstance(body, dict) else None
            message = body.get("errorMessage") if isinstance(body, dict) else body
            error = NotYetConsistentError if kind == NotYetConsistentError.__name__ else ProvisioningError
            raise error(f"activator {self.function_name}: {kind or 'error'}: {message}")
        key = body.get("activation_key") if isinstance(body, dict) else None
        if not isinstance(key, str) or not key:
            raise ProvisioningError(
                f"activator {self.function_name} answered without an activation_key: {body!r}"
            )
        return key

"""The activation key of a Storage Gateway appliance, from its HTTP endpoint.

``GET http://<appliance-ip>/?activationRegion=<region>`` answers with a redirect whose Location
carries ``activationKey=<key>`` in its query (docs: "Getting an activation key for your gateway").
The appliance is reachable only inside the VPC, so on AWS this runs in the activator function; in
tests it hits a server on 127.0.0.1. Redirects are read, never followed.
"""

from __future__ import annotations

import http.client
import socket
from collections.abc import Callable
from urllib.parse import parse_qs, urlencode, urlsplit

from storagebench.workflow.errors import NotYetConsistentError, ProvisioningError

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

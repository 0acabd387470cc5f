"""The instance role's credentials, the way the SDKs find them on EC2: IMDSv2, token first.

``AWS_ACCESS_KEY_ID``/``AWS_SECRET_ACCESS_KEY`` (with ``AWS_SESSION_TOKEN``) win when set, as in
every SDK; otherwise the metadata service at ``AWS_EC2_METADATA_SERVICE_ENDPOINT`` (default
``http://169.254.169.254``) gives a session token (PUT, 6 h), the role's name and its keys.
Credentials are refreshed five minutes before they expire: a long plan outlives one set.
"""

from __future__ import annotations

import json
import os
import threading
import urllib.error
import urllib.request
from datetime import datetime, timedelta, timezone
from typing import Callable, Mapping, Optional

from storagebench.agent.aws.sigv4 import Credentials

DEFAULT_ENDPOINT = "http://169.254.169.254"
TOKEN_TTL_S = 21_600
REFRESH_BEFORE = timedelta(minutes=5)
TIMEOUT_S = 5.0


class CredentialsError(RuntimeError):
    """No credentials: neither the environment nor the metadata service gave any."""


def _utc_now() -> datetime:
    return datetime.now(timezone.utc)


def _parse_time(value: str) -> datetime:
    return datetime.strptime(value, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=timezone.utc)


class InstanceMetadata:
    """IMDSv2: every read carries a session token obtained with PUT /latest/api/token."""

    def __init__(self, endpoint: Optional[str] = None, environ: Optional[Mapping[str, str]] = None) -> None:
        env = os.environ if environ is None else environ
        self.endpoint = (endpoint or env.get("AWS_EC2_METADATA_SERVICE_ENDPOINT") or DEFAULT_ENDPOINT).rstrip(
            "/"
        )

    def _token(self) -> str:
        request = urllib.request.Request(
            self.endpoint + "/latest/api/token",
            method="PUT",
            headers={"X-aws-ec2-metadata-token-ttl-seconds": str(TOKEN_TTL_S)},
        )
        with urllib.request.urlopen(request, timeout=TIMEOUT_S) as response:
            return str(response.read().decode("utf-8"))

    def get(self, path: str) -> str:
        try:
            token = self._token()
            request = urllib.request.Request(
                self.endpoint + path, headers={"X-aws-ec2-metadata-token": token}
            )
            with urllib.request.urlopen(request, timeout=TIMEOUT_S) as response:
                return str(response.read().decode("utf-8"))
        except (urllib.error.URLError, OSError) as exc:
            raise CredentialsError(f"instance metadata {self.endpoint}{path}: {exc}") from exc

    def role_credentials(self) -> Credentials:
        base = "/latest/meta-data/iam/security-credentials/"
        roles = [line.strip() for line in self.get(base).splitlines() if line.strip()]
        if not roles:
            raise CredentialsError(f"{self.endpoint}{base} names no role: is an instance profile attached?")
        try:
            document = json.loads(self.get(base + roles[0]))
            if document.get("Code", "Success") != "Success":
                raise CredentialsError(
                    f"role {roles[0]}: {document.get('Code')} {document.get('Message', '')}"
                )
            return Credentials(
                access_key=str(document["AccessKeyId"]),
                secret_key=str(document["SecretAccessKey"]),
                token=str(document["Token"]),
                expires_at=_parse_time(str(document["Expiration"])),
            )
        except (ValueError, KeyError, TypeError) as exc:
            raise CredentialsError(f"role {roles[0]}: unreadable credentials document ({exc})") from exc


class CredentialSource:
    """Credentials for each request: from the environment, else the metadata service (refreshed)."""

    def __init__(
        self,
        environ: Optional[Mapping[str, str]] = None,
        metadata: Optional[InstanceMetadata] = None,
        clock: Callable[[], datetime] = _utc_now,
    ) -> None:
        self.environ = os.environ if environ is None else environ
        self.metadata = metadata or InstanceMetadata(environ=self.environ)
        self.clock = clock
        self._cached: Optional[Credentials] = None
        self._lock = threading.Lock()

    def get(self) -> Credentials:
        key, secret = self.environ.get("AWS_ACCESS_KEY_ID"), self.environ.get("AWS_SECRET_ACCESS_KEY")
        if key and secret:
            return Credentials(key, secret, self.environ.get("AWS_SESSION_TOKEN") or None)
        with self._lock:
            cached = self._cached
            if cached is None or (
                cached.expires_at is not None and cached.expires_at - REFRESH_BEFORE <= self.clock()
            ):
                self._cached = cached = self.metadata.role_credentials()
            return cached

"""AWS Signature Version 4 for one request (the header form), as the SigV4 reference specifies it.

https://docs.aws.amazon.com/IAM/latest/UserGuide/create-signed-request.html; tested against the
AWS SigV4 test suite's published vectors (tests/unit/agent/test_sigv4.py).
"""

from __future__ import annotations

import hashlib
import hmac
import urllib.parse
from dataclasses import dataclass
from datetime import datetime
from typing import Dict, Optional

ALGORITHM = "AWS4-HMAC-SHA256"
UNSIGNED = "UNSIGNED-PAYLOAD"


@dataclass(frozen=True)
class Credentials:
    access_key: str
    secret_key: str
    token: Optional[str] = None
    expires_at: Optional[datetime] = None  # None: long-lived keys


def _hmac(key: bytes, message: str) -> bytes:
    return hmac.new(key, message.encode("utf-8"), hashlib.sha256).digest()


def _quote(value: str, safe: str = "-_.~") -> str:
    return urllib.parse.quote(value, safe=safe)


def canonical_query(query: str) -> str:
    pairs = urllib.parse.parse_qsl(query, keep_blank_values=True)
    encoded = sorted((_quote(k), _quote(v)) for k, v in pairs)
    return "&".join(f"{k}={v}" for k, v in encoded)


def canonical_path(path: str, service: str) -> str:
    """S3 signs the path exactly as sent (the caller encodes each key once); other services
    encode the already-encoded path again, as the SigV4 reference specifies."""
    if not path:
        return "/"
    if service == "s3":
        return path
    return _quote(path, safe="/-_.~")


def sign(
    method: str,
    url: str,
    headers: Dict[str, str],
    payload_hash: str,
    region: str,
    service: str,
    credentials: Credentials,
    now: datetime,
) -> Dict[str, str]:
    """The headers to send: ``headers`` plus host, x-amz-date, the token and Authorization."""
    parts = urllib.parse.urlsplit(url)
    amz_date = now.strftime("%Y%m%dT%H%M%SZ")
    scope_date = amz_date[:8]
    signed = {k.lower(): " ".join(str(v).strip().split()) for k, v in headers.items()}
    signed["host"] = parts.netloc
    signed["x-amz-date"] = amz_date
    if service == "s3":
        signed["x-amz-content-sha256"] = payload_hash
    if credentials.token:
        signed["x-amz-security-token"] = credentials.token
    names = sorted(signed)
    canonical_headers = "".join(f"{name}:{signed[name]}\n" for name in names)
    signed_names = ";".join(names)
    canonical = "\n".join(
        (
            method.upper(),
            canonical_path(parts.path, service),
            canonical_query(parts.query),
            canonical_headers,
            signed_names,
            payload_hash,
        )
    )
    scope = f"{scope_date}/{region}/{service}/aws4_request"
    to_sign = "\n".join((ALGORITHM, amz_date, scope, hashlib.sha256(canonical.encode("utf-8")).hexdigest()))
    key = _hmac(("AWS4" + credentials.secret_key).encode("utf-8"), scope_date)
    for part in (region, service, "aws4_request"):
        key = _hmac(key, part)
    signature = hmac.new(key, to_sign.encode("utf-8"), hashlib.sha256).hexdigest()
    out = dict(headers)
    for name in ("x-amz-date", "x-amz-content-sha256", "x-amz-security-token"):
        if name in signed:
            out[name] = signed[name]
    out["Authorization"] = (
        f"{ALGORITHM} Credential={credentials.access_key}/{scope}, "
        f"SignedHeaders={signed_names}, Signature={signature}"
    )
    return out


def sha256_hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()

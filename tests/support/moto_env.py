"""The environment a test on moto runs in."""

from __future__ import annotations

import pytest

HOST_SETTINGS = ("AWS_PROFILE", "AWS_REGION", "AWS_ENDPOINT_URL")


def moto_credentials(monkeypatch: pytest.MonkeyPatch, region: str, **extra: str) -> None:
    """Credentials moto accepts, ``region`` as the default and the ``extra`` variables; none of the
    host's profile, region or endpoint override, so no call can leave for a real account."""
    for name, value in {
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        "AWS_DEFAULT_REGION": region,
        **extra,
    }.items():
        monkeypatch.setenv(name, value)
    for name in HOST_SETTINGS:
        monkeypatch.delenv(name, raising=False)

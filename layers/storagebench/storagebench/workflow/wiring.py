"""Which adapters the handlers use: AWS from the environment, or what local mode injects.

Built once per Lambda container and reused across invocations (clients are expensive).
"""

from __future__ import annotations

import os

from storagebench.workflow.settings import Guardrails
from storagebench.workflow.steps import Services

_services: Services | None = None


def configure(services: Services | None) -> None:
    """Local mode (and tests) put their own ports here; None goes back to the environment."""
    global _services  # noqa: PLW0603 - one container-wide cache, as Lambda reuses its process
    _services = services


def services() -> Services:
    global _services  # noqa: PLW0603
    if _services is None:
        _services = _from_environment()
    return _services


def _from_environment() -> Services:
    from storagebench.adapters.aws import build_services

    return build_services(Guardrails.from_env(), os.environ)

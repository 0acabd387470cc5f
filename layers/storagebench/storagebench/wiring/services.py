"""Which adapters the handlers use: AWS from the environment, or what local mode injects.

Built once per Lambda container and reused across invocations (clients are expensive).
"""

from __future__ import annotations

import os

from storagebench.core.guardrails import Guardrails
from storagebench.wiring.lazy import Lazy
from storagebench.workflow.ports import Services


def _from_environment() -> Services:
    from storagebench.adapters.aws import build_services

    return build_services(Guardrails.from_env(), os.environ)


_services: Lazy[Services] = Lazy(_from_environment)
configure = _services.configure  # local mode and tests put their own ports here
services = _services.get

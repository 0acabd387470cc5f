"""Which janitor the handler uses: the AWS one from the environment, or one tests put here.

Built once per Lambda container and reused by the next scheduled invocation.
"""

from __future__ import annotations

from storagebench.janitor.service import Janitor
from storagebench.wiring.lazy import Lazy


def _from_environment() -> Janitor:
    from storagebench.adapters.aws.sweep import build_janitor

    return build_janitor()


_janitor: Lazy[Janitor] = Lazy(_from_environment)
configure = _janitor.configure  # tests (and local tools) put their own janitor here
janitor = _janitor.get

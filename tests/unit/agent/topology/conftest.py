"""Fixtures of the multi-machine agent tests: machines on their own loopback addresses, real agents.

Linux routes all of 127/8 to lo, so each machine gets its own address (127.<a>.<b>.<n>, random per
test so parallel suites never meet) and every agent binds the same port numbers on it, as on AWS.
Stdlib and pytest only: these run under Python 3.9 too (``make test-agent-py39``).
"""

from __future__ import annotations

import pytest
from machines import Cluster


@pytest.fixture
def cluster(tmp_path):  # type: ignore[no-untyped-def]
    made = Cluster(tmp_path)
    yield made
    made.close()

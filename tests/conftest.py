"""Every tier: moto 5.2.5's two memory leaks closed, and the garbage collector tuned to a test session.

Each ``mock_aws`` start resets moto's backends, yet two caches keep every old one alive: the unbounded
``@cache`` on ``Subnet._base_avail_ip_iterator`` (keyed by the subnet, which holds its EC2 backend and
its ~1,300 AMIs, snapshots and volumes) and the ``@lru_cache`` on ``AccountSpecificBackend.
_generate_regions`` (keyed by the backend). The heap grew by a whole EC2 backend a test, and Python's
full collections over it became a third of the unit tier's time (tests spent 1.7 s in setup).
Even without the leak, each moto EC2 backend allocates ~100,000 objects, enough to set off a full
collection over everything imported (botocore's models, pydantic's schemas, hypothesis...) every test
or two: what is alive once the tests are collected is frozen out of the collector's sight, and a
collection waits for 50,000 new objects rather than 700 (unit and IAM tiers; a session holding
integration, e2e or browser tests keeps the defaults). Nothing a test checks depends on when it runs.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

try:
    from moto.core.base_backend import AccountSpecificBackend
    from moto.ec2.models.subnets import Subnet
except ImportError:  # a tier run without moto (it has nothing to leak)
    AccountSpecificBackend = Subnet = None


def _base_avail_ip_iterator(self: Any) -> Any:
    """As moto's: one ``hosts()`` iterator per subnet for its life, held by the subnet, not a global cache."""
    hosts = self.__dict__.get("_sb_hosts")
    if hosts is None:
        hosts = self.__dict__["_sb_hosts"] = self.cidr.hosts()
    return hosts


if Subnet is not None:
    Subnet._base_avail_ip_iterator = _base_avail_ip_iterator


@pytest.fixture(autouse=True)
def _moto_forgets_old_backends() -> Iterator[None]:
    yield
    if AccountSpecificBackend is not None:
        # a pure memo of botocore's region names: clearing it is always safe, even with a mock running
        AccountSpecificBackend._generate_regions.cache_clear()


# The timed tiers (runs against deadlines and heartbeats, in-process servers) keep the interpreter's defaults.
_DEFAULT_GC_TIERS = tuple(Path(__file__).parent / tier for tier in ("integration", "e2e", "browser"))


def pytest_collection_finish(session: pytest.Session) -> None:
    if any(tier in item.path.parents for item in session.items for tier in _DEFAULT_GC_TIERS):
        return
    gc.collect()
    gc.freeze()
    gc.set_threshold(50_000, 10, 10)


# Summary lines a tier's conftest prints (tests/unit/hostile): under xdist its workers hand them over
# in ``workeroutput["summary_lines"]`` and the controller, which runs no test, prints them.
_RELAYED_LINES: list[str] = []


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node: Any, error: Any) -> None:
    _RELAYED_LINES.extend(getattr(node, "workeroutput", {}).get("summary_lines", []))


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    for line in _RELAYED_LINES:
        terminalreporter.write_line(line)

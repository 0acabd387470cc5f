"""The local instances' security group: only root's sockets reach their addresses.

On AWS a benchmark instance's ports (the agent's control server, ``fio --server`` on the clients
of a multi-client config) are reached only from inside the run's security groups. Local
instances answer on this machine's loopback (``moto_ec2.loopback_address``), where every user
could connect: ``fio --server`` runs as root and has no authentication, so any local user could
run a job file with ``exec_prerun`` as root. The fence is an nftables table that rejects every
packet to the local subnet from a socket not owned by root (the agents, the local SSM agent and
the workflow are root). One table per session, named by its process and a serial, so sessions side by
side each hold their own and a killed session's table is removed by the next one.
"""

from __future__ import annotations

import ipaddress
import itertools
import os
import shutil
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

TABLE_PREFIX = "storagebench_fence_"
_SERIAL = itertools.count(1)  # sessions of one process side by side each hold their own table


class FenceError(RuntimeError):
    """The fence could not be put up (or taken down): local instances would be open to every user."""


def fence_unavailable() -> str | None:
    """Why this machine cannot fence local instances, or None."""
    if os.geteuid() != 0:
        return "the fence needs root (nftables), and so do the agents it protects"
    if shutil.which("nft") is None:
        return "nft is missing (apt-get install nftables; make setup installs it)"
    return None


def _nft(*args: str, script: str | None = None) -> str:
    done = subprocess.run(
        ["nft", *args], input=script, capture_output=True, text=True, timeout=30, check=False
    )
    if done.returncode != 0:
        raise FenceError(f"nft {' '.join(args)} exited {done.returncode}: {done.stderr.strip()}")
    return done.stdout


def fence_tables() -> list[str]:
    """The fence tables on this machine (any session's)."""
    listing = _nft("list", "tables", "ip")
    names = [line.split()[-1] for line in listing.splitlines() if line.startswith("table ip ")]
    return [name for name in names if name.startswith(TABLE_PREFIX)]


def _owner_alive(table: str) -> bool:
    pid = table[len(TABLE_PREFIX) :].split("_", maxsplit=1)[0]
    return pid.isdigit() and Path(f"/proc/{pid}").exists()


def fence_script(table: str, cidr: str) -> str:
    try:
        network = ipaddress.IPv4Network(cidr)
    except ValueError as exc:  # named here, before nft sees it
        raise ValueError(f"local subnet {cidr!r}: {exc}") from exc
    if not network.subnet_of(ipaddress.IPv4Network("127.0.0.0/8")):
        raise ValueError(f"local subnet {cidr!r}: local instances live in 127.0.0.0/8")
    return (
        f"table ip {table} {{\n"
        "  chain output {\n"
        "    type filter hook output priority filter; policy accept;\n"
        f"    ip daddr {network} meta skuid != 0 counter reject\n"
        "  }\n"
        "}\n"
    )


@contextmanager
def loopback_fence(cidr: str) -> Iterator[str]:
    """Reject every non-root connection to ``cidr`` while the block runs; yields the table name."""
    reason = fence_unavailable()
    if reason is not None:
        raise FenceError(f"cannot fence the local instances on {cidr}: {reason}")
    for stale in fence_tables():
        if not _owner_alive(stale):
            _nft("delete", "table", "ip", stale)
    table = f"{TABLE_PREFIX}{os.getpid()}_{next(_SERIAL)}"
    _nft("-f", "-", script=fence_script(table, cidr))
    try:
        yield table
    finally:
        _nft("delete", "table", "ip", table)

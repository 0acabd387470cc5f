"""The dry run's network lines: each target reached over the clients' network, its ceiling, and a
warning when the clients' network caps below the storage (``kinds.reach.network_checks``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rich.console import Console
from rich.text import Text


def print_network(out: Console, err: Console, checks: Sequence[dict[str, Any]]) -> None:
    """``network: <config>/<target>: ...`` on stdout per check; ``warning: ...`` on stderr per cap."""
    for check in checks:
        out.print(Text(f"  network: {check['ceiling']}"), highlight=False, soft_wrap=True)
    for check in checks:
        if check.get("warning"):
            err.print(
                Text.assemble(("warning: ", "yellow"), check["warning"]), highlight=False, soft_wrap=True
            )

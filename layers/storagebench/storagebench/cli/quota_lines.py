"""The dry run's EC2 vCPU quota lines: per quota, the vCPUs needed at once against the quota.

One line per quota the request draws on (``quotas.check.QuotaCheck`` dumped in the preview's
``vcpu_quotas``), after a line naming where the values were read. What each status means for the
run (a refusal, a warning) is printed with the other problems and notes.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rich.console import Console
from rich.text import Text

STYLE = {"ok": "green", "near": "yellow", "over": "bold red", "not-read": "yellow"}


def quota_line(line: Mapping[str, Any]) -> str:
    """``L-1216C47A Running On-Demand Standard (...) instances: 1,536 vCPUs needed at once (3 config(s)),
    quota 5 (recorded)``."""
    head = (
        f"{line['code']} {line['name']}: {line['needed_vcpus']:,} vCPUs needed at once "
        f"({line['configs_at_once']} config(s))"
    )
    quota = line.get("quota_vcpus")
    return head if quota is None else f"{head}, quota {quota:,.0f} ({line['origin']})"


def verdict(line: Mapping[str, Any]) -> str:
    """ok (12 %), 85 % of the quota, over the quota by 1,531, quota not read."""
    quota, needed = line.get("quota_vcpus"), line["needed_vcpus"]
    if line["status"] == "not-read" or quota is None:
        return "quota not read"
    if line["status"] == "over":
        return f"over the quota by {needed - quota:,.0f}"
    share = f"{needed / quota * 100:.0f} %"
    return f"ok ({share})" if line["status"] == "ok" else f"{share} of the quota"


def print_quotas(console: Console, check: Mapping[str, Any] | None) -> None:
    """Nothing when the quotas were not checked; else the source, then one line per quota."""
    if check is None:
        return
    console.print(Text.assemble(("vCPU quotas", "bold"), f" ({check['source']}):"), highlight=False)
    if not check["lines"]:
        console.print(Text("  no instance counted against a vCPU quota"), highlight=False)
    for line in check["lines"]:
        console.print(
            Text.assemble(f"  {quota_line(line)}: ", (verdict(line), STYLE[line["status"]])), highlight=False
        )

"""The dry run's and Plan's EC2 vCPU quota section: needs, the account's quotas, refusals and warnings.

A need over its quota is a refusal where the deployment launches on AWS (``QuotaPolicy.refuse``):
EC2 would refuse the launches mid-run, after the first configs' resources were paid for. A need of
80 % or more of its quota is a warning (the account's other instances count against it too), and so
is a quota that could not be read ("quota not read: ..."): the run is not blocked by a reader's
trouble.
"""

from __future__ import annotations

from typing import Any

from storagebench.core.launch import Purchase
from storagebench.quotas.check import QuotaCheck, QuotaLine, check_quotas
from storagebench.quotas.needs import vcpu_needs
from storagebench.quotas.ports import QuotaPolicy
from storagebench.request.model import BenchmarkRequest


def quota_check(
    request: BenchmarkRequest, concurrency: int, default_purchase: Purchase, policy: QuotaPolicy
) -> QuotaCheck:
    """Every quota the request draws on, its need at ``concurrency`` configs at once, and its value."""
    needs, notes = vcpu_needs(request, concurrency, default_purchase)
    return check_quotas(needs, policy.reader, policy.refuse, notes)


def _configs(line: QuotaLine) -> str:
    ranked = sorted(line.per_config.items(), key=lambda item: -item[1])
    return ", ".join(f"{config} {vcpus:,}" for config, vcpus in ranked)


def _remedy(line: QuotaLine) -> str:
    increase = f"request an increase of {line.code} to at least {line.needed_vcpus:,} (Service Quotas)"
    if line.fitting_configs:
        return f"{increase}, or run at most {line.fitting_configs} config(s) at once (max_concurrency)"
    largest, vcpus = max(line.per_config.items(), key=lambda item: item[1])
    return f"{increase}: even {largest} alone needs {vcpus:,}"


def over_quota(check: QuotaCheck) -> list[dict[str, Any]]:
    """The refusals (``GuardrailProblem`` fields) of a check that refuses: one per quota exceeded."""
    if not check.refuses:
        return []
    return [
        {
            "field": "configs",
            "limit": f"{line.name} ({line.code})",
            "limit_value": line.quota_vcpus,
            "value": line.needed_vcpus,
            "message": f"{line.needed_vcpus:,} vCPUs needed at once ({line.configs_at_once} config(s) at "
            f"once; per config: {_configs(line)}), more than the account's {line.name} quota "
            f"{line.code} of {line.quota_vcpus:,.0f} vCPUs ({check.source}): {_remedy(line)}",
        }
        for line in check.lines
        if line.status == "over"
    ]


def quota_notes(check: QuotaCheck) -> list[str]:
    """The warnings: near a quota, a quota not read, an excess local mode only reports, and the
    machines that could not be counted."""
    notes: list[str] = []
    for line in check.lines:
        if line.status == "near":
            notes.append(
                f"vCPU quota {line.code} ({line.name}): {line.needed_vcpus:,} vCPUs needed at once are "
                f"{line.needed_vcpus / (line.quota_vcpus or 1) * 100:.0f} % of its {line.quota_vcpus:,.0f} "
                f"({check.source}); the account's other running instances count against it too, so "
                "launches may fail: request an increase before the run"
            )
        elif line.status == "not-read":
            notes.append(
                f"quota not read: {line.reason}; the {line.needed_vcpus:,} {line.market} vCPUs the run "
                f"needs at once under {line.code} ({line.name}) are not checked"
            )
        elif line.status == "over" and not check.refuses:
            notes.append(
                f"vCPU quota {line.code} ({line.name}): {line.needed_vcpus:,} vCPUs needed at once, more "
                f"than its {line.quota_vcpus:,.0f} ({check.source}); local mode launches nothing on AWS, "
                f"but a stack in an account with this quota refuses the run: {_remedy(line)}"
            )
    return notes + check.notes

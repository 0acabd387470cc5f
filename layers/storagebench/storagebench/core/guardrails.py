"""Stack-level limits and defaults the workflow enforces (from environment variables)."""

from __future__ import annotations

import os
import re
from collections.abc import Mapping

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from storagebench.core.launch import DEFAULT_PURCHASE, PURCHASES, Purchase

# What a stack needs to provision File Gateways (template.yaml sets them on Provision, CheckReady,
# Cleanup); without any of them the Plan step and the dry run refuse file_gateway targets.
GATEWAY_VARIABLES = (
    "GATEWAY_SECURITY_GROUP_ID",
    "SHARE_BUCKET",
    "SHARE_ROLE_ARN",
    "ACTIVATOR_FUNCTION",
)


def _no_gateway_settings(missing: list[str]) -> str:
    return f"this stack has no File Gateway settings ({', '.join(missing)} unset)"


class Guardrails(BaseModel):
    """Limits a deployment sets; a request over any of them is refused before anything launches."""

    model_config = ConfigDict(frozen=True)

    # request.model.MAX_CONFIGS (a unit test keeps them equal): past 40, the Distributed Map runs them
    max_configs_per_run: int = Field(default=12, ge=1, le=500)
    max_concurrency: int = Field(default=4, ge=1, le=40)
    allowed_instance_types: tuple[str, ...] = ("*",)
    heartbeat_max_s: int = Field(default=300, ge=30, le=600)
    ready_timeout_s: int = Field(default=1200, ge=60, le=7200)
    # Planning guardrails (planning.preview): instances at once (the Map's concurrency is capped to
    # it), the estimated cost of a run and its longest duration (both refuse the request).
    max_concurrent_instances: int = Field(default=20, ge=1, le=1000)
    max_run_cost_usd: float = Field(default=500.0, gt=0, le=1_000_000)
    max_run_hours: float = Field(default=24.0, gt=0, le=168)
    # The stack's budget (api.budget): the upper bounds of the runs in progress together, and of the
    # runs started in one UTC day; a start past either is refused with the figures.
    max_concurrent_spend_usd: float = Field(default=2000.0, gt=0, le=10_000_000)
    max_daily_spend_usd: float = Field(default=5000.0, gt=0, le=10_000_000)
    # Requests that run shell on the instance (hooks, command workloads, custom fio job files):
    # off unless the stack's AllowPrivilegedRuns parameter turns them on.
    allow_privileged: bool = False
    # How configs that say nothing (and whose request says nothing) buy their instances: the stack's
    # DefaultPurchase parameter (request.purchase explains the three values).
    default_purchase: Purchase = DEFAULT_PURCHASE
    # Target kinds this deployment cannot provision, with why (local mode: no Storage Gateway emulator).
    unprovisionable_kinds: dict[str, str] = Field(
        default_factory=lambda: {"file_gateway": _no_gateway_settings(list(GATEWAY_VARIABLES))}
    )

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> Guardrails:
        env = os.environ if env is None else env
        values: dict[str, object] = {}
        mapping = {
            "MAX_CONFIGS_PER_RUN": "max_configs_per_run",
            "MAX_CONCURRENCY": "max_concurrency",
            "AGENT_HEARTBEAT_SECONDS": "heartbeat_max_s",
            "READY_TIMEOUT_SECONDS": "ready_timeout_s",
            "MAX_CONCURRENT_INSTANCES": "max_concurrent_instances",
            "MAX_RUN_COST_USD": "max_run_cost_usd",
            "MAX_RUN_HOURS": "max_run_hours",
            "MAX_CONCURRENT_SPEND_USD": "max_concurrent_spend_usd",
            "MAX_DAILY_SPEND_USD": "max_daily_spend_usd",
        }
        for variable, field in mapping.items():
            if env.get(variable):
                values[field] = env[variable]
        if env.get("ALLOWED_INSTANCE_TYPES"):
            values["allowed_instance_types"] = tuple(
                t.strip() for t in env["ALLOWED_INSTANCE_TYPES"].split(",") if t.strip()
            )
        if env.get("ALLOW_PRIVILEGED_RUNS"):
            flag = env["ALLOW_PRIVILEGED_RUNS"].strip().lower()
            if flag not in ("true", "false"):
                raise ValueError(f"stack setting allow_privileged: true or false (got {flag!r})")
            values["allow_privileged"] = flag == "true"
        if env.get("DEFAULT_PURCHASE", "").strip():
            purchase = env["DEFAULT_PURCHASE"].strip()
            if purchase not in PURCHASES:
                raise ValueError(
                    f"stack setting default_purchase: one of {', '.join(PURCHASES)} (got {purchase!r})"
                )
            values["default_purchase"] = purchase
        missing = [v for v in GATEWAY_VARIABLES if not env.get(v, "").strip()]
        values["unprovisionable_kinds"] = {"file_gateway": _no_gateway_settings(missing)} if missing else {}
        try:
            return cls.model_validate(values)
        except ValidationError as exc:
            first = exc.errors()[0]
            raise ValueError(
                f"stack setting {first['loc'][0]}: {first['msg']} (got {first.get('input')!r})"
            ) from None

    def allows(self, instance_type: str) -> bool:
        """As IAM's StringLike on ec2:InstanceType reads the same list: ``*`` and ``?`` are wildcards
        (``c5.*``), case-sensitive."""
        return any(_string_like(pattern, instance_type) for pattern in self.allowed_instance_types)


def _string_like(pattern: str, value: str) -> bool:
    """IAM's StringLike: ``*`` any run of characters, ``?`` one; nothing else is special."""
    parts = (".*" if c == "*" else "." if c == "?" else re.escape(c) for c in pattern)
    return re.fullmatch("".join(parts), value, flags=re.DOTALL) is not None

"""From a validated request to agent plans: steps, target bindings (local or AWS)."""

from storagebench.planning.local import LocalOptions, LocalTargetError, local_targets
from storagebench.planning.plan import build_plan
from storagebench.planning.steps import plan_steps, target_context

__all__ = ["LocalOptions", "LocalTargetError", "build_plan", "local_targets", "plan_steps", "target_context"]

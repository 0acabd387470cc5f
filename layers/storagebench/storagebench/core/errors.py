"""Errors the workflow names: Step Functions retries and catches by these class names.

A Lambda handler that raises one of these reports it as ``errorType``; the state machine's
Retry blocks list the retryable ones with backoff, and everything else goes to the cleanup
branch. Adapters convert provider errors (botocore ClientError codes) into them.
"""

from __future__ import annotations


class WorkflowError(Exception):
    """Base of every error a workflow step raises on purpose."""


# ----------------------------------------------------------------- retried with backoff


class CapacityError(WorkflowError):
    """The provider has no capacity for this instance or volume type right now."""


class ThrottledError(WorkflowError):
    """The provider throttled us (request rate); retry later."""


class NotYetConsistentError(WorkflowError):
    """A resource just created is not visible yet (eventual consistency); retry shortly."""


class ResourceBusyError(WorkflowError):
    """A resource cannot be deleted yet (mount targets still there, a volume still attached)."""


RETRYABLE = ("CapacityError", "ThrottledError", "NotYetConsistentError", "ResourceBusyError")


# ----------------------------------------------------------------- not retried


class InvalidRequestError(WorkflowError):
    """The request failed validation: nothing is launched."""


class GuardrailError(WorkflowError):
    """The request is valid but over a limit the stack sets (configs, instance types, cost)."""


class ProvisioningError(WorkflowError):
    """A resource could not be created or entered a failed state (not a capacity issue)."""


class NotReadyError(WorkflowError):
    """The config did not become ready in time, or its instance died while starting."""


class AgentError(WorkflowError):
    """The agent could not be started, or its command failed."""


class CollectError(WorkflowError):
    """The agent's output is missing or unreadable."""


class DocumentError(WorkflowError):
    """A document the workflow keeps for itself (``runs/<run>/request.json``) is missing or is no
    longer what Plan wrote; the message starts with its key."""

    def __init__(self, key: str, problem: str = "unreadable") -> None:
        super().__init__(f"{key}: {problem}")
        self.key = key
        self.problem = problem


class DuplicateStartError(WorkflowError):
    """Another execution already claimed this scheduled occurrence: this one launches nothing."""


class RunStoppedError(WorkflowError):
    """The run is being stopped: the step released what it had just made instead of handing it on."""


# ----------------------------------------------------------------- Spot interruptions


class SpotInterruptionError(WorkflowError):
    """EC2 reclaims the config's Spot instance: the agent reported the two-minute notice (the cause is
    the notice as JSON), or the instance is terminated with ``Server.SpotInstanceTermination``."""


class ConfigInterruptedError(WorkflowError):
    """Raised by Cleanup once an interrupted attempt is collected and released: the state machine
    catches it and provisions the config again for the repetitions not yet measured."""

"""botocore errors -> the workflow's errors, which Step Functions retries or catches by name.

``workflow_error`` is the one mapping: every adapter call goes through ``aws_call`` (or calls
``workflow_error`` itself after handling the codes it tolerates), so a retryable provider
condition always surfaces as the same retryable workflow error, and the botocore error stays
attached as ``__cause__``.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from botocore.exceptions import (  # type: ignore[import-untyped, unused-ignore]
    BotoCoreError,
    ClientError,
    HTTPClientError,
)
from botocore.exceptions import (
    ConnectionError as BotoConnectionError,
)

from storagebench.core.errors import (
    CapacityError,
    NotYetConsistentError,
    ProvisioningError,
    ResourceBusyError,
    ThrottledError,
    WorkflowError,
)

__all__ = [
    "BUSY",
    "CAPACITY",
    "NOT_YET_CONSISTENT",
    "THROTTLING",
    "ClientError",
    "aws_call",
    "error_code",
    "workflow_error",
]

CAPACITY = frozenset(
    {
        "InsufficientInstanceCapacity",
        "InsufficientVolumeCapacity",
        "InsufficientCapacity",
        "InsufficientHostCapacity",
        "InsufficientReservedInstanceCapacity",
        "InsufficientThroughputCapacity",  # EFS provisioned/elastic throughput in this AZ
        "UnsupportedAvailabilityZone",  # EFS one-zone in an AZ that does not offer it
    }
)
THROTTLING = frozenset(
    {
        "RequestLimitExceeded",
        "Throttling",
        "ThrottlingException",
        "ThrottledException",
        "ProvisionedThroughputExceededException",
        "TooManyRequestsException",
        "RequestThrottled",
        "RequestThrottledException",
        "SlowDown",
        "ThroughputLimitExceeded",
        # Server-side trouble that outlived botocore's own retries: retry later as well.
        "InternalError",
        "InternalFailure",
        "InternalServerError",
        "ServiceUnavailable",
        "ServiceUnavailableException",
        "Unavailable",
    }
)
NOT_YET_CONSISTENT = frozenset(
    {
        "InvalidInstanceID.NotFound",
        "InvalidVolume.NotFound",
        "InvalidInstanceId",  # SSM: the agent of a just-started instance has not registered yet
        "InvalidNetworkInterfaceID.NotFound",
    }
)
BUSY = frozenset(
    {
        "FileSystemInUse",
        "DependencyViolation",
        "VolumeInUse",
        "IncorrectState",
        "IncorrectFileSystemLifeCycleState",
        "IncorrectMountTargetState",
        "InvalidVolume.InUse",
        "ResourceInUseException",
    }
)


def error_code(exc: ClientError) -> str:
    return str(exc.response.get("Error", {}).get("Code", "Unknown"))


def _message(exc: ClientError) -> str:
    return str(exc.response.get("Error", {}).get("Message", "")).strip()


def _unsupported_in_zone(code: str, message: str) -> bool:
    """EC2 says ``Unsupported`` when an instance type is not offered in the subnet's zone."""
    lowered = message.lower()
    return code == "Unsupported" and (
        "availability zone" in lowered or "not supported in your requested" in lowered
    )


def _profile_not_propagated(code: str, message: str) -> bool:
    """A new instance profile is not visible to EC2 for a few seconds after IAM creates it."""
    lowered = message.lower()
    return code == "InvalidParameterValue" and (
        "iaminstanceprofile" in lowered or "instance profile" in lowered
    )


def workflow_error(
    exc: ClientError, action: str, default: type[WorkflowError] = ProvisioningError
) -> WorkflowError:
    """The workflow error for a botocore ClientError; the caller raises it ``from exc``.

    ``action`` names what was attempted (it starts the message); ``default`` is the error of
    codes that are not capacity, throttling, consistency or busy conditions (a create-time
    failure by default; an agent step passes ``AgentError``).
    """
    code = error_code(exc)
    message = _message(exc)
    text = f"{action}: {code}: {message}" if message else f"{action}: {code}"
    if code in CAPACITY or _unsupported_in_zone(code, message):
        return CapacityError(text)
    if code in THROTTLING:
        return ThrottledError(text)
    if code in NOT_YET_CONSISTENT or _profile_not_propagated(code, message):
        return NotYetConsistentError(text)
    if code in BUSY:
        return ResourceBusyError(text)
    return default(text)


@contextmanager
def aws_call(action: str, default: type[WorkflowError] = ProvisioningError) -> Iterator[None]:
    """Run AWS calls, raising the mapped workflow error (``from`` the botocore one) on failure.

    Network trouble (connection reset, read timeout) after botocore's retries is transient,
    so it becomes ``ThrottledError`` (retried with backoff); other botocore errors (bad
    parameters caught client-side, missing credentials) become ``default``.
    """
    try:
        yield
    except ClientError as exc:
        raise workflow_error(exc, action, default) from exc
    except (BotoConnectionError, HTTPClientError) as exc:
        raise ThrottledError(f"{action}: {exc}") from exc
    except BotoCoreError as exc:
        raise default(f"{action}: {exc}") from exc

"""Every provider code the adapters meet maps to the workflow error the state machine retries by."""

from __future__ import annotations

import pytest
from botocore.exceptions import ClientError, EndpointConnectionError, ParamValidationError, ReadTimeoutError
from tests.support.stack_env import FUNCTION_ENV

from storagebench.adapters.aws.errors import aws_call, workflow_error
from storagebench.adapters.aws.settings import AwsSettings, SettingsError
from storagebench.core.errors import (
    RETRYABLE,
    AgentError,
    CapacityError,
    NotYetConsistentError,
    ProvisioningError,
    ResourceBusyError,
    ThrottledError,
    WorkflowError,
)


def client_error(code: str, message: str = "", operation: str = "RunInstances") -> ClientError:
    return ClientError({"Error": {"Code": code, "Message": message}}, operation)


@pytest.mark.parametrize(
    ("code", "message", "expected"),
    [
        (
            "InsufficientInstanceCapacity",
            "We currently do not have sufficient c5.large capacity",
            CapacityError,
        ),
        ("InsufficientVolumeCapacity", "There is not enough io2 capacity", CapacityError),
        ("InsufficientCapacity", "", CapacityError),
        ("InsufficientHostCapacity", "", CapacityError),
        ("InsufficientThroughputCapacity", "EFS", CapacityError),
        (
            "Unsupported",
            "Your requested instance type (r5b.large) is not supported in your requested "
            "Availability Zone (us-east-1e).",
            CapacityError,
        ),
        ("RequestLimitExceeded", "Request limit exceeded.", ThrottledError),
        ("Throttling", "Rate exceeded", ThrottledError),
        ("ThrottlingException", "Rate exceeded", ThrottledError),
        ("ProvisionedThroughputExceededException", "", ThrottledError),
        ("TooManyRequestsException", "", ThrottledError),
        ("SlowDown", "Please reduce your request rate.", ThrottledError),
        ("ServiceUnavailable", "", ThrottledError),
        ("InvalidInstanceID.NotFound", "The instance ID 'i-1' does not exist", NotYetConsistentError),
        ("InvalidVolume.NotFound", "The volume 'vol-1' does not exist.", NotYetConsistentError),
        (
            "InvalidParameterValue",
            "Value (arn:aws:iam::1:instance-profile/p) for parameter iamInstanceProfile.arn "
            "is invalid. Invalid IAM Instance Profile ARN",
            NotYetConsistentError,
        ),
        ("InvalidParameterValue", "Invalid IAM Instance Profile name", NotYetConsistentError),
        ("InvalidInstanceId", "Instances [[i-1]] not in a valid state for account 1", NotYetConsistentError),
        ("FileSystemInUse", "File system fs-1 has mount targets", ResourceBusyError),
        ("DependencyViolation", "resource sg-1 has a dependent object", ResourceBusyError),
        ("VolumeInUse", "vol-1 is already attached to an instance", ResourceBusyError),
        ("IncorrectState", "", ResourceBusyError),
        ("IncorrectFileSystemLifeCycleState", "", ResourceBusyError),
        ("IncorrectMountTargetState", "", ResourceBusyError),
        ("Unsupported", "The requested configuration is currently not supported.", ProvisioningError),
        ("InvalidParameterValue", "Invalid value 'x' for instanceType.", ProvisioningError),
        ("InvalidAMIID.NotFound", "The image id '[ami-1]' does not exist", ProvisioningError),
        ("UnauthorizedOperation", "You are not authorized to perform this operation.", ProvisioningError),
        ("VolumeLimitExceeded", "You have exceeded your maximum gp3 storage limit", ProvisioningError),
        ("IdempotentParameterMismatch", "", ProvisioningError),
    ],
)
def test_codes_map_to_workflow_errors(code: str, message: str, expected: type[WorkflowError]) -> None:
    error = workflow_error(client_error(code, message), "launch m6i.large")
    assert type(error) is expected
    assert str(error).startswith(f"launch m6i.large: {code}")
    assert (expected.__name__ in RETRYABLE) is (expected is not ProvisioningError)


def test_other_codes_take_the_callers_default() -> None:
    error = workflow_error(
        client_error("InvalidDocument", "no such document", "SendCommand"), "send", AgentError
    )
    assert type(error) is AgentError
    throttled = workflow_error(client_error("ThrottlingException", "", "SendCommand"), "send", AgentError)
    assert type(throttled) is ThrottledError  # retryable conditions win over the default


def test_aws_call_raises_from_the_botocore_error() -> None:
    original = client_error("InsufficientInstanceCapacity", "none left")
    with pytest.raises(CapacityError) as caught, aws_call("launch"):
        raise original
    assert caught.value.__cause__ is original


@pytest.mark.parametrize(
    "error",
    [
        EndpointConnectionError(endpoint_url="https://ec2.us-east-1.amazonaws.com"),
        ReadTimeoutError(endpoint_url="https://ec2.us-east-1.amazonaws.com"),
    ],
)
def test_network_trouble_is_retried(error: Exception) -> None:
    with pytest.raises(ThrottledError) as caught, aws_call("describe"):
        raise error
    assert caught.value.__cause__ is error


def test_client_side_validation_takes_the_default() -> None:
    with pytest.raises(AgentError), aws_call("send", AgentError):
        raise ParamValidationError(report="Invalid length for parameter InstanceIds")


def test_non_aws_errors_pass_through() -> None:
    with pytest.raises(KeyError), aws_call("read"):
        raise KeyError("x")


# ------------------------------------------------------------------------ settings

ENV = {**FUNCTION_ENV, "RESULTS_TABLE": "table", "STACK_NAME": "stack", "AWS_REGION": "eu-west-1"}


def test_settings_from_the_template_environment() -> None:
    settings = AwsSettings.from_env(ENV)
    assert settings.results_table == "table"
    assert settings.region == "eu-west-1"
    assert settings.endpoint_url is None
    fallback = AwsSettings.from_env(
        {**{k: v for k, v in ENV.items() if k != "AWS_REGION"}, "AWS_DEFAULT_REGION": "us-west-2"}
    )
    assert fallback.region == "us-west-2"


def test_settings_name_every_missing_variable() -> None:
    env = {k: v for k, v in ENV.items() if k not in ("SUBNET_ID", "AWS_REGION")}
    env["AGENT_DOCUMENT"] = "  "
    with pytest.raises(SettingsError) as caught:
        AwsSettings.from_env(env)
    assert caught.value.missing == ["SUBNET_ID", "AGENT_DOCUMENT", "AWS_REGION or AWS_DEFAULT_REGION"]
    assert "SUBNET_ID" in str(caught.value)


def test_settings_read_the_optional_ebs_key() -> None:
    key = "arn:aws:kms:eu-west-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab"
    assert AwsSettings.from_env(ENV).ebs_kms_key_arn is None
    assert (
        AwsSettings.from_env({**ENV, "EBS_KMS_KEY_ARN": ""}).ebs_kms_key_arn is None
    )  # the template's default
    assert AwsSettings.from_env({**ENV, "EBS_KMS_KEY_ARN": key}).ebs_kms_key_arn == key
    with pytest.raises(ValueError, match="ebs_kms_key_arn") as caught:
        AwsSettings.from_env({**ENV, "EBS_KMS_KEY_ARN": "alias/benchmarks"})
    assert "alias/benchmarks" in str(caught.value)

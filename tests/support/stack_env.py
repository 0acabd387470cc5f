"""The stack a function runs in: the variables template.yaml gives every function, and the adapters'
settings read from them."""

from __future__ import annotations

from typing import Any

from storagebench.adapters.aws.settings import AwsSettings

FUNCTION_ENV = {
    "RESULTS_TABLE": "storagebench-results",
    "ARTIFACTS_BUCKET": "bucket",
    "STACK_NAME": "storagebench",
    "SUBNET_ID": "subnet-1",
    "SECURITY_GROUP_ID": "sg-1",
    "INSTANCE_PROFILE_ARN": "arn:aws:iam::123456789012:instance-profile/x",
    "INSTANCE_ROLE_ID": "AROAEXAMPLEROLE12345",
    "AGENT_DOCUMENT": "doc",
    "AWS_REGION": "us-east-1",
}


def aws_settings(region: str, **fields: Any) -> AwsSettings:
    """The adapters' settings for a stack in ``region``: every value a placeholder unless given."""
    values: dict[str, Any] = {
        "results_table": "t",
        "artifacts_bucket": "b",
        "stack_name": "s",
        "subnet_id": "subnet-1",
        "security_group_id": "sg-1",
        "instance_profile_arn": "arn:aws:iam::1:instance-profile/p",
        "instance_role_id": "AROAEXAMPLEROLE12345",
        "agent_document": "doc",
    }
    return AwsSettings(**{**values, "region": region, **fields})

"""The variables template.yaml gives every function, as a test's environment."""

from __future__ import annotations

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

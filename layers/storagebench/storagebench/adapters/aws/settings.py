"""The stack's addresses, read from the environment the SAM template gives every function.

``AwsSettings.from_env()`` names every missing variable at once, so a misconfigured
function fails on its first line with a message that says what to set.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

# variable -> field; AWS_REGION (set by Lambda) wins over AWS_DEFAULT_REGION (set by the CLI).
ENVIRONMENT = {
    "RESULTS_TABLE": "results_table",
    "ARTIFACTS_BUCKET": "artifacts_bucket",
    "STACK_NAME": "stack_name",
    "SUBNET_ID": "subnet_id",
    "SECURITY_GROUP_ID": "security_group_id",
    "INSTANCE_PROFILE_ARN": "instance_profile_arn",
    "INSTANCE_ROLE_ID": "instance_role_id",
    "AGENT_DOCUMENT": "agent_document",
}
REGION_VARIABLES = ("AWS_REGION", "AWS_DEFAULT_REGION")


class SettingsError(RuntimeError):
    """The function's environment lacks a variable the AWS adapters need."""

    def __init__(self, missing: list[str]) -> None:
        super().__init__(
            "missing environment variable(s): "
            + ", ".join(missing)
            + " (the SAM template sets them for every function; set them by hand to run outside Lambda)"
        )
        self.missing = missing


class AwsSettings(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    results_table: str = Field(min_length=1)
    artifacts_bucket: str = Field(min_length=1)
    stack_name: str = Field(min_length=1)
    subnet_id: str = Field(min_length=1)
    security_group_id: str = Field(min_length=1, description="the instances': no inbound rule")
    instance_profile_arn: str = Field(min_length=1)
    instance_role_id: str = Field(
        pattern=r"^[A-Z0-9]{16,128}$",
        description="the instance role's id: an instance's aws:userid is '<role id>:<instance id>', "
        "which names the one artifacts prefix it may write",
    )
    agent_document: str = Field(min_length=1)
    region: str = Field(min_length=1)
    endpoint_url: str | None = Field(
        default=None, description="AWS_ENDPOINT_URL: a moto server or LocalStack in local mode"
    )
    ebs_kms_key_arn: str | None = Field(
        default=None,
        pattern=r"^arn:aws[a-z-]*:kms:[a-z0-9-]+:[0-9]{12}:key/[a-zA-Z0-9-]+$",
        description="EBS_KMS_KEY_ARN (stack parameter EbsKmsKeyArn): encrypted volumes use this key, "
        "else the account's EBS default key",
    )

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> AwsSettings:
        env = os.environ if env is None else env
        values: dict[str, Any] = {}
        missing: list[str] = []
        for variable, field in ENVIRONMENT.items():
            value = env.get(variable, "").strip()
            if value:
                values[field] = value
            else:
                missing.append(variable)
        region = next((env[v].strip() for v in REGION_VARIABLES if env.get(v, "").strip()), None)
        if region is None:
            missing.append(" or ".join(REGION_VARIABLES))
        if missing:
            raise SettingsError(missing)
        values["region"] = region
        endpoint = env.get("AWS_ENDPOINT_URL", "").strip()
        if endpoint:
            values["endpoint_url"] = endpoint
        kms_key = env.get("EBS_KMS_KEY_ARN", "").strip()
        if kms_key:  # empty is the template's "no key" default
            values["ebs_kms_key_arn"] = kms_key
        return cls.model_validate(values)

    def client(self, service: str, region: str | None = None) -> Any:
        """A boto3 client for this region (or ``region``) with adaptive retries (botocore retries
        throttling first)."""
        import boto3  # type: ignore[import-untyped, unused-ignore]
        from botocore.config import Config  # type: ignore[import-untyped, unused-ignore]

        config = Config(
            region_name=region or self.region,
            retries={"mode": "adaptive", "max_attempts": 8},
            user_agent_extra=f"storagebench/{self.stack_name}",
            # presigned GETs (the agent, the plan) in SigV4: SigV2 is refused in newer regions
            **({"signature_version": "s3v4"} if service == "s3" else {}),
        )
        return boto3.client(service, config=config, endpoint_url=self.endpoint_url)

"""The workflow's ports on AWS: EC2, EFS, FSx for Lustre, SSM Run Command, S3 and DynamoDB.

Every adapter takes its boto3 client(s) first and the stack's ``AwsSettings`` after, and has
``from_settings(settings)``; ``build_services`` wires them all from the environment the SAM
template gives each function (a Lambda container builds it once and reuses it).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import TYPE_CHECKING

from storagebench.adapters.aws.dynamodb import DynamoResultsStore
from storagebench.adapters.aws.ec2 import Ec2Compute
from storagebench.adapters.aws.filesystems import AwsFileSystems
from storagebench.adapters.aws.s3 import S3Artifacts
from storagebench.adapters.aws.settings import AwsSettings, SettingsError
from storagebench.adapters.aws.ssm import SsmAgents

if TYPE_CHECKING:
    from storagebench.workflow.settings import Guardrails
    from storagebench.workflow.steps import Services

__all__ = [
    "AwsFileSystems",
    "AwsSettings",
    "DynamoResultsStore",
    "Ec2Compute",
    "S3Artifacts",
    "SettingsError",
    "SsmAgents",
    "build_services",
]


def build_services(
    guardrails: Guardrails | None = None, environ: Mapping[str, str] | None = None
) -> Services:
    """Every port on AWS, from the environment (``AwsSettings.from_env`` names what is missing)."""
    from storagebench.workflow.settings import Guardrails
    from storagebench.workflow.steps import Services

    env = os.environ if environ is None else environ
    settings = AwsSettings.from_env(env)
    ec2, ssm, s3 = settings.client("ec2"), settings.client("ssm"), settings.client("s3")
    artifacts = S3Artifacts(s3, settings.artifacts_bucket)
    return Services(
        compute=Ec2Compute(ec2, ssm, settings),
        filesystems=AwsFileSystems(settings.client("efs"), settings.client("fsx"), settings, ec2),
        agents=SsmAgents(ssm, s3, settings, artifacts=artifacts),
        artifacts=artifacts,
        store=DynamoResultsStore.from_settings(settings),
        guardrails=guardrails if guardrails is not None else Guardrails.from_env(env),
        stack=settings.stack_name,
        region=settings.region,
    )

"""The workflow's ports on AWS: EC2, EFS, FSx for Lustre, SSM Run Command, S3 and DynamoDB.

Every adapter takes its boto3 client(s) first and the stack's ``AwsSettings`` after, and has
``from_settings(settings)``; ``build_services`` wires them all from the environment the SAM
template gives each function (a Lambda container builds it once and reuses it).
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Mapping
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

from storagebench.adapters.aws.dynamodb import DynamoResultsStore
from storagebench.adapters.aws.ec2 import Ec2Compute
from storagebench.adapters.aws.filesystems import AwsFileSystems
from storagebench.adapters.aws.network import Ec2Network
from storagebench.adapters.aws.s3 import S3Artifacts
from storagebench.adapters.aws.service_quotas import ServiceQuotasReader
from storagebench.adapters.aws.settings import AwsSettings, SettingsError
from storagebench.adapters.aws.sns import notifier_from_env
from storagebench.adapters.aws.spot_prices import Ec2SpotPriceHistory
from storagebench.adapters.aws.ssm import SsmAgents

if TYPE_CHECKING:
    from storagebench.core.guardrails import Guardrails
    from storagebench.prices.book import PriceBook
    from storagebench.workflow.ports import GatewayServices, Services

PRICE_SOURCES = ("price-list-api", "snapshot")

__all__ = [
    "AwsFileSystems",
    "AwsSettings",
    "DynamoResultsStore",
    "Ec2Compute",
    "Ec2Network",
    "S3Artifacts",
    "ServiceQuotasReader",
    "SettingsError",
    "SsmAgents",
    "build_services",
]


def build_services(
    guardrails: Guardrails | None = None, environ: Mapping[str, str] | None = None
) -> Services:
    """Every port on AWS, from the environment (``AwsSettings.from_env`` names what is missing)."""
    from storagebench.core.guardrails import Guardrails
    from storagebench.workflow.ports import Services

    env = os.environ if environ is None else environ
    settings = AwsSettings.from_env(env)
    ec2, ssm, s3 = settings.client("ec2"), settings.client("ssm"), settings.client("s3")
    artifacts = S3Artifacts(s3, settings.artifacts_bucket)
    price_source = env.get("PRICE_SOURCE", "price-list-api")
    if price_source not in PRICE_SOURCES:
        raise ValueError(f"PRICE_SOURCE is {price_source!r}; allowed: {', '.join(PRICE_SOURCES)}")
    return Services(
        compute=Ec2Compute(ec2, ssm, settings),
        filesystems=AwsFileSystems(settings.client("efs"), settings.client("fsx"), settings, ec2),
        agents=SsmAgents(ssm, s3, settings, artifacts=artifacts),
        artifacts=artifacts,
        store=DynamoResultsStore.from_settings(settings),
        guardrails=guardrails if guardrails is not None else Guardrails.from_env(env),
        stack=settings.stack_name,
        region=settings.region,
        prices=partial(price_book, settings, price_source),
        spot_prices=partial(Ec2SpotPriceHistory.from_settings, settings),
        notifier=notifier_from_env(settings, env),
        gateways=gateway_services(settings, env),
        network=Ec2Network(ec2, settings),
        quotas=ServiceQuotasReader.from_settings(settings),
    )


def gateway_services(settings: AwsSettings, env: Mapping[str, str]) -> GatewayServices | None:
    """Storage Gateway, the appliance on EC2, the activator function and the share's bucket; None
    when the stack sets none of their variables (the Plan step then refuses file_gateway targets,
    ``Guardrails.from_env``). Some but not all set is a misconfiguration, named."""
    from storagebench.adapters.aws.activation import InvokedActivationKeys
    from storagebench.adapters.aws.gateway_appliance import Ec2Appliances
    from storagebench.adapters.aws.share_objects import S3ShareObjects
    from storagebench.adapters.aws.storagegateway import StorageGateways
    from storagebench.core.guardrails import GATEWAY_VARIABLES
    from storagebench.gateway.lifecycle import GatewayPorts
    from storagebench.workflow.ports import GatewayServices

    values = {v: env.get(v, "").strip() for v in GATEWAY_VARIABLES}
    missing = [v for v, value in values.items() if not value]
    if len(missing) == len(values):
        return None
    if missing:
        raise SettingsError(missing)
    ports = GatewayPorts(
        appliances=Ec2Appliances(
            settings.client("ec2"), settings.client("ssm"), settings, values["GATEWAY_SECURITY_GROUP_ID"]
        ),
        keys=InvokedActivationKeys(settings.client("lambda"), values["ACTIVATOR_FUNCTION"]),
        gateways=StorageGateways(settings.client("storagegateway")),
        objects=S3ShareObjects(settings.client("s3")),
    )
    return GatewayServices(
        ports=ports, share_bucket=values["SHARE_BUCKET"], role_arn=values["SHARE_ROLE_ARN"]
    )


def price_book(settings: AwsSettings, source: str, region: str) -> PriceBook:
    """The Price List API (cached a day under /tmp, falling back to the bundled snapshot when the
    API cannot answer), or the snapshot alone (``PRICE_SOURCE=snapshot``)."""
    from storagebench.adapters.aws.pricing import API_REGIONS, ApiPriceBook, FallbackPriceBook
    from storagebench.prices.snapshot import SnapshotPriceBook

    snapshot = SnapshotPriceBook(region)
    if source == "snapshot":
        return snapshot
    endpoint = settings.region if settings.region in API_REGIONS else API_REGIONS[0]
    api = ApiPriceBook(
        settings.client("pricing", region=endpoint), region, Path(tempfile.gettempdir()) / "prices"
    )
    return FallbackPriceBook(api, snapshot)

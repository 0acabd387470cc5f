"""The Service Quotas reader on a stubbed client: applied value, AWS default, errors as warnings.

moto (5.2) answers Service Quotas for VPC codes only, and not GetAWSDefaultServiceQuota at all, so
the answers here are stubbed in the API's own shapes (botocore validates them against its model).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import boto3
import pytest
from botocore.config import Config
from botocore.stub import Stubber
from tests.support.stack_env import FUNCTION_ENV

from storagebench.adapters.aws.service_quotas import CACHE_S, ServiceQuotasReader
from storagebench.quotas.models import QuotaNotReadError

CODE = "L-1216C47A"
NAME = "Running On-Demand Standard (A, C, D, H, I, M, R, T, Z) instances"
PARAMS = {"ServiceCode": "ec2", "QuotaCode": CODE}


def _quota(value: float) -> dict[str, Any]:
    return {
        "Quota": {
            "ServiceCode": "ec2",
            "ServiceName": "Amazon Elastic Compute Cloud (Amazon EC2)",
            "QuotaArn": f"arn:aws:servicequotas:us-east-1:123456789012:ec2/{CODE}",
            "QuotaCode": CODE,
            "QuotaName": NAME,
            "Value": value,
            "Unit": "None",
            "Adjustable": True,
            "GlobalQuota": False,
        }
    }


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def stubbed() -> Iterator[tuple[ServiceQuotasReader, Stubber, Clock]]:
    client = boto3.client(
        "service-quotas",
        region_name="us-east-1",
        aws_access_key_id="x",
        aws_secret_access_key="x",
        config=Config(retries={"total_max_attempts": 1}),
    )
    clock = Clock()
    with Stubber(client) as stubber:
        yield ServiceQuotasReader(client, "us-east-1", clock), stubber, clock
        stubber.assert_no_pending_responses()


def test_the_applied_value_is_read(stubbed: tuple[ServiceQuotasReader, Stubber, Clock]) -> None:
    reader, stubber, _ = stubbed
    stubber.add_response("get_service_quota", _quota(1920.0), PARAMS)
    quota = reader.vcpu_quota(CODE)
    assert (quota.value, quota.quota_name, quota.origin) == (1920.0, NAME, "applied")
    assert reader.source == "Service Quotas API, us-east-1"


def test_a_quota_never_applied_falls_back_to_the_aws_default(
    stubbed: tuple[ServiceQuotasReader, Stubber, Clock],
) -> None:
    reader, stubber, _ = stubbed
    stubber.add_client_error("get_service_quota", "NoSuchResourceException", "not applied", 400, None, PARAMS)
    stubber.add_response("get_aws_default_service_quota", _quota(5.0), PARAMS)
    quota = reader.vcpu_quota(CODE)
    assert (quota.value, quota.origin) == (5.0, "aws-default")


def test_a_value_is_kept_for_a_while(stubbed: tuple[ServiceQuotasReader, Stubber, Clock]) -> None:
    reader, stubber, clock = stubbed
    stubber.add_response("get_service_quota", _quota(64.0), PARAMS)
    stubber.add_response("get_service_quota", _quota(128.0), PARAMS)
    assert reader.vcpu_quota(CODE).value == 64.0
    clock.now = CACHE_S - 1
    assert reader.vcpu_quota(CODE).value == 64.0  # no call: the stub's second answer is still pending
    clock.now = CACHE_S + 1
    assert reader.vcpu_quota(CODE).value == 128.0


@pytest.mark.parametrize(
    ("operation", "code", "said"),
    [
        (
            "get_service_quota",
            "AccessDeniedException",
            "GetServiceQuota access denied: AccessDeniedException",
        ),
        (
            "get_service_quota",
            "TooManyRequestsException",
            "GetServiceQuota throttled: TooManyRequestsException",
        ),
        ("get_service_quota", "ServiceException", "GetServiceQuota refused: ServiceException"),
        (
            "get_aws_default_service_quota",
            "AccessDeniedException",
            "GetAWSDefaultServiceQuota access denied: AccessDeniedException",
        ),
    ],
)
def test_what_cannot_be_read_is_a_typed_error_naming_the_quota_and_the_cause(
    stubbed: tuple[ServiceQuotasReader, Stubber, Clock], operation: str, code: str, said: str
) -> None:
    reader, stubber, _ = stubbed
    if operation == "get_aws_default_service_quota":
        stubber.add_client_error("get_service_quota", "NoSuchResourceException", "", 400, None, PARAMS)
    stubber.add_client_error(operation, code, "the message", 400, None, PARAMS)
    with pytest.raises(QuotaNotReadError) as raised:
        reader.vcpu_quota(CODE)
    assert str(raised.value) == f"{CODE} in us-east-1: {said}: the message"
    assert raised.value.__cause__ is not None


def test_an_answer_for_another_quota_is_not_read(stubbed: tuple[ServiceQuotasReader, Stubber, Clock]) -> None:
    reader, stubber, _ = stubbed
    other = _quota(5.0)
    other["Quota"]["QuotaCode"] = "L-34B43A08"
    stubber.add_response("get_service_quota", other, PARAMS)
    with pytest.raises(QuotaNotReadError, match="QuotaCode: 'L-34B43A08' answers another quota"):
        reader.vcpu_quota(CODE)


def test_an_unreachable_endpoint_is_not_read(monkeypatch: pytest.MonkeyPatch) -> None:
    from botocore.exceptions import EndpointConnectionError

    client = boto3.client(
        "service-quotas", region_name="us-east-1", aws_access_key_id="x", aws_secret_access_key="x"
    )

    def unreachable(**_: Any) -> Any:
        raise EndpointConnectionError(endpoint_url="https://servicequotas.us-east-1.amazonaws.com")

    monkeypatch.setattr(client, "get_service_quota", unreachable)
    with pytest.raises(
        QuotaNotReadError, match=r"L-1216C47A in us-east-1: GetServiceQuota: Could not connect"
    ):
        ServiceQuotasReader(client, "us-east-1").vcpu_quota(CODE)


AWS_ENV = {
    **FUNCTION_ENV,
    "AWS_REGION": "eu-west-1",
    "STATE_MACHINE_ARN": "arn:aws:states:eu-west-1:123456789012:stateMachine:storagebench-benchmark",
    "SWEEP_RUN_FUNCTION": "storagebench-SweepRun",
}


def test_plan_and_the_api_read_the_stack_regions_quotas(monkeypatch: pytest.MonkeyPatch) -> None:
    from storagebench.adapters.aws import build_services
    from storagebench.wiring.api import from_environment

    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "x")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "x")
    services = build_services(environ=AWS_ENV)
    api = from_environment(AWS_ENV)
    for reader in (services.quotas, api.quotas):
        assert isinstance(reader, ServiceQuotasReader)
        assert reader.region == "eu-west-1" and reader.client.meta.region_name == "eu-west-1"
        assert reader.client.meta.service_model.service_name == "service-quotas"

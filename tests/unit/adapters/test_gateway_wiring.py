"""The gateway's wiring on AWS: the activator function's answers, and the stack variables it needs."""

from __future__ import annotations

import io
import json
from typing import Any

import boto3
import pytest
from botocore.response import StreamingBody
from botocore.stub import Stubber

from storagebench.adapters.aws import gateway_services
from storagebench.adapters.aws.activation import InvokedActivationKeys
from storagebench.adapters.aws.settings import AwsSettings, SettingsError
from storagebench.core.errors import NotYetConsistentError, ProvisioningError
from storagebench.core.guardrails import GATEWAY_VARIABLES

FUNCTION = "storagebench-activator"


def _body(document: Any) -> StreamingBody:
    raw = json.dumps(document).encode()
    return StreamingBody(io.BytesIO(raw), len(raw))


def _keys(answer: dict[str, Any]) -> InvokedActivationKeys:
    client = boto3.client("lambda", region_name="us-east-1", aws_access_key_id="x", aws_secret_access_key="x")
    stub = Stubber(client)
    expected = {
        "FunctionName": FUNCTION,
        "Payload": json.dumps({"appliance_ip": "10.0.0.9", "region": "us-east-1"}).encode(),
    }
    stub.add_response("invoke", answer, expected)
    stub.activate()
    return InvokedActivationKeys(client, FUNCTION)


def test_the_key_comes_from_the_activator_function() -> None:
    keys = _keys({"StatusCode": 200, "Payload": _body({"activation_key": "AAAAA-BBBBB"})})
    assert keys.fetch("10.0.0.9", "us-east-1") == "AAAAA-BBBBB"


@pytest.mark.parametrize(
    ("error_type", "raised"),
    [("NotYetConsistentError", NotYetConsistentError), ("ProvisioningError", ProvisioningError)],
)
def test_the_activators_error_type_carries_over(error_type: str, raised: type[Exception]) -> None:
    failure = {"errorType": error_type, "errorMessage": "appliance 10.0.0.9 answered HTTP 503"}
    keys = _keys({"StatusCode": 200, "FunctionError": "Unhandled", "Payload": _body(failure)})
    with pytest.raises(
        raised, match=f"activator {FUNCTION}: {error_type}: appliance 10.0.0.9 answered HTTP 503"
    ):
        keys.fetch("10.0.0.9", "us-east-1")


def test_an_answer_without_a_key_is_refused() -> None:
    keys = _keys({"StatusCode": 200, "Payload": _body({"something": "else"})})
    with pytest.raises(ProvisioningError, match="answered without an activation_key"):
        keys.fetch("10.0.0.9", "us-east-1")


def test_gateway_ports_need_all_their_variables_or_none(settings: AwsSettings) -> None:
    assert gateway_services(settings, {}) is None
    with pytest.raises(SettingsError, match="SHARE_ROLE_ARN, ACTIVATOR_FUNCTION"):
        gateway_services(settings, {"GATEWAY_SECURITY_GROUP_ID": "sg-1", "SHARE_BUCKET": "b"})
    complete = dict.fromkeys(GATEWAY_VARIABLES, "x") | {"SHARE_BUCKET": "share", "SHARE_ROLE_ARN": "arn:r"}
    wired = gateway_services(settings, complete)
    assert wired is not None and (wired.share_bucket, wired.role_arn) == ("share", "arn:r")

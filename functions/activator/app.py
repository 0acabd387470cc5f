"""Activator: fetch a File Gateway appliance's activation key over HTTP from inside the VPC."""

from typing import Any

from aws_lambda_powertools.utilities.typing import LambdaContext

from storagebench.adapters.aws.activation import HttpActivationKeys
from storagebench.gateway.models import ActivationRequest
from storagebench.observability import logger, metrics, tracer

keys = HttpActivationKeys()


@logger.inject_lambda_context
@metrics.log_metrics
@tracer.capture_lambda_handler
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    request = ActivationRequest.model_validate(event)
    return {"activation_key": keys.fetch(request.appliance_ip, request.region)}

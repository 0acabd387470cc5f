"""Api: the HTTP API (IAM-authorised) on Powertools' event handler; routes in storagebench.api.routes."""

from typing import Any

from aws_lambda_powertools.logging import correlation_paths
from aws_lambda_powertools.utilities.typing import LambdaContext

from storagebench.api.routes import build_resolver
from storagebench.observability import MetricUnit, logger, metrics, tracer
from storagebench.wiring import api as wiring

app = build_resolver(wiring.service)


@logger.inject_lambda_context(correlation_id_path=correlation_paths.API_GATEWAY_HTTP)
@metrics.log_metrics
@tracer.capture_lambda_handler
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    response = app.resolve(event, context)
    metrics.add_metric(name="ApiRequests", unit=MetricUnit.Count, value=1)
    return response

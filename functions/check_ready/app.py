"""CheckReady: one readiness poll (instance, status checks, SSM agent, volumes, file systems)."""

from typing import Any

from aws_lambda_powertools.utilities.typing import LambdaContext

from storagebench.observability import logger, metrics, tracer
from storagebench.workflow import steps, wiring
from storagebench.workflow.models import ConfigState


@logger.inject_lambda_context
@metrics.log_metrics
@tracer.capture_lambda_handler
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    return steps.check_ready(ConfigState.model_validate(event), wiring.services()).model_dump(mode="json")

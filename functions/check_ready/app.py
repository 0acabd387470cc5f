"""CheckReady: one readiness poll (instance, status checks, SSM agent, volumes, file systems)."""

from typing import Any

from aws_lambda_powertools.utilities.typing import LambdaContext

from storagebench.core.state import ConfigState
from storagebench.observability import logger, metrics, tracer
from storagebench.wiring import services as wiring
from storagebench.workflow.steps import check_ready


@logger.inject_lambda_context
@metrics.log_metrics
@tracer.capture_lambda_handler
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    state = check_ready.check_ready(ConfigState.model_validate(event), wiring.services())
    return state.model_dump(mode="json")

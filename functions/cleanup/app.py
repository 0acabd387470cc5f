"""Cleanup: stop the agent, terminate, delete volumes and file systems, verify by tag."""

from typing import Any

from aws_lambda_powertools.utilities.typing import LambdaContext

from storagebench.core.state import ConfigState
from storagebench.observability import MetricUnit, logger, metrics, tracer
from storagebench.wiring import services as wiring
from storagebench.workflow.steps import cleanup


@logger.inject_lambda_context
@metrics.log_metrics
@tracer.capture_lambda_handler
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    result = cleanup.cleanup(ConfigState.model_validate(event), wiring.services())
    if result.leftovers:
        metrics.add_metric(name="CleanupLeftovers", unit=MetricUnit.Count, value=len(result.leftovers))
        logger.error("resources left after cleanup", extra={"leftovers": result.leftovers})
    return result.model_dump(mode="json")

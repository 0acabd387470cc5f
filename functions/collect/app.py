"""Collect: parse the agent's raw output into records and store them."""

from typing import Any

from aws_lambda_powertools.utilities.typing import LambdaContext

from storagebench.core.state import ConfigState
from storagebench.observability import MetricUnit, logger, metrics, tracer
from storagebench.wiring import services as wiring
from storagebench.workflow import steps


@logger.inject_lambda_context
@metrics.log_metrics
@tracer.capture_lambda_handler
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    state = steps.collect(ConfigState.model_validate(event), wiring.services())
    if state.collected is not None:
        metrics.add_metric(name="ResultsStored", unit=MetricUnit.Count, value=state.collected.records)
    return state.model_dump(mode="json")

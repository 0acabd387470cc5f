"""Collect: parse the agent's raw output into records, store them, and write their flat export."""

from typing import Any

from aws_lambda_powertools.utilities.typing import LambdaContext

from storagebench.core.state import ConfigState
from storagebench.observability import MetricUnit, logger, metrics, tracer
from storagebench.wiring import services as wiring
from storagebench.workflow.exports import EXPORT_ERROR
from storagebench.workflow.steps import collect


@logger.inject_lambda_context
@metrics.log_metrics
@tracer.capture_lambda_handler
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    state = collect.collect(ConfigState.model_validate(event), wiring.services())
    if state.collected is not None:
        metrics.add_metric(name="ResultsStored", unit=MetricUnit.Count, value=state.collected.records)
    # the records are stored; a missing export is on the config as an error, and counted here
    failed = sum(1 for error in state.errors if error.step == "collect" and error.error == EXPORT_ERROR)
    metrics.add_metric(name="ExportFailures", unit=MetricUnit.Count, value=failed)
    return state.model_dump(mode="json")

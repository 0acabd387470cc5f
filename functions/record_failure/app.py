"""RecordFailure: keep a caught error on the config before collecting and cleaning up."""

from typing import Any

from aws_lambda_powertools.utilities.typing import LambdaContext

from storagebench.observability import MetricUnit, logger, metrics, tracer
from storagebench.workflow import steps, wiring
from storagebench.workflow.models import ConfigState


@logger.inject_lambda_context
@metrics.log_metrics
@tracer.capture_lambda_handler
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    document = {k: v for k, v in event["state"].items() if k != "caught"}  # recorded below, not twice
    state = steps.record_failure(ConfigState.model_validate(document), event["caught"], wiring.services())
    error = state.errors[-1]
    metrics.add_metric(name="ConfigFailures", unit=MetricUnit.Count, value=1)
    logger.warning(
        "config failed",
        extra={
            "config_id": state.item.config_id,
            "step": error.step,
            "error": error.error,
            "cause": error.cause,
        },
    )
    return state.model_dump(mode="json")

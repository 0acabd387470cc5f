"""RecordFailure: keep a caught error (or a Spot interruption) on the config before collecting and
cleaning up."""

from typing import Any

from aws_lambda_powertools.utilities.typing import LambdaContext

from storagebench.observability import MetricUnit, logger, metrics, tracer
from storagebench.wiring import services as wiring
from storagebench.workflow import interruptions
from storagebench.workflow.events import RecordFailureEvent, parse_event
from storagebench.workflow.steps import record_failure


@logger.inject_lambda_context
@metrics.log_metrics
@tracer.capture_lambda_handler
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    failure = parse_event(RecordFailureEvent, event)
    state = record_failure.record_failure(failure.state, failure.caught, wiring.services())
    interrupted = interruptions.current(state)
    if interrupted is not None and state.errors == failure.state.errors:  # kept and relaunched: no error
        metrics.add_metric(name="SpotInterruptions", unit=MetricUnit.Count, value=1)
        logger.warning(
            "config interrupted",
            extra={"config_id": state.item.config_id, **interrupted.model_dump(mode="json")},
        )
        return state.model_dump(mode="json")
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

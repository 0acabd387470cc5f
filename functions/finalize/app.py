"""Finalize: SUCCEEDED, PARTIAL or FAILED from the configs' results; record the run."""

from typing import Any

from aws_lambda_powertools.utilities.typing import LambdaContext

from storagebench.observability import MetricUnit, logger, metrics, tracer
from storagebench.workflow import steps, wiring


@logger.inject_lambda_context
@metrics.log_metrics
@tracer.capture_lambda_handler
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    summary = steps.finalize(
        event["run_id"], event["suite"], event["started_at"], event["configs"], wiring.services()
    )
    metrics.add_metric(name=f"Runs{summary.status.title()}", unit=MetricUnit.Count, value=1)
    logger.info(
        "run finished", extra={"run_id": summary.run_id, "status": summary.status, "records": summary.records}
    )
    return summary.model_dump(mode="json")

"""SweepRun: the configs map failed as a whole; release every config by tag, record the run FAILED."""

from typing import Any

from aws_lambda_powertools.utilities.typing import LambdaContext

from storagebench.observability import MetricUnit, logger, metrics, tracer
from storagebench.workflow import steps, wiring


@logger.inject_lambda_context
@metrics.log_metrics
@tracer.capture_lambda_handler
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    summary = steps.abort_run(
        event["run_id"],
        event["suite"],
        event["started_at"],
        event["config_ids"],
        event["caught"],
        wiring.services(),
    )
    metrics.add_metric(name="RunsAborted", unit=MetricUnit.Count, value=1)
    metrics.add_metric(
        name="NotificationFailures", unit=MetricUnit.Count, value=len(summary.notification_notes)
    )
    leftovers = [item for config in summary.configs for item in config.leftovers]
    logger.error("run aborted", extra={"run_id": summary.run_id, "leftovers": leftovers})
    return summary.model_dump(mode="json")

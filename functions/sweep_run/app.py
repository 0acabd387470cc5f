"""SweepRun: the configs map failed as a whole, or the API stopped the run; release every config by tag
(again once what was under way has ended), record the run FAILED."""

from typing import Any

from aws_lambda_powertools.utilities.typing import LambdaContext

from storagebench.observability import MetricUnit, logger, metrics, tracer
from storagebench.wiring import services as wiring
from storagebench.workflow.events import SweepRunEvent, parse_event
from storagebench.workflow.steps import sweep_run


@logger.inject_lambda_context
@metrics.log_metrics
@tracer.capture_lambda_handler
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    run = parse_event(SweepRunEvent, event)
    summary = sweep_run.abort_run(
        run.run_id, run.suite, run.started_at, run.config_ids, run.caught, wiring.services(), run.stopped_at
    )
    metrics.add_metric(name="RunsAborted", unit=MetricUnit.Count, value=1)
    metrics.add_metric(
        name="NotificationFailures", unit=MetricUnit.Count, value=len(summary.notification_notes)
    )
    leftovers = [item for config in summary.configs for item in config.leftovers]
    logger.error("run aborted", extra={"run_id": summary.run_id, "leftovers": leftovers})
    return summary.model_dump(mode="json")

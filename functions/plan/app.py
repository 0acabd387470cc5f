"""Plan: validate the request, apply guardrails, record the run, expand one work item per config."""

from typing import Any

from aws_lambda_powertools.utilities.typing import LambdaContext

from storagebench.observability import MetricUnit, logger, metrics, tracer
from storagebench.wiring import services as wiring
from storagebench.workflow import steps
from storagebench.workflow.events import PlanEvent, parse_event


@logger.inject_lambda_context
@metrics.log_metrics
@tracer.capture_lambda_handler
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    planned = parse_event(PlanEvent, event)
    plan = steps.plan_run(planned.request, planned.run_id, planned.started_at, wiring.services())
    metrics.add_metric(name="RunsStarted", unit=MetricUnit.Count, value=1)
    metrics.add_metric(name="ConfigsPlanned", unit=MetricUnit.Count, value=len(plan.items))
    logger.info("run planned", extra={"run_id": plan.run_id, "configs": len(plan.items)})
    return plan.model_dump(mode="json")

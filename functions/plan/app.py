"""Plan: validate the request, apply guardrails, record the run, expand one work item per config (in the
state up to 40 configs, in S3 for the Distributed Map past that)."""

from typing import Any

from aws_lambda_powertools.utilities.typing import LambdaContext

from storagebench.observability import MetricUnit, logger, metrics, tracer
from storagebench.wiring import services as wiring
from storagebench.workflow.events import PlanEvent, parse_event
from storagebench.workflow.steps.plan import plan_run


@logger.inject_lambda_context
@metrics.log_metrics
@tracer.capture_lambda_handler
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    planned = parse_event(PlanEvent, event)
    plan = plan_run(planned.request, planned.run_id, planned.started_at, wiring.services())
    metrics.add_metric(name="RunsStarted", unit=MetricUnit.Count, value=1)
    metrics.add_metric(name="ConfigsPlanned", unit=MetricUnit.Count, value=len(plan.config_ids))
    # inline: the items travel in the state; distributed: past 40 configs, from work_items_key in S3
    logger.info(
        "run planned", extra={"run_id": plan.run_id, "configs": len(plan.config_ids), "map": plan.map_mode}
    )
    return plan.model_dump(mode="json")

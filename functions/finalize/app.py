"""Finalize: SUCCEEDED, PARTIAL or FAILED from the configs' results; record the run; notify."""

from typing import Any

from aws_lambda_powertools.utilities.typing import LambdaContext

from storagebench.observability import MetricUnit, logger, metrics, tracer
from storagebench.wiring import services as wiring
from storagebench.workflow.events import FinalizeEvent, parse_event
from storagebench.workflow.run_metrics import run_metrics
from storagebench.workflow.steps import finalize


@logger.inject_lambda_context
@metrics.log_metrics
@tracer.capture_lambda_handler
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    run = parse_event(FinalizeEvent, event)
    summary = finalize.finalize(run.run_id, run.suite, run.started_at, run.configs, wiring.services())
    for name, value in run_metrics(summary).items():
        unit = MetricUnit.NoUnit if name == "RunCostUSD" else MetricUnit.Count
        metrics.add_metric(name=name, unit=unit, value=value)
    logger.info(
        "run finished", extra={"run_id": summary.run_id, "status": summary.status, "records": summary.records}
    )
    return summary.model_dump(mode="json")

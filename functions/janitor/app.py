"""Janitor: on its schedule, delete the stack's expired resources, fail stuck runs, notify and count."""

from typing import Any

from aws_lambda_powertools.utilities.typing import LambdaContext

from storagebench.observability import MetricUnit, add_metric_by, logger, metrics, tracer
from storagebench.wiring.janitor import janitor


@logger.inject_lambda_context
@metrics.log_metrics
@tracer.capture_lambda_handler
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    report = janitor().sweep()
    for name, value in report.counts().items():
        metrics.add_metric(name=name, unit=MetricUnit.Count, value=value)
    add_metric_by("LeaksSwept", "ResourceType", report.swept_by_kind())
    logger.info("sweep done", extra={"report": report.model_dump(mode="json")})
    report.raise_if_incomplete()  # after the metrics and notifications: the Errors alarm sees it
    return report.model_dump(mode="json")

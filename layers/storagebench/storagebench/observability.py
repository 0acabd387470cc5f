"""Logger, Tracer and Metrics shared by every Lambda handler (Powertools).

Handlers decorate in this order: inject_lambda_context, log_metrics, capture_lambda_handler.
Local mode sets POWERTOOLS_TRACE_DISABLED and POWERTOOLS_METRICS_DISABLED, so the same
handlers run in-process without X-Ray or CloudWatch.
"""

import os
from collections.abc import Mapping

from aws_lambda_powertools import Logger, Metrics, Tracer
from aws_lambda_powertools.metrics import MetricUnit
from aws_lambda_powertools.metrics.functions import is_metrics_disabled
from aws_lambda_powertools.metrics.provider.cloudwatch_emf.cloudwatch import AmazonCloudWatchEMFProvider

logger = Logger()
tracer = Tracer()
# The namespace is fixed at import: a Lambda imports once with the stack's environment, but a test
# process may import this before any test sets POWERTOOLS_METRICS_NAMESPACE.
metrics = Metrics(
    namespace=os.environ.get("POWERTOOLS_METRICS_NAMESPACE") or "storagebench",
    service=os.environ.get("POWERTOOLS_SERVICE_NAME") or "storagebench",
)

__all__ = ["MetricUnit", "add_metric_by", "logger", "metrics", "tracer"]

# Powertools (3.x) neither prints nor clears the metrics of a flush while metrics are disabled, and
# prints the set anyway once one metric holds 100 values: in-process handlers (local mode, the tests)
# then wrote an EMF blob into whatever stdout was, e.g. the JSON `run --local --json` prints, after
# their 100th invocation. A disabled flush forgets the invocation's metrics, as an enabled one does.
_flush = metrics.provider.flush_metrics


def _flush_or_forget(raise_on_empty_metrics: bool = False) -> None:
    _flush(raise_on_empty_metrics=raise_on_empty_metrics)
    if is_metrics_disabled():
        metrics.provider.clear_metrics()


metrics.provider.flush_metrics = _flush_or_forget  # type: ignore[method-assign]


def add_metric_by(
    name: str, dimension: str, values: Mapping[str, float], unit: MetricUnit = MetricUnit.Count
) -> None:
    """One metric per value of a dimension (LeaksSwept per ResourceType), each in its own EMF blob:
    a dimension added to ``metrics`` would apply to every metric of the invocation. Flushed now,
    and like ``metrics`` silent when POWERTOOLS_METRICS_DISABLED is set."""
    for value_name, value in values.items():
        blob = AmazonCloudWatchEMFProvider(namespace=metrics.namespace, service=metrics.service)
        blob.add_dimension(name=dimension, value=value_name)
        blob.add_metric(name=name, unit=unit, value=value)
        blob.flush_metrics()

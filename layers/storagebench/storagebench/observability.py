"""Logger, Tracer and Metrics shared by every Lambda handler (Powertools).

Handlers decorate in this order: inject_lambda_context, log_metrics, capture_lambda_handler.
Local mode sets POWERTOOLS_TRACE_DISABLED and POWERTOOLS_METRICS_DISABLED, so the same
handlers run in-process without X-Ray or CloudWatch.
"""

from aws_lambda_powertools import Logger, Metrics, Tracer
from aws_lambda_powertools.metrics import MetricUnit

logger = Logger()
tracer = Tracer()
metrics = Metrics()

__all__ = ["MetricUnit", "logger", "metrics", "tracer"]

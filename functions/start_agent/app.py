"""StartAgent: bind targets, store the plan, send the agent command; the instance calls back."""

from typing import Any

from aws_lambda_powertools.utilities.typing import LambdaContext

from storagebench.observability import logger, metrics, tracer
from storagebench.wiring import services as wiring
from storagebench.workflow.events import StartAgentEvent, parse_event
from storagebench.workflow.steps import start_agent


@logger.inject_lambda_context
@metrics.log_metrics
@tracer.capture_lambda_handler
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    task = parse_event(StartAgentEvent, event)
    state = start_agent.start_agent(task.state, task.task_token, wiring.services())
    return state.model_dump(mode="json")  # ignored by the waitForTaskToken integration; kept for logs

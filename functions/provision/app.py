"""Provision: launch the config's instance with its volumes and create its file systems."""

from typing import Any

from aws_lambda_powertools.utilities.typing import LambdaContext

from storagebench.core.state import ConfigState
from storagebench.observability import logger, metrics, tracer
from storagebench.wiring import services as wiring
from storagebench.workflow.steps import provision


@logger.inject_lambda_context
@metrics.log_metrics
@tracer.capture_lambda_handler
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    state = provision.provision(ConfigState.model_validate(event), wiring.services())
    logger.info(
        "provisioned", extra={"config_id": state.item.config_id, "instance_id": state.resources.instance_id}
    )
    return state.model_dump(mode="json")

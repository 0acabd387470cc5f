"""What the network tests share: the run, the config's labels and its port rules."""

from __future__ import annotations

from typing import Any

from storagebench.core.state import NetworkSpec, PortRule
from storagebench.core.tags import TAG_CONFIG, TAG_EXPIRES, TAG_RUN, TAG_STACK

REGION = "us-east-1"
STACK = "storagebench-test"
RUN = "vsa-20261126T000000Z-0a1b2c3d"
NVME_OF = PortRule(protocol="tcp", from_port=4420, to_port=4420)
CHUNKS = PortRule(protocol="tcp", from_port=9420, to_port=9422)


def labels(
    run_id: str = RUN, config_id: str = "vsa", expires: str = "2030-01-01T00:00:00Z"
) -> dict[str, str]:
    return {TAG_RUN: run_id, TAG_CONFIG: config_id, TAG_EXPIRES: expires, TAG_STACK: STACK}


def network_spec(
    config_id: str = "vsa",
    placement: Any = "cluster",
    rules: list[PortRule] | None = None,
    expires: str = "2030-01-01T00:00:00Z",
) -> NetworkSpec:
    return NetworkSpec(
        run_id=RUN,
        config_id=config_id,
        tags=labels(config_id=config_id, expires=expires),
        ingress=[NVME_OF, CHUNKS] if rules is None else rules,
        placement=placement,
    )

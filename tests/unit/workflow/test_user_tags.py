"""The request's ``tags`` reach everything a config creates (issue 11: applied, never dropped).

Provision labels the instance and its volumes (one launch spec) and every file system with them;
a File Gateway's appliance, gateway and share get them through the gateway plan. The request cannot
name storagebench's own keys (``request.tags``), and with the most tags a request may carry, the
most-tagged resource (the appliance, with its client token) holds exactly AWS's 50.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tests.support import workflow_fakes as wf
from tests.support.requests import file_gateway

from storagebench.core.state import ConfigState
from storagebench.core.tags import TAG_CLIENT_TOKEN, TAG_CONFIG, TAG_RUN, TAG_STACK
from storagebench.gateway.plan import gateway_plan
from storagebench.request import FileGatewayTarget, parse_request
from storagebench.request.tags import MAX_USER_TAGS
from storagebench.workflow.artifact_keys import request_key
from storagebench.workflow.steps.provision import provision
from storagebench.workflow.steps.shared import tags

StateOf = Callable[..., ConfigState]
USER_TAGS = {"team": "storage", "cost-center": "CC 1234", "project": "nightly/ebs"}

GATEWAY_CONFIG: dict[str, Any] = {
    "id": "gw",
    "instance_type": "c5.4xlarge",
    "targets": [file_gateway()],
}


def test_provision_puts_the_request_tags_on_the_instance_volumes_and_file_systems(
    state_of: StateOf, fakes: Any
) -> None:
    provision(state_of("alpha", wf.request_doc(tags=USER_TAGS)), fakes.services)
    (launch,) = fakes.compute.launches  # TagSpecifications of the instance and of its volumes
    labelled = [launch.tags, *(spec.tags for spec in fakes.filesystems.specs)]
    assert [spec.kind for spec in fakes.filesystems.specs] == ["efs", "fsx_lustre"]
    for labels in labelled:
        assert labels.items() >= USER_TAGS.items()
        assert labels[TAG_RUN] == "run-1" and labels[TAG_CONFIG] == "alpha" and labels[TAG_STACK] == wf.STACK


def test_a_request_without_tags_gets_storagebench_tags_only(state_of: StateOf, fakes: Any) -> None:
    state = state_of("alpha")
    assert set(tags(fakes.services, state.item)) == {
        TAG_RUN,
        TAG_CONFIG,
        "storagebench:expires-at",
        TAG_STACK,
        "Name",
    }


def test_the_gateway_appliance_gateway_and_share_carry_them_within_50_tags(
    state_of: StateOf, fakes: Any
) -> None:
    most = {f"user-{n}": "v" for n in range(MAX_USER_TAGS)}
    request = parse_request(wf.request_doc(configs=[GATEWAY_CONFIG], tags=most))
    item = state_of("alpha").item.model_copy(update={"config_id": "gw"})
    # What Plan stores for a stack with File Gateway settings (these fakes have none)
    fakes.artifacts.put_json(request_key(item.run_id), request.model_dump(mode="json"))
    labels = tags(fakes.services, item)
    config = request.config("gw")
    (target,) = config.targets
    assert isinstance(target, FileGatewayTarget)
    plan = gateway_plan(
        config,
        target,
        run_id="run-1",
        region=wf.REGION,
        tags=labels,
        default_bucket="share-bucket",
        role_arn="arn:aws:iam::123456789012:role/share",
    )
    appliance = {**plan.launch.tags, TAG_CLIENT_TOKEN: plan.launch.client_token}  # what EC2 gets
    assert appliance.items() >= most.items() and plan.tags.items() >= most.items()  # gateway, share
    assert len(appliance) == 50

"""The janitor finds the stack's expired security and placement groups by tag and deletes them after
the instances that hold them; a live run's groups and other stacks' are left alone."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import boto3
from network_helpers import REGION, RUN, STACK, hold, network_spec

from storagebench.adapters.aws.ec2 import Ec2Compute
from storagebench.adapters.aws.filesystems import AwsFileSystems
from storagebench.adapters.aws.network import Ec2Network
from storagebench.adapters.aws.settings import AwsSettings
from storagebench.adapters.aws.sweep import AwsTaggedResources
from storagebench.core.state import NetworkSpec
from storagebench.janitor import Janitor
from storagebench.notify import LogNotifier

NOW = datetime(2030, 1, 1, 12, tzinfo=UTC)
PAST = "2030-01-01T09:00:00Z"
FUTURE = "2030-01-02T09:00:00Z"


class Clock:
    def now(self) -> datetime:
        return NOW


class NoRuns:
    def runs_in_progress_page(self, limit: int = 100, cursor: str | None = None) -> tuple[list[Any], None]:
        return [], None

    def fail_stuck_run(self, run_id: str, reason: str, ended_at: str) -> bool:
        raise AssertionError("no run is stuck")


def janitor(compute: Ec2Compute, settings: AwsSettings, network: Ec2Network | None = None) -> Janitor:
    filesystems = AwsFileSystems(
        boto3.client("efs", region_name=REGION), boto3.client("fsx", region_name=REGION), settings
    )
    return Janitor(
        resources=AwsTaggedResources(compute, filesystems, network=network),
        runs=NoRuns(),
        notifier=LogNotifier(),
        stack=STACK,
        clock=Clock(),
    )


def test_expired_groups_are_swept_after_the_instance_holding_them(
    ec2: Any, compute: Ec2Compute, network: Ec2Network, settings: AwsSettings, image_id: str
) -> None:
    expired = network.open(network_spec("old", expires=PAST))
    live = network.open(network_spec("live", expires=FUTURE))
    tags = [{"Key": k, "Value": v} for k, v in network_spec("old", expires=PAST).tags.items()]
    placed = {"Placement": {"GroupName": expired.placement_group}}
    tagged = {"TagSpecifications": [{"ResourceType": "instance", "Tags": tags}]}
    holder = hold(ec2, image_id, settings.subnet_id, expired.security_group_id, **placed, **tagged)
    other = NetworkSpec.model_validate(
        {
            **network_spec("theirs", expires=PAST).model_dump(),
            "tags": {**network_spec("theirs").tags, "storagebench:stack": "another"},
        }
    )
    theirs = network.open(other)

    report = janitor(compute, settings).sweep()  # the network adapter built from the compute's client

    swept = {leak.resource_id: (leak.kind, leak.outcome) for leak in report.leaks}
    assert swept == {
        holder: ("ec2-instance", "deleted"),
        expired.security_group_id: ("security-group", "deleted"),
        expired.placement_group: ("placement-group", "deleted"),
    }
    assert report.swept_by_kind() == {"ec2-instance": 1, "security-group": 1, "placement-group": 1}
    assert report.problems() == []
    assert network.find(RUN, "old") == []
    assert len(network.find(RUN, "live")) == 2  # not expired: left alone
    assert live.security_group_id in {g["GroupId"] for g in ec2.describe_security_groups()["SecurityGroups"]}
    assert theirs.security_group_id in {
        g["GroupId"] for g in ec2.describe_security_groups()["SecurityGroups"]
    }


def test_a_group_still_held_is_pending_for_the_next_sweep(
    ec2: Any, compute: Ec2Compute, network: Ec2Network, settings: AwsSettings, image_id: str
) -> None:
    """An instance of no expired run (untagged) holds the expired group: EC2 refuses, the sweep says
    pending and deletes it once the instance is gone."""
    expired = network.open(network_spec("old", placement=None, expires=PAST))
    holder = hold(ec2, image_id, settings.subnet_id, expired.security_group_id)
    first = janitor(compute, settings, network).sweep()
    assert [(x.resource_id, x.outcome) for x in first.leaks] == [(expired.security_group_id, "pending")]
    assert "DependencyViolation" in first.leaks[0].detail
    ec2.terminate_instances(InstanceIds=[holder])
    second = janitor(compute, settings, network).sweep()
    assert [(x.resource_id, x.outcome) for x in second.leaks] == [(expired.security_group_id, "deleted")]

"""The network adapter's own calls, recorded on moto and evaluated against template.yaml's IAM.

Provision opens a config's network (CreateSecurityGroup in the stack's VPC, its rules, the egress it
revokes, CreatePlacementGroup, their tags) and launches a node into it; Cleanup, SweepRun, Finalize
and the janitor close it: every call must be allowed. The same calls for a group that is not the
stack's (created with another stack's tag, or untagged, by hand) must be denied, so an allowed
verdict is never "everything is allowed". The calls are recorded by local mode's recorder
(storagebench_local.aws_calls) and mapped by call_checks.TABLE, as a local run's are.
"""

from __future__ import annotations

from collections.abc import Iterator

import boto3
import pytest

from storagebench.adapters.aws.ec2 import Ec2Compute
from storagebench.adapters.aws.network import Ec2Network
from storagebench.core.state import ImageRef, LaunchSpec, LaunchVolume, NetworkRef, NetworkSpec, PortRule
from storagebench.core.tags import TAG_CONFIG, TAG_EXPIRES, TAG_RUN, TAG_STACK
from storagebench_local.adapters.moto_ec2 import emulate_network
from storagebench_local.aws_calls import AwsCall, AwsCallRecorder

from .ec2_world import Recorded, decide, ec2_world, recording_on_moto
from .evaluator import DENIALS, Decision
from .template_policies import StackValues

REGION = "us-east-1"
RELEASING = ("CleanupFunction", "SweepRunFunction", "FinalizeFunction", "JanitorFunction")


def _labels(stack: str, config_id: str) -> dict[str, str]:
    return {TAG_RUN: "r1", TAG_CONFIG: config_id, TAG_EXPIRES: "2030-01-01T00:00:00Z", TAG_STACK: stack}


def _spec(stack: str, config_id: str) -> NetworkSpec:
    return NetworkSpec(
        run_id="r1",
        config_id=config_id,
        tags=_labels(stack, config_id),
        ingress=[PortRule(protocol="tcp", from_port=4420, to_port=4420)],
        placement="cluster",
    )


@pytest.fixture(scope="module")
def recorded() -> Iterator[Recorded]:
    """Provision opens the stack's config network and launches into it; the releasing roles close
    it; then the same calls on another stack's and an untagged group (which must be denied)."""
    emulate_network()
    with recording_on_moto(REGION) as recorder:
        yield _record(recorder)


def _record(recorder: AwsCallRecorder) -> Recorded:
    world = ec2_world(recorder, REGION, "10.40")
    ec2, values, settings, image = world.ec2, world.values, world.settings, world.image
    network = Ec2Network(ec2, settings)
    compute = Ec2Compute(ec2, boto3.client("ssm", region_name=REGION), settings)
    recorder.invoking("ProvisionFunction")
    ref = network.open(_spec(values.stack_name, "vsa"))
    assert ref.security_group_id is not None
    launched = compute.launch(
        LaunchSpec(
            client_token="t" * 64,
            instance_type="r5b.large",
            architecture="x86_64",
            root=LaunchVolume(
                target_id="root", member=0, device_name="/dev/xvda", volume_type="gp3", size_gib=8
            ),
            volumes=[],
            tags=_labels(values.stack_name, "vsa"),
            image=ImageRef(label="test", ami_id=image),
            security_group_ids=[ref.security_group_id],
            placement_group=ref.placement_group,
        )
    )
    recorder.invoking("CleanupFunction")
    compute.terminate(launched, "r1", "vsa")
    network.close(ref)
    for role in RELEASING[1:]:  # the others close what is left the same way: a group each
        recorder.invoking("ProvisionFunction")
        other = network.open(_spec(values.stack_name, role.lower()))
        recorder.invoking(role)
        network.close(other)
    # another stack's group, and an untagged one: the same calls, which IAM must refuse
    recorder.invoking("ProvisionFunction")
    foreign = network.open(_spec("someone-elses-stack", "foreign"))
    with recorder.aside():
        untagged = ec2.create_security_group(
            GroupName="by-hand", Description="untagged", VpcId=values.vpc_id
        )["GroupId"]
        ec2.create_placement_group(GroupName="by-hand", Strategy="spread")
    for role in ("CleanupFunction", "JanitorFunction"):
        recorder.invoking(role)
        network.close(foreign)
        network.close(NetworkRef(security_group_id=untagged))
        with recorder.aside():  # recreate what the first role's close deleted, for the second
            untagged = ec2.create_security_group(
                GroupName=f"by-hand-{role}", Description="u", VpcId=values.vpc_id
            )["GroupId"]
            foreign = network.open(_spec("someone-elses-stack", f"foreign-{role.lower()}"))
    recorder.invoking("CleanupFunction")
    network.close(NetworkRef(placement_group="by-hand"))
    found = Recorded(values)
    found.calls = list(recorder.calls)
    return found


def _foreign(call: AwsCall) -> bool:
    """A call on a group that is not the stack's: another stack's tag in its request, a group carrying
    another stack's tag or none (made by hand), or a delete of anything but the stack's."""
    sent = {
        t["Value"]
        for spec in call.params.get("TagSpecifications") or []
        for t in spec.get("Tags") or []
        if t["Key"] == TAG_STACK
    }
    carried = {f.get("tags", {}).get(TAG_STACK) for f in call.facts.values() if "tags" in f}
    names = (
        str(call.params.get("GroupName", "")),
        str((call.params.get("Placement") or {}).get("GroupName", "")),
    )
    by_hand = any(n.startswith("by-hand") for n in names)
    ours = StackValues().stack_name
    return (
        "someone-elses-stack" in sent | carried
        or by_hand
        or (call.operation.startswith(("Delete", "Authorize", "Revoke")) and ours not in carried)
    )


@pytest.fixture(scope="module")
def decisions(evaluator: None, recorded: Recorded) -> list[tuple[AwsCall, Decision]]:
    return decide(recorded.calls, recorded.values, REGION)


def test_the_recording_holds_every_network_call(recorded: Recorded) -> None:
    made = {(c.principal, c.operation) for c in recorded.calls}
    assert {
        ("ProvisionFunction", "CreateSecurityGroup"),
        ("ProvisionFunction", "AuthorizeSecurityGroupIngress"),
        ("ProvisionFunction", "AuthorizeSecurityGroupEgress"),
        ("ProvisionFunction", "RevokeSecurityGroupEgress"),
        ("ProvisionFunction", "CreatePlacementGroup"),
        ("ProvisionFunction", "RunInstances"),
        *((role, "DeleteSecurityGroup") for role in RELEASING),
        *((role, "DeletePlacementGroup") for role in RELEASING),
    } <= made


def test_the_stacks_network_calls_are_allowed(decisions: list[tuple[AwsCall, Decision]]) -> None:
    ours = [(c, d) for c, d in decisions if not _foreign(c)]
    assert len(ours) >= 20
    refused = [d.explain() for _, d in ours if d.error is not None or not d.allowed]
    assert not refused, "\n".join(refused)


def test_network_calls_on_groups_not_the_stacks_are_denied(decisions: list[tuple[AwsCall, Decision]]) -> None:
    foreign = [(c, d) for c, d in decisions if _foreign(c)]
    operations = {c.operation for c, _ in foreign}
    assert {
        "CreateSecurityGroup",
        "CreatePlacementGroup",
        "DeleteSecurityGroup",
        "DeletePlacementGroup",
    } <= operations
    # CreateSecurityGroup is authorised on the stack's VPC too (no tag there): that one request is allowed
    allowed = [
        d.explain()
        for c, d in foreign
        if d.decision not in DENIALS and not d.request.resource.endswith(f":vpc/{c.params.get('VpcId')}")
    ]
    assert not allowed, "\n".join(allowed)

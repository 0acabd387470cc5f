"""A node group's Multi-Attach volume, its calls recorded on moto and evaluated against template.yaml.

Provision launches two controller nodes sharing one io2 volume (RunInstances for each, CreateVolume
once with the stack's tags), CheckReady's poll attaches it to each node (AttachVolume), Cleanup
terminates the nodes and deletes it: every call must be allowed. The same calls for what is not the
stack's must be denied: CreateVolume with another stack's tag, a gp3 volume created the same way
(Multi-Attach is io1/io2: nothing else is created outside a launch), and AttachVolume of a volume
made by hand (untagged) to a stack node, so an allowed verdict is never "everything is allowed".
"""

from __future__ import annotations

from collections.abc import Iterator

import boto3
import pytest

from storagebench.adapters.aws.ec2 import Ec2Compute
from storagebench.adapters.aws.shared_volumes import ensure_volume
from storagebench.core.state import ImageRef, LaunchSpec, LaunchVolume
from storagebench.core.tags import TAG_CONFIG, TAG_EXPIRES, TAG_NODE, TAG_RUN, TAG_STACK
from storagebench_local.adapters.moto_ec2 import emulate_multi_attach
from storagebench_local.aws_calls import AwsCall, AwsCallRecorder

from .ec2_world import Recorded, decide, ec2_world, recording_on_moto
from .evaluator import DENIALS, Decision

REGION = "us-east-1"
SHARED = LaunchVolume(
    target_id="shared",
    member=0,
    device_name="/dev/sdf",
    volume_type="io2",
    size_gib=100,
    iops=5000,
    share_token="s" * 64,
)


def _labels(stack: str, node: str) -> dict[str, str]:
    return {
        TAG_RUN: "r1",
        TAG_CONFIG: "vsan",
        TAG_EXPIRES: "2030-01-01T00:00:00Z",
        TAG_STACK: stack,
        TAG_NODE: node,
        "Name": f"storagebench r1/vsan {node}",
    }


@pytest.fixture(scope="module")
def recorded() -> Iterator[Recorded]:
    emulate_multi_attach()
    with recording_on_moto(REGION) as recorder:
        yield _record(recorder)


def _record(recorder: AwsCallRecorder) -> Recorded:
    world = ec2_world(recorder, REGION, "10.41", zone=f"{REGION}a")
    ec2, values, settings, image = world.ec2, world.values, world.settings, world.image
    compute = Ec2Compute(ec2, boto3.client("ssm", region_name=REGION), settings)

    def node(index: int) -> LaunchSpec:
        return LaunchSpec(
            client_token=f"{index}" * 64,
            instance_type="r5b.large",
            architecture="x86_64",
            root=LaunchVolume(
                target_id="root", member=0, device_name="/dev/xvda", volume_type="gp3", size_gib=8
            ),
            volumes=[SHARED],
            tags=_labels(values.stack_name, f"controller-{index}"),
            image=ImageRef(label="test", ami_id=image),
        )

    recorder.invoking("ProvisionFunction")
    nodes = [compute.launch(node(0)), compute.launch(node(1))]
    recorder.invoking("CheckReadyFunction")
    for launched in nodes:
        compute.status(launched)
    recorder.invoking("CleanupFunction")
    for launched in nodes:
        compute.terminate(launched, "r1", "vsan")
    # what is not the stack's: another stack's volume, a gp3 one, a hand-made one attached to a node
    recorder.invoking("ProvisionFunction")
    foreign = _labels("someone-elses-stack", "controller-0")
    ensure_volume(ec2, SHARED.model_copy(update={"share_token": "f" * 64}), f"{REGION}a", foreign, None)
    stack_tags = [{"Key": k, "Value": v} for k, v in _labels(values.stack_name, "controller-0").items()]
    ec2.create_volume(  # a volume of another type, tagged as the stack's: only io1/io2 are made apart
        AvailabilityZone=f"{REGION}a",
        Size=10,
        VolumeType="gp3",
        TagSpecifications=[{"ResourceType": "volume", "Tags": stack_tags}],
    )
    standing = compute.launch(node(2))
    with recorder.aside():
        by_hand = ec2.create_volume(AvailabilityZone=f"{REGION}a", Size=10, VolumeType="io2", Iops=100)
    recorder.invoking("CheckReadyFunction")
    ec2.attach_volume(Device="/dev/sdg", InstanceId=str(standing.instance_id), VolumeId=by_hand["VolumeId"])
    found = Recorded(values)
    found.calls = list(recorder.calls)
    return found


def _foreign(call: AwsCall) -> bool:
    sent = {
        t["Value"]
        for spec in call.params.get("TagSpecifications") or []
        for t in spec.get("Tags") or []
        if t["Key"] == TAG_STACK
    }
    return (
        "someone-elses-stack" in sent
        or call.params.get("VolumeType") == "gp3"
        or call.params.get("Device") == "/dev/sdg"
    )


@pytest.fixture(scope="module")
def decisions(evaluator: None, recorded: Recorded) -> list[tuple[AwsCall, Decision]]:
    return decide(recorded.calls, recorded.values, REGION)


def test_the_recording_holds_every_multi_attach_call(recorded: Recorded) -> None:
    made = [(c.principal, c.operation) for c in recorded.calls if not _foreign(c)]
    launched = made[: made.index(("CleanupFunction", "TerminateInstances"))]  # the two nodes' run
    assert launched.count(("ProvisionFunction", "CreateVolume")) == 1  # once for the group
    assert launched.count(("ProvisionFunction", "RunInstances")) == 2
    assert made.count(("CheckReadyFunction", "AttachVolume")) == 2  # once per node
    assert ("CleanupFunction", "DeleteVolume") in made
    assert ("ProvisionFunction", "DescribeVolumes") in made  # the token's volume, looked up first


def test_the_stacks_multi_attach_calls_are_allowed(decisions: list[tuple[AwsCall, Decision]]) -> None:
    ours = [(c, d) for c, d in decisions if not _foreign(c)]
    operations = {c.operation for c, _ in ours}
    assert {"CreateVolume", "AttachVolume", "DeleteVolume", "TerminateInstances"} <= operations
    refused = [d.explain() for _, d in ours if d.error is not None or not d.allowed]
    assert not refused, "\n".join(refused)


def test_multi_attach_calls_on_what_is_not_the_stacks_are_denied(
    decisions: list[tuple[AwsCall, Decision]],
) -> None:
    foreign = [(c, d) for c, d in decisions if _foreign(c)]
    assert {c.operation for c, _ in foreign} == {"CreateVolume", "AttachVolume"}
    assert len({id(c) for c, _ in foreign}) == 3
    # each foreign call has at least one request IAM refuses (AttachVolume: the hand-made volume,
    # not the stack's instance; CreateVolume: the volume, and CreateTags with the other stack's tag)
    for call in {id(c): c for c, _ in foreign}.values():
        verdicts = [d for c, d in foreign if c is call]
        assert any(d.decision in DENIALS for d in verdicts), [d.explain() for d in verdicts]
    attach = [d for c, d in foreign if c.operation == "AttachVolume"]
    assert [d.allowed for d in attach] == [True, False]  # the stack's node yes, the untagged volume no

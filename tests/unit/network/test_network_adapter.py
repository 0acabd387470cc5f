"""Ec2Network on moto: a config's security group admits its rules from itself alone, its placement
group is tagged, a retry finds both, close waits for the instances, leftovers are found by tag."""

from __future__ import annotations

from typing import Any

import pytest
from botocore.stub import Stubber
from network_helpers import CHUNKS, NVME_OF, RUN, STACK, labels, network_spec
from pydantic import ValidationError

from storagebench.adapters.aws.network import Ec2Network, network_name
from storagebench.adapters.aws.settings import AwsSettings
from storagebench.core.errors import ProvisioningError, ResourceBusyError
from storagebench.core.state import NetworkRef, NetworkSpec, PortRule
from storagebench.core.tags import TAG_CONFIG, TAG_RUN, TAG_STACK


def _group(ec2: Any, group_id: str) -> dict[str, Any]:
    return dict(ec2.describe_security_groups(GroupIds=[group_id])["SecurityGroups"][0])


def _rules(permissions: list[dict[str, Any]]) -> set[tuple[str, int, int, tuple[str, ...]]]:
    """(protocol, from, to, sources) of each permission: sources are groups, CIDRs and prefix lists."""
    found = set()
    for p in permissions:
        sources = tuple(
            sorted(
                [str(g["GroupId"]) for g in p.get("UserIdGroupPairs") or []]
                + [str(r["CidrIp"]) for r in p.get("IpRanges") or []]
                + [str(r["CidrIpv6"]) for r in p.get("Ipv6Ranges") or []]
                + [str(r["PrefixListId"]) for r in p.get("PrefixListIds") or []]
            )
        )
        found.add((str(p["IpProtocol"]), int(p.get("FromPort", -1)), int(p.get("ToPort", -1)), sources))
    return found


def _launch(ec2: Any, settings: AwsSettings, image_id: str, ref: NetworkRef) -> str:
    request: dict[str, Any] = {
        "ImageId": image_id,
        "MinCount": 1,
        "MaxCount": 1,
        "InstanceType": "r5b.large",
        "SubnetId": settings.subnet_id,
        "SecurityGroupIds": [settings.security_group_id, ref.security_group_id],
    }
    if ref.placement_group:
        request["Placement"] = {"GroupName": ref.placement_group}
    return str(ec2.run_instances(**request)["Instances"][0]["InstanceId"])


# ------------------------------------------------------------------------ open


def test_open_makes_a_tagged_group_in_the_subnets_vpc_that_admits_each_rule_from_itself_only(
    ec2: Any, settings: AwsSettings, network: Ec2Network
) -> None:
    ref = network.open(network_spec())
    assert ref.security_group_id is not None
    group = _group(ec2, ref.security_group_id)
    vpc = ec2.describe_subnets(SubnetIds=[settings.subnet_id])["Subnets"][0]["VpcId"]
    assert group["VpcId"] == vpc
    assert group["GroupName"] == network_name(RUN, "vsa")
    tags = {t["Key"]: t["Value"] for t in group["Tags"]}
    assert tags == labels()
    own = (ref.security_group_id,)
    assert _rules(group["IpPermissions"]) == {("tcp", 4420, 4420, own), ("tcp", 9420, 9422, own)}
    # egress: the same ports to itself, and nothing else (the default allow-all rule is revoked)
    assert _rules(group["IpPermissionsEgress"]) == {("tcp", 4420, 4420, own), ("tcp", 9420, 9422, own)}


def test_open_makes_a_tagged_placement_group_of_the_asked_strategy(ec2: Any, network: Ec2Network) -> None:
    ref = network.open(network_spec(placement="spread"))
    assert ref.placement_group == network_name(RUN, "vsa")
    (group,) = ec2.describe_placement_groups(GroupNames=[ref.placement_group])["PlacementGroups"]
    assert group["Strategy"] == "spread"
    assert {t["Key"]: t["Value"] for t in group["Tags"]} == labels()


def test_no_placement_asked_makes_no_placement_group(ec2: Any, network: Ec2Network) -> None:
    ref = network.open(network_spec(placement=None))
    assert ref.placement_group is None
    assert ec2.describe_placement_groups()["PlacementGroups"] == []


def test_a_retried_open_finds_what_the_first_made_and_completes_its_rules(
    ec2: Any, settings: AwsSettings, network: Ec2Network
) -> None:
    """The first attempt created the groups and died before its rules: the retry meets
    InvalidGroup.Duplicate and InvalidPlacementGroup.Duplicate, describes, and opens the rules."""
    vpc = ec2.describe_subnets(SubnetIds=[settings.subnet_id])["Subnets"][0]["VpcId"]
    name = network_name(RUN, "vsa")
    tagged = [{"Key": k, "Value": v} for k, v in labels().items()]
    first = ec2.create_security_group(
        GroupName=name,
        Description="an earlier attempt",
        VpcId=vpc,
        TagSpecifications=[{"ResourceType": "security-group", "Tags": tagged}],
    )["GroupId"]
    ec2.create_placement_group(
        GroupName=name,
        Strategy="cluster",
        TagSpecifications=[{"ResourceType": "placement-group", "Tags": tagged}],
    )
    ref = network.open(network_spec())
    again = network.open(network_spec())
    assert ref == again == NetworkRef(security_group_id=first, placement_group=name)
    assert (
        len(
            ec2.describe_security_groups(Filters=[{"Name": "group-name", "Values": [name]}])["SecurityGroups"]
        )
        == 1
    )
    own = (first,)
    assert _rules(_group(ec2, first)["IpPermissions"]) == {("tcp", 4420, 4420, own), ("tcp", 9420, 9422, own)}


def test_open_refuses_a_group_of_that_name_that_is_not_this_configs(
    ec2: Any, settings: AwsSettings, network: Ec2Network
) -> None:
    vpc = ec2.describe_subnets(SubnetIds=[settings.subnet_id])["Subnets"][0]["VpcId"]
    ec2.create_security_group(GroupName=network_name(RUN, "vsa"), Description="someone else's", VpcId=vpc)
    with pytest.raises(ProvisioningError, match="refusing to open another config's group"):
        network.open(network_spec())


def test_open_refuses_a_placement_group_of_another_strategy(ec2: Any, network: Ec2Network) -> None:
    tagged = [{"Key": k, "Value": v} for k, v in labels().items()]
    ec2.create_placement_group(
        GroupName=network_name(RUN, "vsa"),
        Strategy="spread",
        TagSpecifications=[{"ResourceType": "placement-group", "Tags": tagged}],
    )
    with pytest.raises(ProvisioningError, match="strategy spread, not cluster"):
        network.open(network_spec(placement="cluster"))


def test_a_rule_added_by_hand_is_revoked_by_the_next_open(ec2: Any, network: Ec2Network) -> None:
    ref = network.open(network_spec())
    assert ref.security_group_id is not None
    ec2.authorize_security_group_ingress(
        GroupId=ref.security_group_id,
        IpPermissions=[
            {"IpProtocol": "tcp", "FromPort": 22, "ToPort": 22, "IpRanges": [{"CidrIp": "0.0.0.0/0"}]}
        ],
    )
    network.open(network_spec())
    own = (ref.security_group_id,)
    assert _rules(_group(ec2, ref.security_group_id)["IpPermissions"]) == {
        ("tcp", 4420, 4420, own),
        ("tcp", 9420, 9422, own),
    }


# ------------------------------------------------------------------------ close


def test_close_waits_for_the_instances_then_deletes_both_groups(
    ec2: Any, settings: AwsSettings, network: Ec2Network, image_id: str
) -> None:
    ref = network.open(network_spec())
    instance = _launch(ec2, settings, image_id, ref)
    with pytest.raises(ResourceBusyError, match="DependencyViolation"):
        network.close(ref)
    with pytest.raises(ResourceBusyError, match="still holds instances"):
        network.close(NetworkRef(placement_group=ref.placement_group))
    ec2.terminate_instances(InstanceIds=[instance])
    assert network.close(ref) == [ref.security_group_id, ref.placement_group]
    assert network.close(ref) == []  # already gone is done
    assert network.leftovers(RUN, "vsa") == []


def test_a_dependency_violation_from_ec2_is_busy_not_swallowed(settings: AwsSettings) -> None:
    """EC2's own answer, without the emulation: release retries it by name."""
    import boto3

    client = boto3.client("ec2", region_name="us-east-1")
    stub = Stubber(client)
    stub.add_client_error(
        "delete_security_group",
        service_error_code="DependencyViolation",
        service_message="resource sg-0123 has a dependent object",
        expected_params={"GroupId": "sg-0123"},
    )
    with stub, pytest.raises(ResourceBusyError, match="sg-0123: DependencyViolation"):
        Ec2Network(client, settings).close(NetworkRef(security_group_id="sg-0123"))
    stub.assert_no_pending_responses()


def test_another_refusal_of_a_delete_is_raised(settings: AwsSettings) -> None:
    import boto3

    client = boto3.client("ec2", region_name="us-east-1")
    stub = Stubber(client)
    stub.add_client_error("delete_placement_group", service_error_code="UnauthorizedOperation")
    with stub, pytest.raises(ProvisioningError, match="UnauthorizedOperation"):
        Ec2Network(client, settings).close(NetworkRef(placement_group="sb-1"))


# ------------------------------------------------------------------------ find and leftovers


def test_leftovers_and_find_are_this_configs_tagged_groups_only(ec2: Any, network: Ec2Network) -> None:
    mine = network.open(network_spec("vsa"))
    other = network.open(network_spec("io2", placement=None))
    assert sorted(network.leftovers(RUN, "vsa")) == sorted([mine.security_group_id, mine.placement_group])
    assert network.leftovers(RUN, "io2") == [other.security_group_id]
    assert network.find(RUN, "vsa") == [
        NetworkRef(security_group_id=mine.security_group_id),
        NetworkRef(placement_group=mine.placement_group),
    ]
    for group in ec2.describe_security_groups(GroupIds=[mine.security_group_id])["SecurityGroups"]:
        tags = {t["Key"]: t["Value"] for t in group["Tags"]}
        assert (tags[TAG_RUN], tags[TAG_CONFIG], tags[TAG_STACK]) == (RUN, "vsa", STACK)


# ------------------------------------------------------------------------ the models


@pytest.mark.parametrize(
    ("rule", "message"),
    [
        (
            {"protocol": "tcp", "from_port": 5000, "to_port": 4000},
            "tcp 5000-4000: from_port must not be above",
        ),
        ({"protocol": "tcp", "from_port": 0, "to_port": 10}, "greater than or equal to 1"),
        ({"protocol": "tcp", "from_port": 1, "to_port": 70000}, "less than or equal to 65535"),
        ({"protocol": "icmp", "from_port": 1, "to_port": 1}, "'tcp' or 'udp'"),
    ],
)
def test_a_bad_port_rule_is_refused_naming_what_is_allowed(rule: dict[str, Any], message: str) -> None:
    with pytest.raises(ValidationError, match=message):
        PortRule.model_validate(rule)


def test_a_bad_placement_strategy_is_refused() -> None:
    with pytest.raises(ValidationError, match="'cluster', 'spread' or 'partition'"):
        NetworkSpec(run_id=RUN, config_id="vsa", tags={}, ingress=[NVME_OF, CHUNKS], placement="rack")  # type: ignore[arg-type]


def test_a_declared_port_reads_as_a_rule() -> None:
    assert PortRule.parse("tcp/4420") == NVME_OF
    assert PortRule.parse("tcp/9420-9422") == CHUNKS
    assert PortRule.parse("udp/53") == PortRule(protocol="udp", from_port=53, to_port=53)
    with pytest.raises(ValueError, match="'tcp/nvme': expected tcp/<port>"):
        PortRule.parse("tcp/nvme")
    with pytest.raises(ValidationError, match="'tcp' or 'udp'"):
        PortRule.parse("sctp/9")

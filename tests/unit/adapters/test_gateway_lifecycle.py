"""The File Gateway lifecycle end to end: EC2 and S3 on moto, Storage Gateway through botocore's
Stubber (no emulator covers it) with responses shaped as the API documents them, and the appliance's
activation redirect served on 127.0.0.1. Every path ends with nothing left: no appliance, volume,
gateway, file share or object of the run."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, HTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

import boto3
import pytest
from botocore.stub import ANY, Stubber
from tests.support.requests import file_gateway

from storagebench.adapters.aws.activation import HttpActivationKeys
from storagebench.adapters.aws.ec2 import Ec2Compute, Image
from storagebench.adapters.aws.gateway_appliance import APPLIANCE_AMI_PARAMETER, Ec2Appliances
from storagebench.adapters.aws.settings import AwsSettings
from storagebench.adapters.aws.share_objects import S3ShareObjects
from storagebench.adapters.aws.storagegateway import StorageGateways
from storagebench.agent import targets as agent_targets
from storagebench.agent.emulate import EmulatedFleet
from storagebench.agent.log import Progress
from storagebench.agent.proc import CommandError
from storagebench.core.errors import NotYetConsistentError, ProvisioningError
from storagebench.core.state import GatewayRef, Resources
from storagebench.core.tags import TAG_CONFIG, TAG_RUN
from storagebench.gateway.lifecycle import GatewayPorts, GatewayProgress, advance, new_ref, release
from storagebench.gateway.plan import GIB, GatewayPlan, gateway_plan
from storagebench.kinds.file_gateway import file_gateway_mount
from storagebench.request import FileGatewayTarget, parse_request
from storagebench.workflow.bindings import launch_spec

REGION = "us-east-1"

RUN, CONFIG = "run-gw", "beta-gp2"
SHARE_BUCKET = "storagebench-share"
ROLE = "arn:aws:iam::123456789012:role/storagebench-share"
GATEWAY_ARN = "arn:aws:storagegateway:us-east-1:123456789012:gateway/sgw-12A3456B"
SHARE_ARN = "arn:aws:storagegateway:us-east-1:123456789012:share/share-ABCD1234"
KEY = "AAAAA-BBBBB-CCCCC-DDDDD-EEEEE"


# --------------------------------------------------------------------------- the appliance's HTTP side


@dataclass
class ActivationEndpoint:
    """What the appliance answers on GET /?activationRegion=<region> (302 with the key, by default)."""

    status: int = 302
    location: str = f"https://us-east-1.console.aws.amazon.com/storagegateway/activate?activationKey={KEY}"
    regions: list[str] = field(default_factory=list)


@pytest.fixture
def endpoint() -> Iterator[tuple[ActivationEndpoint, int]]:
    answer = ActivationEndpoint()

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            answer.regions += parse_qs(urlsplit(self.path).query).get("activationRegion", [])
            self.send_response(answer.status)
            if answer.status in (301, 302):
                self.send_header("Location", answer.location)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *args: Any) -> None:
            return

    server = HTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield answer, server.server_address[1]
    server.shutdown()
    server.server_close()


# --------------------------------------------------------------------------- Storage Gateway, stubbed


class GatewayLedger:
    """Gateways and file shares alive according to the calls that succeeded (the Stubber's answers)."""

    def __init__(self, client: Any) -> None:
        self.gateways: set[str] = set()
        self.shares: set[str] = set()
        self._params: dict[str, Any] = {}
        client.meta.events.register("provide-client-params.storagegateway.*", self._remember)
        client.meta.events.register("after-call.storagegateway.*", self._record)

    def _remember(self, params: dict[str, Any], **_: Any) -> None:
        self._params = dict(params)

    def _record(self, parsed: dict[str, Any], model: Any, **_: Any) -> None:
        error = parsed.get("Error")
        gone = error is not None and parsed.get("error", {}).get("errorCode") in ("GatewayNotFound",)
        if error is not None and not gone:
            return
        if model.name == "ActivateGateway":
            self.gateways.add(parsed["GatewayARN"])
        elif model.name == "DeleteGateway":
            self.gateways.discard(self._params["GatewayARN"])
        elif model.name == "CreateNFSFileShare":
            self.shares.add(parsed["FileShareARN"])
        elif model.name == "DeleteFileShare":
            self.shares.discard(self._params["FileShareARN"])


def sg_error(detail: str, message: str) -> dict[str, Any]:
    return {
        "service_error_code": "InvalidGatewayRequestException",
        "service_message": message,
        "http_status_code": 400,
        "modeled_fields": {"error": {"errorCode": detail}},
    }


def disk(disk_id: str, gib: int, allocation: str = "AVAILABLE") -> dict[str, Any]:
    return {
        "DiskId": disk_id,
        "DiskPath": f"/dev/{disk_id}",
        "DiskNode": "SCSI (0:1)",
        "DiskStatus": "present",
        "DiskSizeInBytes": gib * GIB,
        "DiskAllocationType": allocation,
    }


# --------------------------------------------------------------------------- the world


# Study 1's beta gateway: moto 5.2.5 drops Iops from RunInstances' block device mappings and then
# refuses io1, so the moto world runs the gp2 variant; the io1 request is checked as sent (below).
STUDY_CONFIG = {
    "id": CONFIG,
    "instance_type": "c5.large",
    "targets": [file_gateway(instance_type="c5.4xlarge", disk_type="gp2", cache_gib=512)],
}
ALPHA_GATEWAY = {
    **STUDY_CONFIG["targets"][0],  # type: ignore[index]
    "root_volume": {"type": "io1", "size_gib": 80, "iops": 4000},
    "cache_volumes": [{"type": "io1", "size_gib": 512, "iops": 1500}],
}


@dataclass
class World:
    plan: GatewayPlan
    ports: GatewayPorts
    stub: Stubber
    ledger: GatewayLedger
    endpoint: ActivationEndpoint
    client: Ec2Compute
    client_ip: str
    ec2: Any
    s3: Any

    def until_ready(self, ref: GatewayRef | None = None, polls: int = 10) -> GatewayProgress:
        progress = GatewayProgress(ref or new_ref(self.plan), "not started")
        for _ in range(polls):
            progress = advance(progress.ref, self.plan, self.ports, self.client_ip)
            if progress.ready:
                return progress
        return progress

    def live_instances(self) -> list[str]:
        filters = [
            {"Name": f"tag:{TAG_RUN}", "Values": [RUN]},
            {"Name": f"tag:{TAG_CONFIG}", "Values": [CONFIG]},
        ]
        reservations = self.ec2.describe_instances(Filters=filters)["Reservations"]
        return [
            i["InstanceId"]
            for r in reservations
            for i in r["Instances"]
            if i["State"]["Name"] not in ("terminated", "shutting-down")
        ]

    def objects(self) -> int:
        return int(self.s3.list_objects_v2(Bucket=SHARE_BUCKET, Prefix=self.plan.prefix).get("KeyCount", 0))

    def assert_nothing_left(self, leftovers: list[str]) -> None:
        assert leftovers == []
        assert self.ledger.gateways == set() and self.ledger.shares == set()
        assert self.live_instances() == [] and self.objects() == 0
        self.stub.assert_no_pending_responses()


@pytest.fixture
def world(
    settings: AwsSettings,
    ami: dict[str, str],
    network: dict[str, str],
    endpoint: tuple[ActivationEndpoint, int],
) -> Iterator[World]:
    ec2 = boto3.client("ec2", region_name=REGION)
    ssm = boto3.client("ssm", region_name=REGION)
    s3 = boto3.client("s3", region_name=REGION)
    s3.create_bucket(Bucket=SHARE_BUCKET)
    # moto refuses to hold a reserved /aws/ parameter it does not ship: the appliance's SSM answers
    # are stubbed with the public parameter's documented shape.
    appliance_ssm = boto3.client("ssm", region_name=REGION)
    ssm_stub = Stubber(appliance_ssm)
    ssm_stub.add_response(
        "get_parameter",
        {
            "Parameter": {
                "Name": APPLIANCE_AMI_PARAMETER,
                "Type": "String",
                "Value": ami["x86_64"],
                "Version": 1,
            }
        },
        {"Name": APPLIANCE_AMI_PARAMETER},
    )
    ssm_stub.activate()
    appliance_group = ec2.create_security_group(
        GroupName="storagebench-gateway", Description="appliance", VpcId=network["vpc"]
    )["GroupId"]
    document = {"name": "gw", "configs": [STUDY_CONFIG], "workloads": [{"profile": "dd-seq-write-1m-dsync"}]}
    config = parse_request(document).configs[0]
    target = config.targets[0]
    assert isinstance(target, FileGatewayTarget)
    tags = {TAG_RUN: RUN, TAG_CONFIG: CONFIG}
    plan = gateway_plan(
        config, target, run_id=RUN, region=REGION, tags=tags, default_bucket=SHARE_BUCKET, role_arn=ROLE
    )
    # The NFS client: the config's own instance, launched as the workflow does.
    client = Ec2Compute(ec2, ssm, settings)
    launched = client.launch(launch_spec(config, RUN, tags))
    client_ip = ec2.describe_instances(InstanceIds=[str(launched.instance_id)])["Reservations"][0][
        "Instances"
    ][0]["PrivateIpAddress"]
    gateway_client = boto3.client("storagegateway", region_name=REGION)
    ledger = GatewayLedger(gateway_client)
    answer, port = endpoint
    ports = GatewayPorts(
        appliances=Ec2Appliances(ec2, appliance_ssm, settings, appliance_group),
        keys=HttpActivationKeys(port=port, timeout_s=5, resolve=lambda ip: "127.0.0.1"),
        gateways=StorageGateways(gateway_client),
        objects=S3ShareObjects(s3),
    )
    with Stubber(gateway_client) as stub:
        yield World(plan, ports, stub, ledger, answer, client, client_ip, ec2, s3)


def expect_activation(world: World) -> None:
    world.stub.add_response("list_gateways", {"Gateways": []}, {})
    world.stub.add_response(
        "activate_gateway",
        {"GatewayARN": GATEWAY_ARN},
        {
            "ActivationKey": KEY,
            "GatewayName": world.plan.gateway_name,
            "GatewayTimezone": "GMT",
            "GatewayRegion": REGION,
            "GatewayType": "FILE_S3",
            "Tags": ANY,
        },
    )


def expect_cache(world: World) -> None:
    arn = {"GatewayARN": GATEWAY_ARN}
    world.stub.add_client_error(
        "list_local_disks", expected_params=arn, **sg_error("GatewayNotConnected", "not connected")
    )
    world.stub.add_response(
        "list_local_disks", {"GatewayARN": GATEWAY_ARN, "Disks": [disk("nvme1n1", 512)]}, arn
    )
    world.stub.add_response("add_cache", arn, {"GatewayARN": GATEWAY_ARN, "DiskIds": ["nvme1n1"]})


def share_info(world: World, status: str) -> dict[str, Any]:
    return {
        "NFSFileShareInfoList": [
            {
                "FileShareARN": SHARE_ARN,
                "FileShareId": "share-ABCD1234",
                "FileShareStatus": status,
                "GatewayARN": GATEWAY_ARN,
                "Path": f"/{world.plan.share_name}",
                "Role": ROLE,
                "LocationARN": world.plan.location_arn,
                "ClientList": [f"{world.client_ip}/32"],
                "Squash": "RootSquash",
            }
        ]
    }


def expect_share(world: World) -> None:
    world.stub.add_response(
        "create_nfs_file_share",
        {"FileShareARN": SHARE_ARN},
        {
            "ClientToken": world.plan.share_token,
            "GatewayARN": GATEWAY_ARN,
            "Role": ROLE,
            "LocationARN": f"arn:aws:s3:::{SHARE_BUCKET}/storagebench-share/{RUN}/{CONFIG}/share/",
            "ClientList": [f"{world.client_ip}/32"],
            "Squash": "RootSquash",
            "DefaultStorageClass": "S3_STANDARD",
            "FileShareName": world.plan.share_name,
            "Tags": ANY,
        },
    )
    listed = {"FileShareARNList": [SHARE_ARN]}
    world.stub.add_response("describe_nfs_file_shares", share_info(world, "CREATING"), listed)
    world.stub.add_response("describe_nfs_file_shares", share_info(world, "AVAILABLE"), listed)


def expect_listed_by_name(world: World) -> None:
    """ListGateways answers the config's gateway, active, under the name the plan gives it."""
    world.stub.add_response(
        "list_gateways",
        {
            "Gateways": [
                {
                    "GatewayARN": GATEWAY_ARN,
                    "GatewayName": world.plan.gateway_name,
                    "GatewayOperationalState": "ACTIVE",
                }
            ]
        },
        {},
    )


def expect_release(world: World, *, gateway: bool, share: bool) -> None:
    if not gateway:
        world.stub.add_response("list_gateways", {"Gateways": []}, {})
    else:
        shares = (
            [{"FileShareARN": SHARE_ARN, "FileShareType": "NFS", "GatewayARN": GATEWAY_ARN}] if share else []
        )
        world.stub.add_response(
            "list_file_shares", {"FileShareInfoList": shares}, {"GatewayARN": GATEWAY_ARN}
        )
        if share:
            world.stub.add_response(
                "delete_file_share",
                {"FileShareARN": SHARE_ARN},
                {"FileShareARN": SHARE_ARN, "ForceDelete": True},
            )
        world.stub.add_response("delete_gateway", {"GatewayARN": GATEWAY_ARN}, {"GatewayARN": GATEWAY_ARN})
    world.stub.add_response("list_gateways", {"Gateways": []}, {})  # the check by name


def finish(world: World, ref: GatewayRef | None, *, gateway: bool, share: bool) -> list[str]:
    """The config's cleanup: the gateway side first (its appliance), then the client, as Cleanup does."""
    expect_release(world, gateway=gateway, share=share)
    report = release(ref, world.plan, world.ports)
    world.client.terminate(Resources(), RUN, CONFIG)
    return [*report.leftovers, *world.client.leftovers(RUN, CONFIG)]


def share_writes(world: World, count: int = 3) -> None:
    """What the gateway uploads while the client writes: objects under the run's prefix."""
    for n in range(count):
        world.s3.put_object(Bucket=SHARE_BUCKET, Key=f"{world.plan.prefix}test{n}", Body=b"x")


# --------------------------------------------------------------------------- paths


def test_success_activates_adds_cache_shares_to_the_client_only_and_releases_everything(world: World) -> None:
    expect_activation(world)
    expect_cache(world)
    expect_share(world)
    progress = world.until_ready()
    assert progress.ready, progress.waiting_for
    ref = progress.ref
    assert world.endpoint.regions == [REGION]
    assert (ref.gateway_arn, ref.cache_disk_ids, ref.file_share_arn) == (GATEWAY_ARN, ["nvme1n1"], SHARE_ARN)
    assert ref.stage == "available" and ref.share_path == f"/{world.plan.share_name}"
    # The appliance: the File Gateway AMI's instance with the study's disks, in its own group, no profile.
    appliance = world.ec2.describe_instances(InstanceIds=[str(ref.appliance_id)])["Reservations"][0][
        "Instances"
    ][0]
    assert appliance["InstanceType"] == "c5.4xlarge" and "IamInstanceProfile" not in appliance
    assert [g["GroupName"] for g in appliance["SecurityGroups"]] == ["storagebench-gateway"]
    volumes = world.ec2.describe_volumes(VolumeIds=ref.appliance_volume_ids)["Volumes"]
    assert sorted((v["VolumeType"], v["Size"]) for v in volumes) == [("gp2", 80), ("gp2", 512)]
    # The client mounts what the share says, with the request's options.
    spec = file_gateway_mount(world.plan.target, str(ref.appliance_ip), str(ref.share_path))
    assert (
        spec["source"] == f"{ref.appliance_ip}:/{world.plan.share_name}"
        and spec["mount_options"] == "nolock,hard"
    )
    share_writes(world)
    assert world.ledger.gateways == {GATEWAY_ARN} and world.ledger.shares == {SHARE_ARN}
    leftovers = finish(world, ref, gateway=True, share=True)
    world.assert_nothing_left(leftovers)


def test_a_poll_after_a_lost_answer_creates_nothing_twice(world: World) -> None:
    expect_activation(world)
    world.stub.add_client_error(
        "list_local_disks", expected_params={"GatewayARN": GATEWAY_ARN}, **sg_error("GatewayNotConnected", "")
    )
    first = advance(new_ref(world.plan), world.plan, world.ports, world.client_ip)
    assert first.waiting_for is not None and "to connect" in first.waiting_for
    # The activation succeeded but its answer was lost: the next poll finds the gateway by name.
    lost = first.ref.model_copy(update={"gateway_arn": None})
    expect_listed_by_name(world)
    world.stub.add_response(
        "list_local_disks",
        {
            "GatewayARN": GATEWAY_ARN,
            "Disks": [disk("nvme1n1", 512, "CACHE STORAGE")],
        },  # AddCache answered too
        {"GatewayARN": GATEWAY_ARN},
    )
    expect_share(world)
    progress = world.until_ready(lost)
    assert progress.ready and progress.ref.cache_disk_ids == ["nvme1n1"]
    assert len(world.live_instances()) == 2  # one appliance (one client token) and the client
    world.assert_nothing_left(finish(world, progress.ref, gateway=True, share=True))


@pytest.mark.parametrize("refusal", ["redirect-without-key", "http-403", "key-expired"])
def test_activation_refused_fails_the_config_and_leaves_nothing(world: World, refusal: str) -> None:
    world.stub.add_response("list_gateways", {"Gateways": []}, {})
    if refusal == "redirect-without-key":
        world.endpoint.location = (
            "https://console.aws.amazon.com/storagegateway/activate?errorMessage=Gateway+is+already+activated"
        )
        match = "activation refused by appliance .*: Gateway is already activated"
    elif refusal == "http-403":
        world.endpoint.status = 403
        match = "activation refused: appliance .* answered HTTP 403"
    else:
        world.stub.add_client_error(
            "activate_gateway", **sg_error("ActivationKeyExpired", "The activation key has expired")
        )
        match = "activation refused: ActivationKeyExpired"
    with pytest.raises(ProvisioningError, match=match):
        world.until_ready()
    world.assert_nothing_left(finish(world, None, gateway=False, share=False))


def test_an_appliance_still_booting_is_waited_for(world: World) -> None:
    world.endpoint.status = 503
    world.stub.add_response("list_gateways", {"Gateways": []}, {})
    progress = advance(new_ref(world.plan), world.plan, world.ports, world.client_ip)
    assert progress.ref.stage == "activating"
    assert progress.waiting_for is not None and "answered HTTP 503 (still starting)" in progress.waiting_for
    world.assert_nothing_left(finish(world, progress.ref, gateway=False, share=False))


def test_a_missing_cache_disk_fails_the_config_and_leaves_nothing(world: World) -> None:
    expect_activation(world)
    world.stub.add_response(
        "list_local_disks",
        {"GatewayARN": GATEWAY_ARN, "Disks": [disk("nvme0n1", 80, "ROOT"), disk("nvme2n1", 150)]},
        {"GatewayARN": GATEWAY_ARN},
    )
    with pytest.raises(
        ProvisioningError, match=r"no free 512 GiB disk for its cache .*nvme2n1 150 GiB AVAILABLE"
    ):
        world.until_ready()
    world.assert_nothing_left(_release_after_activation(world))


def _release_after_activation(world: World) -> list[str]:
    """Cleanup without a recorded ref: the gateway is found by its name."""
    expect_listed_by_name(world)
    expect_release(world, gateway=True, share=False)
    report = release(None, world.plan, world.ports)
    world.client.terminate(Resources(), RUN, CONFIG)
    return [*report.leftovers, *world.client.leftovers(RUN, CONFIG)]


def test_share_creation_failing_fails_the_config_and_leaves_nothing(world: World) -> None:
    expect_activation(world)
    expect_cache(world)
    world.stub.add_client_error(
        "create_nfs_file_share",
        **sg_error("InvalidParameters", "The role cannot be assumed by storagegateway.amazonaws.com"),
    )
    with pytest.raises(
        ProvisioningError, match=r"create the NFS file share .*InvalidParameters: The role cannot be assumed"
    ):
        world.until_ready()
    world.assert_nothing_left(_release_after_activation(world))


def test_a_client_mount_failing_is_cleaned_up_like_any_failure(
    world: World, tmp_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    expect_activation(world)
    expect_cache(world)
    expect_share(world)
    ref = world.until_ready().ref
    spec = file_gateway_mount(world.plan.target, str(ref.appliance_ip), str(ref.share_path))

    def refuse(argv: Any, **_: Any) -> Any:
        raise CommandError(f"{' '.join(argv)} failed with status 32: mount.nfs: access denied by server")

    monkeypatch.setattr(agent_targets, "run", refuse)
    machine = agent_targets.Targets(
        "run", str(tmp_path / "mnt"), EmulatedFleet(str(tmp_path), "sb"), Progress(None, quiet=True)
    )
    with pytest.raises(agent_targets.TargetError, match="access denied by server"):
        machine.prepare(spec)
    assert machine.teardown()["status"] == "ok"
    world.assert_nothing_left(finish(world, ref, gateway=True, share=True))


def test_activation_key_is_read_from_the_redirect_never_followed(
    endpoint: tuple[ActivationEndpoint, int],
) -> None:
    answer, port = endpoint
    keys = HttpActivationKeys(port=port, resolve=lambda ip: "127.0.0.1")
    assert keys.fetch("10.40.1.25", "eu-west-1") == KEY
    assert answer.regions == ["eu-west-1"]


def test_an_appliance_that_does_not_answer_is_not_ready_yet() -> None:
    # Port 9 on 127.0.0.1 (discard) has no listener here: connection refused.
    with pytest.raises(NotYetConsistentError, match="does not answer on HTTP yet"):
        HttpActivationKeys(port=9, timeout_s=2, resolve=lambda ip: "127.0.0.1").fetch("10.40.1.25", REGION)


def test_the_alpha_appliance_is_requested_with_its_io1_disks_in_its_own_group(settings: AwsSettings) -> None:
    document = {
        "name": "gw",
        "configs": [{**STUDY_CONFIG, "id": "alpha-io1", "targets": [ALPHA_GATEWAY]}],
        "workloads": [{"profile": "dd-seq-write-1m-dsync"}],
    }
    config = parse_request(document).configs[0]
    target = config.targets[0]
    assert isinstance(target, FileGatewayTarget)
    plan = gateway_plan(config, target, run_id=RUN, region=REGION, tags={}, default_bucket="b", role_arn=ROLE)
    appliances = Ec2Appliances(None, None, settings, "sg-0appliance")
    request = appliances.compute.run_instances_request(
        plan.launch, Image("ami-0gateway", "/dev/xvda", "x86_64")
    )
    assert (request["ImageId"], request["InstanceType"]) == ("ami-0gateway", "c5.4xlarge")
    assert request["SecurityGroupIds"] == ["sg-0appliance"] and "IamInstanceProfile" not in request
    disks = [
        (m["DeviceName"], m["Ebs"]["VolumeType"], m["Ebs"]["VolumeSize"], m["Ebs"]["Iops"])
        for m in request["BlockDeviceMappings"]
    ]
    assert disks == [("/dev/xvda", "io1", 80, 4000), ("/dev/sdf", "io1", 512, 1500)]
    tags = {t["Key"]: t["Value"] for t in request["TagSpecifications"][0]["Tags"]}
    assert tags["storagebench:role"] == "gateway-appliance" and tags["storagebench:target-id"] == "share"

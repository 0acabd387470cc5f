"""Local mode's File Gateway ports (``adapters.local_gateway``) under the workflow's own lifecycle:
moto's EC2 gives the appliance its address, the NFS server is a stand-in object (the real one is
``tests/integration/local/test_nfs_client.py``'s). The share is CREATING until the server serves,
AVAILABLE at /<FileShareName> then; release stops the server and leaves nothing of the config."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar

import boto3
import pytest
from moto import mock_aws

from storagebench.core.errors import ProvisioningError
from storagebench.core.tags import TAG_CONFIG, TAG_RUN
from storagebench.gateway.lifecycle import GatewayPorts, advance, new_ref, release
from storagebench.gateway.plan import GatewayPlan, gateway_plan
from storagebench.request import FileGatewayTarget, parse_request
from storagebench_local.adapters import local_gateway
from storagebench_local.adapters.local_gateway import (
    LocalActivationKeys,
    LocalAppliances,
    LocalGatewayHost,
    LocalGateways,
    LocalShareObjects,
)
from storagebench_local.nfs_server import NfsServerError

EVENT = Path(__file__).resolve().parents[3] / "events" / "local-file-gateway.json"
RUN, CONFIG = "run-local-gw", "beta-gp2"


class FakeServer:
    """What the ports need of ``NfsServer``: it serves after ``polls`` readiness checks."""

    instances: ClassVar[list[FakeServer]] = []
    polls = 1
    fails = False

    def __init__(self, address: str, export_dir: Path, pseudo: str, directory: Path, preload: Path) -> None:
        self.address, self.export_dir, self.pseudo = address, export_dir, pseudo
        self.spawned = self.stopped = False
        self.checks = 0
        FakeServer.instances.append(self)

    @property
    def running(self) -> bool:
        return self.spawned and not self.stopped

    def spawn(self) -> None:
        self.spawned = True
        self.export_dir.mkdir(parents=True, exist_ok=True)

    def ready(self) -> bool:
        if FakeServer.fails:
            raise NfsServerError("ganesha.nfsd exited (2): Cannot bind NFS socket")
        self.checks += 1
        return self.checks > FakeServer.polls

    def stop(self) -> None:
        self.stopped = True


@pytest.fixture
def world(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[GatewayPlan, GatewayPorts, Any]]:
    FakeServer.instances, FakeServer.fails = [], False
    monkeypatch.setattr(local_gateway, "NfsServer", FakeServer)
    with mock_aws():
        ec2 = boto3.client("ec2", region_name="us-east-1")
        vpc = ec2.create_vpc(CidrBlock="10.42.0.0/16")["Vpc"]["VpcId"]
        subnet = ec2.create_subnet(VpcId=vpc, CidrBlock="10.42.1.0/24")["Subnet"]["SubnetId"]
        host = LocalGatewayHost(ec2, subnet, tmp_path / "gateways", tmp_path / "no_portmap.so", "us-east-1")
        ports = GatewayPorts(
            appliances=LocalAppliances(host),
            keys=LocalActivationKeys(host),
            gateways=LocalGateways(host),
            objects=LocalShareObjects(host),
        )
        request = parse_request(json.loads(EVENT.read_text()))
        config = request.configs[0]
        target = config.targets[0]
        assert isinstance(target, FileGatewayTarget)
        tags = {TAG_RUN: RUN, TAG_CONFIG: CONFIG}
        plan = gateway_plan(
            config, target, run_id=RUN, region="us-east-1", tags=tags, default_bucket="b", role_arn="arn:r"
        )
        yield plan, ports, ec2


def test_the_lifecycle_shares_a_local_nfs_export_and_releases_it(
    world: tuple[GatewayPlan, GatewayPorts, Any],
) -> None:
    plan, ports, ec2 = world
    ref = new_ref(plan)
    progress = advance(ref, plan, ports, client_ip="10.42.1.4")
    assert not progress.ready and "CREATING" in str(progress.waiting_for)  # the server does not serve yet
    [server] = FakeServer.instances
    assert server.spawned and server.pseudo == f"/{plan.share_name}"
    progress = advance(progress.ref, plan, ports, client_ip="10.42.1.4")
    assert progress.ready
    ref = progress.ref
    assert ref.share_path == f"/{plan.share_name}" and ref.appliance_ip == server.address
    assert ref.appliance_ip is not None and ref.appliance_ip.startswith(
        "127.42.1."
    )  # the subnet's loopback twin
    assert len(ref.cache_disk_ids) == 1  # the 512 GiB cache disk, matched by size
    (server.export_dir / "written-by-the-client").write_bytes(b"x")

    report = release(ref, plan.release_spec, ports)
    assert server.stopped
    assert report.leftovers == []
    assert ec2.describe_network_interfaces()["NetworkInterfaces"] == []
    assert not server.export_dir.exists()
    assert ports.gateways.find(plan.gateway_name) is None


def test_a_server_that_stops_fails_the_share_instead_of_waiting(
    world: tuple[GatewayPlan, GatewayPorts, Any],
) -> None:
    plan, ports, _ec2 = world
    FakeServer.fails = True
    with pytest.raises(ProvisioningError, match=r"its NFS server stopped: ganesha.nfsd exited \(2\)"):
        advance(new_ref(plan), plan, ports, client_ip="10.42.1.4")


def test_an_activation_key_no_appliance_gave_is_refused(world: tuple[GatewayPlan, GatewayPorts, Any]) -> None:
    _plan, ports, _ec2 = world
    with pytest.raises(ProvisioningError, match="is not one a running appliance of this session gave"):
        ports.gateways.activate("AAAAA-BBBBB-CCCCC-DDDDD-EEEEE", "gw", "us-east-1", {})

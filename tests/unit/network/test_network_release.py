"""Release closes the config's network after its instances, recorded or found by tag, and the
leftover check names a group that is still there."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from network_helpers import RUN, hold, launch_spec, network_spec

from storagebench.adapters.aws.ec2 import Ec2Compute
from storagebench.adapters.aws.network import Ec2Network
from storagebench.adapters.aws.settings import AwsSettings
from storagebench.core.errors import ProvisioningError, ResourceBusyError
from storagebench.core.state import (
    AgentRun,
    ConfigState,
    FileSystemRef,
    FileSystemSpec,
    NetworkRef,
    Resources,
)
from storagebench.workflow.ports import Network, NoNetwork, Services
from storagebench.workflow.steps.cleanup import release


class NoFileSystems:
    def create(self, spec: FileSystemSpec, subnet_hint: Resources | None) -> FileSystemRef:
        raise AssertionError("release creates nothing")

    def status(self, ref: FileSystemRef) -> str:
        raise AssertionError("release asks no status")

    def delete(self, ref: FileSystemRef) -> None:
        raise AssertionError(f"no file system to delete: {ref}")

    def find(self, run_id: str, config_id: str) -> list[FileSystemRef]:
        return []


class StoppedAgents:
    def online(self, resources: Resources) -> bool:
        return False

    def principal(self, instance_id: str) -> str:
        return f"AROAEXAMPLE:{instance_id}"

    def start(self, *args: Any, **kwargs: Any) -> AgentRun:
        raise AssertionError("release starts no agent")

    def stop(self, run_id: str, config_id: str, resources: Resources) -> list[str]:
        return []


class Unused:
    """Artifacts and store: release needs neither (no gateways)."""

    def __getattr__(self, name: str) -> Any:
        raise AssertionError(f"release used {name}")


def services(compute: Ec2Compute, network: Network) -> Services:
    return Services(
        compute=compute,
        filesystems=NoFileSystems(),
        agents=StoppedAgents(),
        artifacts=Unused(),  # type: ignore[arg-type]
        store=Unused(),  # type: ignore[arg-type]
        network=network,
    )


def launch(compute: Ec2Compute, image_id: str, ref: NetworkRef, token: str = "t") -> Resources:
    assert ref.security_group_id is not None
    spec = launch_spec(image_id, [ref.security_group_id], ref.placement_group, token)
    return compute.launch(spec).model_copy(update={"network": ref})


def test_release_terminates_the_nodes_then_closes_the_recorded_network(
    ec2: Any, compute: Ec2Compute, network: Ec2Network, image_id: str
) -> None:
    ref = network.open(network_spec())
    resources = launch(compute, image_id, ref)
    report = release(RUN, "vsa", resources, services(compute, network))
    # the instance (and its root volume) first: EC2 refuses to delete a group an instance holds
    assert report.deleted[0] == resources.instance_id
    assert report.deleted[-2:] == [ref.security_group_id, ref.placement_group]
    assert report.leftovers == []
    assert network.find(RUN, "vsa") == []
    assert ec2.describe_placement_groups()["PlacementGroups"] == []


def test_a_network_the_state_lost_is_found_by_its_tags_and_closed(
    compute: Ec2Compute, network: Ec2Network, image_id: str
) -> None:
    ref = network.open(network_spec())
    launched = launch(compute, image_id, ref)
    report = release(RUN, "vsa", Resources(), services(compute, network))  # an aborted execution: ids only
    assert report.deleted[0] == launched.instance_id
    assert report.deleted[-2:] == [ref.security_group_id, ref.placement_group]
    assert report.leftovers == []


def test_a_group_still_held_raises_busy_and_the_retry_finishes(
    ec2: Any, compute: Ec2Compute, network: Ec2Network, settings: AwsSettings, image_id: str
) -> None:
    """An instance the config does not know of (no tags: terminate cannot find it) still holds the
    group: release raises ResourceBusyError, which Cleanup retries; never a silent success."""
    ref = network.open(network_spec(placement=None))
    holder = hold(ec2, image_id, settings.subnet_id, ref.security_group_id)
    resources = Resources(network=ref)
    with pytest.raises(ResourceBusyError, match="DependencyViolation"):
        release(RUN, "vsa", resources, services(compute, network))
    ec2.terminate_instances(InstanceIds=[holder])
    report = release(RUN, "vsa", resources, services(compute, network))
    assert report.deleted == [ref.security_group_id]
    assert report.leftovers == []


class ForgetfulNetwork(Ec2Network):
    """Closes nothing: what is left must show in the leftover check."""

    def close(self, ref: NetworkRef) -> list[str]:
        return []


def test_the_leftover_check_names_groups_still_tagged(
    ec2: Any, settings: AwsSettings, compute: Ec2Compute, network: Ec2Network
) -> None:
    ref = network.open(network_spec())
    report = release(RUN, "vsa", Resources(network=ref), services(compute, ForgetfulNetwork(ec2, settings)))
    assert sorted(report.leftovers) == sorted([ref.security_group_id, ref.placement_group])


def test_services_without_a_network_release_as_before_and_refuse_to_open_one(
    compute: Ec2Compute, tmp_path: Path
) -> None:
    plain = services(compute, NoNetwork())
    assert release(RUN, "vsa", Resources(), plain).leftovers == []
    with pytest.raises(ProvisioningError, match="no network port"):
        plain.network.open(network_spec())
    with pytest.raises(ProvisioningError, match="no network port to delete"):
        plain.network.close(NetworkRef(security_group_id="sg-1"))
    state = ConfigState.model_fields["resources"].default_factory()  # type: ignore[misc]
    assert state.network is None

"""From a config and what Provision created to the agent's targets, and to launch specs.

Device names are requested in order (/dev/sdf, /dev/sdg, ...) but the agent finds volumes by
NVMe serial (volume id), so the name only matters on Xen instances. Each EBS target also
carries its requested volume type and size, which the manifest records and which local mode
uses to stand a loop device in for the volume.
"""

from __future__ import annotations

from storagebench.agent.plan import TargetSpec
from storagebench.catalog import architecture
from storagebench.catalog.images import image_ref
from storagebench.core.launch import DATA_DEVICE_LETTERS, ROOT_DEVICE, Market, client_token
from storagebench.core.state import LaunchSpec, LaunchVolume, Resources
from storagebench.kinds import kind_of, storage_option
from storagebench.request.model import Config

__all__ = ["agent_targets", "launch_spec", "storage_option"]  # storage_option: kinds' own, re-exported


def launch_spec(
    config: Config, run_id: str, tags: dict[str, str], *, market: Market = "on-demand"
) -> LaunchSpec:
    """The config's instance and volumes, bought on ``market`` (``request.purchase.market_for``)."""
    root = config.root_volume
    devices = (f"/dev/sd{letter}" for letter in DATA_DEVICE_LETTERS)
    volumes: list[LaunchVolume] = []
    for target in config.targets:
        volumes += kind_of(target).launch_volumes(target, devices)
    return LaunchSpec(
        client_token=client_token(run_id, config.id),
        instance_type=config.instance_type,
        architecture=architecture(config.instance_type),
        root=LaunchVolume(
            target_id="root",
            member=0,
            device_name=ROOT_DEVICE,
            volume_type=root.type,
            size_gib=root.size_gib,
            iops=root.iops,
            throughput_mibps=root.throughput_mibps,
            encrypted=root.encrypted,
        ),
        volumes=volumes,
        tags=tags,
        image=image_ref(config.image, architecture(config.instance_type)),
        ebs_optimized=config.launch_ebs_optimized,
        market=market,
    )


def agent_targets(config: Config, resources: Resources, region: str) -> list[TargetSpec]:
    """The plan's targets for what Provision created (AWS bindings)."""
    return [kind_of(target).agent_spec(target, resources, region) for target in config.targets]

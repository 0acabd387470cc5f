"""From a config and what Provision created to the agent's targets, and to launch specs.

Device names are requested in order (/dev/sdf, /dev/sdg, ...) but the agent finds volumes by
NVMe serial (volume id), so the name only matters on Xen instances. Each EBS target also
carries its requested volume type and size, which the manifest records and which local mode
uses to stand a loop device in for the volume.
"""

from __future__ import annotations

from storagebench.catalog import architecture
from storagebench.catalog.images import image_ref
from storagebench.core.launch import DATA_DEVICE_LETTERS, ROOT_DEVICE, Market, client_token
from storagebench.core.state import LaunchSpec, LaunchVolume, NetworkRef, Resources
from storagebench.kinds import kind_of, storage_option
from storagebench.protocol.plan import TargetSpec
from storagebench.request.model import Config, NodeGroup

__all__ = ["agent_targets", "launch_spec", "storage_option"]  # storage_option: kinds' own, re-exported


def launch_spec(
    config: Config,
    run_id: str,
    tags: dict[str, str],
    *,
    market: Market = "on-demand",
    machine: NodeGroup | None = None,
    name: str | None = None,
    network: NetworkRef | None = None,
) -> LaunchSpec:
    """The config's instance and volumes, bought on ``market`` (``request.purchase.market_for``).

    ``name`` launches another machine of the config (``controller-2``, ``client-1``; its own client
    token): a node of ``machine``'s group with that group's type, image and volumes, or, without a
    group, another client like the config's instance. ``network`` puts it in the config's groups."""
    shape: Config | NodeGroup = machine if machine is not None else config
    root = shape.root_volume
    devices = (f"/dev/sd{letter}" for letter in DATA_DEVICE_LETTERS)
    volumes: list[LaunchVolume] = []
    # An extra client mounts the config's shared targets: it has no volumes of its own.
    for target in shape.targets if machine is not None or name is None else []:
        volumes += kind_of(target).launch_volumes(target, devices)
    if machine is not None:  # a Multi-Attach volume: one token for the group, whichever node creates it
        volumes = [
            v.model_copy(
                update={"share_token": client_token(run_id, f"{config.id}/{machine.role}/{v.share_token}")}
            )
            if v.share_token is not None
            else v
            for v in volumes
        ]
    return LaunchSpec(
        client_token=client_token(run_id, config.id if name is None else f"{config.id}/{name}"),
        instance_type=shape.instance_type,
        architecture=architecture(shape.instance_type),
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
        image=image_ref(shape.image, architecture(shape.instance_type)),
        ebs_optimized=shape.launch_ebs_optimized,
        market=market,
        security_group_ids=[network.security_group_id] if network and network.security_group_id else [],
        placement_group=network.placement_group if network else None,
    )


def agent_targets(config: Config, resources: Resources, region: str) -> list[TargetSpec]:
    """The plan's targets for what Provision created (AWS bindings)."""
    return [kind_of(target).agent_spec(target, resources, region) for target in config.targets]

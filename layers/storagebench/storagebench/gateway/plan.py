"""A config's File Gateway target resolved for one run: appliance launch spec, names, S3 location."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from storagebench.core.launch import DATA_DEVICE_LETTERS, ROOT_DEVICE, client_token
from storagebench.core.state import GatewayRef, LaunchSpec, LaunchVolume
from storagebench.core.tags import TAG_ROLE, TAG_TARGET
from storagebench.request.model import Config, FileGatewayTarget, GatewayVolume

APPLIANCE_ROLE = "gateway-appliance"
GIB = 1 << 30


@dataclass(frozen=True)
class GatewayPlan:
    target: FileGatewayTarget
    run_id: str
    config_id: str
    region: str
    launch: LaunchSpec
    gateway_name: str
    bucket: str
    prefix: str
    role_arn: str
    tags: dict[str, str]

    @property
    def release_spec(self) -> ReleaseSpec:
        return ReleaseSpec(self.run_id, self.config_id, self.gateway_name, self.bucket, self.prefix)

    @property
    def location_arn(self) -> str:
        return f"arn:{partition(self.region)}:s3:::{self.bucket}/{self.prefix}"

    @property
    def share_token(self) -> str:
        """CreateNFSFileShare's ClientToken: a retried create returns the first share."""
        return hashlib.sha256(f"{self.gateway_name}\nshare".encode()).hexdigest()[:64]

    @property
    def share_name(self) -> str:
        """FileShareName, hence the export path /<name> the client mounts."""
        return f"sb-{hashlib.sha256(self.gateway_name.encode()).hexdigest()[:20]}"


def partition(region: str) -> str:
    if region.startswith("cn-"):
        return "aws-cn"
    return "aws-us-gov" if region.startswith("us-gov-") else "aws"


def _volume(target_id: str, member: int, device: str, volume: GatewayVolume) -> LaunchVolume:
    return LaunchVolume(
        target_id=target_id,
        member=member,
        device_name=device,
        volume_type=volume.type,
        size_gib=volume.size_gib,
        iops=volume.iops,
        throughput_mibps=volume.throughput_mibps,
        encrypted=volume.encrypted,
    )


@dataclass(frozen=True)
class ReleaseSpec:
    """What releasing one gateway needs: no request, so a run whose request is gone still releases."""

    run_id: str
    config_id: str
    gateway_name: str
    bucket: str
    prefix: str


def gateway_name(run_id: str, config_id: str, target_id: str) -> str:
    """The gateway's name, derived from ids alone (release finds an unrecorded gateway by it)."""
    return f"storagebench-{run_id}-{config_id}-{target_id}"[:255]


def release_spec_of_ref(run_id: str, config_id: str, ref: GatewayRef) -> ReleaseSpec:
    """A recorded gateway's release, from the state alone."""
    return ReleaseSpec(
        run_id, config_id, gateway_name(run_id, config_id, ref.target_id), ref.bucket, ref.prefix
    )


def gateway_plan(
    config: Config,
    target: FileGatewayTarget,
    *,
    run_id: str,
    region: str,
    tags: dict[str, str],
    default_bucket: str,
    role_arn: str,
) -> GatewayPlan:
    """The appliance (File Gateway AMI, its root and cache disks), the gateway's name and the share's
    S3 location: the request's bucket or the stack's, under a prefix of this run's own."""
    tid = str(target.id)
    labels = {**tags, TAG_TARGET: tid, TAG_ROLE: APPLIANCE_ROLE}
    launch = LaunchSpec(
        client_token=client_token(run_id, f"{config.id}/{tid}/gateway"),
        instance_type=target.gateway_instance_type,
        architecture="x86_64",  # the File Gateway AMI exists for x86_64 only
        root=_volume(f"{tid}/gateway-root", 0, ROOT_DEVICE, target.root_volume),
        volumes=[
            _volume(f"{tid}/gateway-cache", member, f"/dev/sd{DATA_DEVICE_LETTERS[member]}", volume)
            for member, volume in enumerate(target.cache_volumes)
        ],
        tags=labels,
    )
    run_part = f"{run_id}/{config.id}/{tid}/"
    prefix = f"{target.prefix.strip('/')}/{run_part}" if target.prefix else f"storagebench-share/{run_part}"
    return GatewayPlan(
        target=target,
        run_id=run_id,
        config_id=config.id,
        region=region,
        launch=launch,
        gateway_name=gateway_name(run_id, config.id, tid),
        bucket=target.bucket or default_bucket,
        prefix=prefix,
        role_arn=role_arn,
        tags=labels,
    )

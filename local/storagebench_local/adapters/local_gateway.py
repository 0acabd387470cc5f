"""The File Gateway on this machine: the gateway ports of ``gateway.ports`` served by a real NFS server.

No emulator covers Storage Gateway, and its appliance is a closed AMI, so local mode stands in for
the machine under the lifecycle, not for the lifecycle: the workflow's own ``gateway.lifecycle``
launches, activates, adds cache, creates the share, waits for AVAILABLE and releases, through these
ports. The appliance is an address of its own in the stack's subnet (a moto network interface,
tagged like the appliance, answering on its loopback twin, ``moto_ec2.loopback_address``) and a
directory of this session; CreateNFSFileShare starts nfs-ganesha there (``nfs_server``) exporting
the share's directory at ``/<FileShareName>``, the path the client mounts, as the gateway does.
What the share holds stands in for the objects in S3 under the run's prefix: ``ShareObjects``
counts and deletes the files of that directory. Releasing stops the server and deletes the
interface and the directory. The appliance's cache disks are reported at their requested sizes;
nothing models the appliance's cache or its upload to S3 (docs/local-mode.md says so).
"""

from __future__ import annotations

import hashlib
import shutil
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from storagebench.core.errors import NotYetConsistentError, ProvisioningError
from storagebench.core.state import LaunchSpec
from storagebench.core.tags import TAG_CONFIG, TAG_RUN
from storagebench.gateway.models import ApplianceStatus, LocalDisk, ShareSpec
from storagebench.gateway.plan import GIB
from storagebench_local.adapters.moto_ec2 import loopback_address
from storagebench_local.gateway_sweep import write_owner
from storagebench_local.nfs_server import NfsServer, NfsServerError

ACCOUNT = "123456789012"


def _short(text: str, length: int = 8) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:length]


@dataclass
class _Appliance:
    instance_id: str
    interface_id: str
    address: str
    tags: dict[str, str]
    disks: list[tuple[str, int]]  # (disk id, size in bytes): the cache volumes, in order
    directory: Path
    state: str = "running"


@dataclass
class _Share:
    arn: str
    gateway_arn: str
    spec: ShareSpec
    server: NfsServer

    @property
    def path(self) -> str:
        return f"/{self.spec.file_share_name}"


@dataclass
class _Gateway:
    arn: str
    name: str
    appliance: _Appliance
    region: str
    cache: list[str] = field(default_factory=list)


class LocalGatewayHost:
    """Every appliance, gateway and share of the session; the four ports are views of it."""

    def __init__(self, ec2: Any, subnet_id: str, directory: Path, preload: Path, region: str) -> None:
        self.ec2 = ec2
        self.subnet_id = subnet_id
        self.directory = directory
        self.preload = preload
        self.region = region
        self.lock = threading.RLock()
        self.appliances: dict[str, _Appliance] = {}  # by client token
        self.gateways: dict[str, _Gateway] = {}  # by ARN
        self.shares: dict[str, _Share] = {}  # by ARN

    # ---------------------------------------------------------------- appliances

    def launch(self, spec: LaunchSpec) -> ApplianceStatus:
        with self.lock:
            appliance = self.appliances.get(spec.client_token)
            if appliance is None:
                tags = [{"Key": k, "Value": v} for k, v in spec.tags.items()]
                interface = self.ec2.create_network_interface(
                    SubnetId=self.subnet_id,
                    Description="storagebench local File Gateway appliance",
                    TagSpecifications=[{"ResourceType": "network-interface", "Tags": tags}],
                )["NetworkInterface"]
                instance_id = f"i-{_short(spec.client_token, 17)}"
                disks = [
                    (f"{instance_id}-cache{n}", volume.size_gib * GIB)
                    for n, volume in enumerate(spec.volumes)
                ]
                appliance = _Appliance(
                    instance_id=instance_id,
                    interface_id=interface["NetworkInterfaceId"],
                    address=loopback_address(interface["PrivateIpAddress"]),
                    tags=dict(spec.tags),
                    disks=disks,
                    directory=self.directory / instance_id,
                )
                # the run and config, for `storagebench cleanup --run` after a killed session
                write_owner(appliance.directory, spec.tags.get(TAG_RUN, ""), spec.tags.get(TAG_CONFIG, ""))
                self.appliances[spec.client_token] = appliance
            return self._status(appliance)

    def _status(self, appliance: _Appliance) -> ApplianceStatus:
        return ApplianceStatus(
            instance_id=appliance.instance_id,
            state=appliance.state,
            private_ip=appliance.address if appliance.state == "running" else None,
            volume_ids=[disk for disk, _size in appliance.disks],
        )

    def appliance(self, instance_id: str) -> _Appliance:
        with self.lock:
            found = next((a for a in self.appliances.values() if a.instance_id == instance_id), None)
        if found is None:
            raise NotYetConsistentError(f"appliance {instance_id} is not known (yet)")
        return found

    def _of_config(self, run_id: str, config_id: str) -> list[_Appliance]:
        return [
            a
            for a in self.appliances.values()
            if a.tags.get(TAG_RUN) == run_id
            and a.tags.get(TAG_CONFIG) == config_id
            and a.state != "terminated"
        ]

    def terminate(self, run_id: str, config_id: str, instance_id: str | None) -> list[str]:
        deleted: list[str] = []
        with self.lock:
            doomed = self._of_config(run_id, config_id)
            if instance_id is not None:
                doomed += [
                    a for a in self.appliances.values() if a.instance_id == instance_id and a not in doomed
                ]
            for appliance in doomed:
                for share in [s for s in self.shares.values() if s.server.address == appliance.address]:
                    share.server.stop()
                self.ec2.delete_network_interface(NetworkInterfaceId=appliance.interface_id)
                shutil.rmtree(appliance.directory, ignore_errors=False)
                appliance.state = "terminated"
                deleted.append(
                    f"appliance {appliance.instance_id} ({appliance.address}, its NFS server and disks)"
                )
        return deleted

    def leftovers(self, run_id: str, config_id: str) -> list[str]:
        with self.lock:
            left = [f"appliance {a.instance_id}" for a in self._of_config(run_id, config_id)]
            left += [
                f"NFS server {s.server.address} ({s.path})"
                for s in self.shares.values()
                if s.server.running
                and s.spec.tags.get(TAG_RUN) == run_id
                and s.spec.tags.get(TAG_CONFIG) == config_id
            ]
        return left

    # ---------------------------------------------------------------- gateways

    def activation_key(self, appliance_ip: str) -> str:
        with self.lock:
            appliance = next(
                (a for a in self.appliances.values() if a.address == appliance_ip and a.state == "running"),
                None,
            )
        if appliance is None:
            raise NotYetConsistentError(f"no appliance answers on {appliance_ip}")
        return self._key(appliance)

    @staticmethod
    def _key(appliance: _Appliance) -> str:
        """The appliance's activation key (AWS's are five groups of five characters)."""
        digest = _short(f"activation {appliance.instance_id}", 25).upper()
        return "-".join(digest[n : n + 5] for n in range(0, 25, 5))

    def activate(self, key: str, name: str, region: str) -> str:
        with self.lock:
            appliance = next((a for a in self.appliances.values() if self._key(a) == key), None)
            if appliance is None or appliance.state != "running":
                raise ProvisioningError(
                    f"activation key {key!r} is not one a running appliance of this session gave"
                )
            existing = self.find(name)
            if existing is not None:
                return existing
            arn = f"arn:aws:storagegateway:{region}:{ACCOUNT}:gateway/sgw-{_short(name).upper()}"
            self.gateways[arn] = _Gateway(arn=arn, name=name, appliance=appliance, region=region)
            return arn

    def find(self, name: str) -> str | None:
        with self.lock:
            return next((g.arn for g in self.gateways.values() if g.name == name), None)

    def gateway(self, arn: str) -> _Gateway:
        with self.lock:
            found = self.gateways.get(arn)
        if found is None:
            raise ProvisioningError(f"gateway {arn} does not exist")
        return found

    def local_disks(self, arn: str) -> list[LocalDisk]:
        gateway = self.gateway(arn)
        return [
            LocalDisk(
                disk_id=disk,
                size_bytes=size,
                allocation="CACHE STORAGE" if disk in gateway.cache else "AVAILABLE",
                status="present",
            )
            for disk, size in gateway.appliance.disks
        ]

    def add_cache(self, arn: str, disk_ids: list[str]) -> None:
        gateway = self.gateway(arn)
        known = {disk for disk, _size in gateway.appliance.disks}
        unknown = [d for d in disk_ids if d not in known]
        if unknown:
            raise ProvisioningError(
                f"gateway {arn}: AddCache of disks it does not have: {', '.join(unknown)}"
            )
        with self.lock:
            gateway.cache = sorted(set(gateway.cache) | set(disk_ids))

    def create_share(self, arn: str, spec: ShareSpec) -> str:
        gateway = self.gateway(arn)
        share_id = f"share-{_short(spec.client_token).upper()}"
        share_arn = f"arn:aws:storagegateway:{gateway.region}:{ACCOUNT}:share/{share_id}"
        with self.lock:
            if share_arn in self.shares:
                return share_arn
            if not gateway.cache:
                raise ProvisioningError(
                    f"gateway {arn}: CreateNFSFileShare before AddCache (the gateway has no cache)"
                )
            appliance = gateway.appliance
            server = NfsServer(
                address=appliance.address,
                export_dir=appliance.directory / "share",
                pseudo=f"/{spec.file_share_name}",
                directory=appliance.directory / "nfs-server",
                preload=self.preload,
            )
            self.shares[share_arn] = _Share(share_arn, arn, spec, server)
        try:
            server.spawn()  # CreateNFSFileShare returns at once; the share is CREATING until it serves
        except NfsServerError as exc:
            raise ProvisioningError(
                f"file share {share_arn}: the local NFS server did not start: {exc}"
            ) from exc
        return share_arn

    def share(self, share_arn: str) -> tuple[str, str | None]:
        with self.lock:
            share = self.shares.get(share_arn)
        if share is None:
            raise ProvisioningError(f"file share {share_arn} does not exist")
        try:
            serving = share.server.ready()
        except NfsServerError as exc:  # never AVAILABLE: the readiness poll would wait for ever
            raise ProvisioningError(f"file share {share_arn}: its NFS server stopped: {exc}") from exc
        return ("AVAILABLE" if serving else "CREATING"), share.path

    def shares_of(self, arn: str) -> list[str]:
        with self.lock:
            return [s.arn for s in self.shares.values() if s.gateway_arn == arn]

    def delete_share(self, share_arn: str) -> None:
        with self.lock:
            share = self.shares.pop(share_arn, None)
        if share is not None:
            share.server.stop()

    def delete_gateway(self, arn: str) -> None:
        with self.lock:
            self.gateways.pop(arn, None)

    # ---------------------------------------------------------------- the share's objects

    def _share_directories(self, bucket: str, prefix: str) -> list[Path]:
        """The export directories of the shares writing to ``s3://bucket/prefix`` (of any gateway)."""
        with self.lock:
            return [
                s.server.export_dir
                for s in self.shares.values()
                if s.spec.location_arn.endswith(f":::{bucket}/{prefix}")
            ]

    def count(self, bucket: str, prefix: str) -> int:
        return sum(1 for d in self._share_directories(bucket, prefix) for p in d.rglob("*") if p.is_file())

    def delete_prefix(self, bucket: str, prefix: str) -> int:
        removed = 0
        for directory in self._share_directories(bucket, prefix):
            for path in sorted(directory.rglob("*"), reverse=True):
                if path.is_dir():
                    path.rmdir()
                else:
                    path.unlink()
                    removed += 1
        return removed

    def close(self) -> None:
        """The session ends: every NFS server stops (a run that did not clean up is a leak, still)."""
        with self.lock:
            servers = [s.server for s in self.shares.values()]
        for server in servers:
            server.stop()


class LocalAppliances:
    def __init__(self, host: LocalGatewayHost) -> None:
        self.host = host

    def launch(self, spec: LaunchSpec) -> ApplianceStatus:
        return self.host.launch(spec)

    def status(self, instance_id: str) -> ApplianceStatus:
        return self.host._status(self.host.appliance(instance_id))

    def terminate(self, run_id: str, config_id: str, instance_id: str | None) -> list[str]:
        return self.host.terminate(run_id, config_id, instance_id)

    def leftovers(self, run_id: str, config_id: str) -> list[str]:
        return self.host.leftovers(run_id, config_id)


class LocalActivationKeys:
    def __init__(self, host: LocalGatewayHost) -> None:
        self.host = host

    def fetch(self, appliance_ip: str, region: str) -> str:
        return self.host.activation_key(appliance_ip)


class LocalGateways:
    def __init__(self, host: LocalGatewayHost) -> None:
        self.host = host

    def activate(self, activation_key: str, name: str, region: str, tags: dict[str, str]) -> str:
        return self.host.activate(activation_key, name, region)

    def find(self, name: str) -> str | None:
        return self.host.find(name)

    def local_disks(self, gateway_arn: str) -> list[LocalDisk]:
        return self.host.local_disks(gateway_arn)

    def add_cache(self, gateway_arn: str, disk_ids: list[str]) -> None:
        self.host.add_cache(gateway_arn, disk_ids)

    def create_share(self, gateway_arn: str, spec: ShareSpec) -> str:
        return self.host.create_share(gateway_arn, spec)

    def share(self, share_arn: str) -> tuple[str, str | None]:
        return self.host.share(share_arn)

    def shares(self, gateway_arn: str) -> list[str]:
        return self.host.shares_of(gateway_arn)

    def delete_share(self, share_arn: str) -> None:
        self.host.delete_share(share_arn)

    def delete_gateway(self, gateway_arn: str) -> None:
        self.host.delete_gateway(gateway_arn)


class LocalShareObjects:
    def __init__(self, host: LocalGatewayHost) -> None:
        self.host = host

    def delete_prefix(self, bucket: str, prefix: str) -> int:
        return self.host.delete_prefix(bucket, prefix)

    def count(self, bucket: str, prefix: str) -> int:
        return self.host.count(bucket, prefix)

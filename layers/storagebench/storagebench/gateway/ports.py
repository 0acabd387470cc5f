"""What the gateway lifecycle needs from outside, as interfaces. Adapters raise ``core.errors``:
NotYetConsistentError while something is not there yet (the next poll tries again), ProvisioningError
when it never will be."""

from __future__ import annotations

from typing import Protocol

from storagebench.core.state import LaunchSpec
from storagebench.gateway.models import ApplianceStatus, LocalDisk, ShareSpec


class Appliances(Protocol):
    def launch(self, spec: LaunchSpec) -> ApplianceStatus:
        """Start the appliance (File Gateway AMI) with its disks; one instance per client token."""

    def status(self, instance_id: str) -> ApplianceStatus: ...

    def terminate(self, run_id: str, config_id: str, instance_id: str | None) -> list[str]:
        """Terminate the appliance (recorded, or found by tags) and delete its volumes. Idempotent."""

    def leftovers(self, run_id: str, config_id: str) -> list[str]:
        """Appliance instances and volumes still carrying this run's and config's tags."""


class ActivationKeys(Protocol):
    def fetch(self, appliance_ip: str, region: str) -> str:
        """GET http://<ip>/?activationRegion=<region>: the key in the redirect's ``activationKey``.
        NotYetConsistentError while the appliance does not answer; ProvisioningError when it refuses."""


class Gateways(Protocol):
    def activate(self, activation_key: str, name: str, region: str, tags: dict[str, str]) -> str:
        """ActivateGateway (FILE_S3); returns the gateway ARN."""

    def find(self, name: str) -> str | None:
        """The ARN of an active gateway with this name (an activation whose answer was lost)."""

    def local_disks(self, gateway_arn: str) -> list[LocalDisk]: ...

    def add_cache(self, gateway_arn: str, disk_ids: list[str]) -> None: ...

    def create_share(self, gateway_arn: str, spec: ShareSpec) -> str:
        """CreateNFSFileShare (idempotent by the spec's client token); returns the share ARN."""

    def share(self, share_arn: str) -> tuple[str, str | None]:
        """(FileShareStatus, Path) of the share: CREATING, UPDATING, AVAILABLE, DELETING."""

    def shares(self, gateway_arn: str) -> list[str]:
        """ARNs of the gateway's file shares."""

    def delete_share(self, share_arn: str) -> None:
        """DeleteFileShare with ForceDelete (the run's data need not reach S3); gone is fine."""

    def delete_gateway(self, gateway_arn: str) -> None:
        """DeleteGateway; gone is fine."""


class ShareObjects(Protocol):
    def delete_prefix(self, bucket: str, prefix: str) -> int:
        """Delete every object under the prefix; returns how many."""

    def count(self, bucket: str, prefix: str) -> int: ...

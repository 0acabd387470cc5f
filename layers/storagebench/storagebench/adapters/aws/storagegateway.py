"""``Gateways`` on AWS Storage Gateway (boto3 ``storagegateway``), errors mapped to the workflow's.

Storage Gateway reports most conditions as InvalidGatewayRequestException with a detailed
``error.errorCode``: GatewayNotConnected right after activation (retry on the next poll),
GatewayNotFound / FileShareNotFound on a delete already done (fine), activation key codes when the
appliance's key was refused (the config fails).
"""

from __future__ import annotations

from typing import Any

from storagebench.adapters.aws.errors import ClientError, aws_call, error_code, workflow_error
from storagebench.core.errors import NotYetConsistentError, ProvisioningError, WorkflowError
from storagebench.gateway.models import LocalDisk, ShareSpec

NOT_CONNECTED = frozenset(
    {"GatewayNotConnected", "GatewayProxyNetworkConnectionBusy", "NetworkConfigurationChanged"}
)
GONE = frozenset({"GatewayNotFound", "FileShareNotFound", "InvalidGateway"})
ACTIVATION = frozenset(
    {"ActivationKeyExpired", "ActivationKeyInvalid", "ActivationKeyNotFound", "RegionInvalid"}
)


def detail_code(exc: ClientError) -> str | None:
    """The ``error.errorCode`` Storage Gateway adds to its exceptions."""
    detail = exc.response.get("error") or exc.response.get("Error", {}).get("error") or {}
    code = detail.get("errorCode") if isinstance(detail, dict) else None
    return str(code) if code else None


def _mapped(exc: ClientError, action: str) -> WorkflowError:
    code = detail_code(exc)
    message = str(exc.response.get("Error", {}).get("Message", "")).strip()
    if code in NOT_CONNECTED:
        return NotYetConsistentError(f"{action}: {code}: {message}")
    if code in ACTIVATION:
        return ProvisioningError(f"{action}: activation refused: {code}: {message}")
    if code is not None and error_code(exc) == "InvalidGatewayRequestException":
        return ProvisioningError(f"{action}: {code}: {message}")
    return workflow_error(exc, action, ProvisioningError)


class StorageGateways:
    def __init__(self, client: Any) -> None:
        self.client = client

    def _call(self, action: str, method: str, **params: Any) -> dict[str, Any]:
        with aws_call(action, ProvisioningError):
            try:
                return dict(getattr(self.client, method)(**params))
            except ClientError as exc:
                raise _mapped(exc, action) from exc

    def activate(self, activation_key: str, name: str, region: str, tags: dict[str, str]) -> str:
        answer = self._call(
            f"activate gateway {name}",
            "activate_gateway",
            ActivationKey=activation_key,
            GatewayName=name,
            GatewayTimezone="GMT",
            GatewayRegion=region,
            GatewayType="FILE_S3",
            Tags=[{"Key": k, "Value": v} for k, v in sorted(tags.items())],
        )
        return str(answer["GatewayARN"])

    def find(self, name: str) -> str | None:
        with aws_call("list gateways", ProvisioningError):
            pages = self.client.get_paginator("list_gateways").paginate()
            for page in pages:
                for gateway in page.get("Gateways", []):
                    if (
                        gateway.get("GatewayName") == name
                        and gateway.get("GatewayOperationalState") != "DELETING"
                    ):
                        return str(gateway["GatewayARN"])
        return None

    def local_disks(self, gateway_arn: str) -> list[LocalDisk]:
        answer = self._call(f"list local disks of {gateway_arn}", "list_local_disks", GatewayARN=gateway_arn)
        return [
            LocalDisk(
                disk_id=str(d["DiskId"]),
                size_bytes=int(d.get("DiskSizeInBytes", 0)),
                allocation=str(d.get("DiskAllocationType", "")),
                status=d.get("DiskStatus"),
            )
            for d in answer.get("Disks", [])
        ]

    def add_cache(self, gateway_arn: str, disk_ids: list[str]) -> None:
        self._call(f"add cache to {gateway_arn}", "add_cache", GatewayARN=gateway_arn, DiskIds=disk_ids)

    def create_share(self, gateway_arn: str, spec: ShareSpec) -> str:
        answer = self._call(
            f"create the NFS file share on {gateway_arn}",
            "create_nfs_file_share",
            ClientToken=spec.client_token,
            GatewayARN=gateway_arn,
            Role=spec.role_arn,
            LocationARN=spec.location_arn,
            ClientList=spec.client_cidrs,
            Squash="RootSquash",
            DefaultStorageClass="S3_STANDARD",
            FileShareName=spec.file_share_name,
            Tags=[{"Key": k, "Value": v} for k, v in sorted(spec.tags.items())],
        )
        return str(answer["FileShareARN"])

    def share(self, share_arn: str) -> tuple[str, str | None]:
        answer = self._call(
            f"describe file share {share_arn}", "describe_nfs_file_shares", FileShareARNList=[share_arn]
        )
        infos = answer.get("NFSFileShareInfoList", [])
        if not infos:
            raise NotYetConsistentError(f"file share {share_arn} is not visible yet")
        return str(infos[0].get("FileShareStatus", "")), infos[0].get("Path")

    def shares(self, gateway_arn: str) -> list[str]:
        answer = self._call(f"list file shares of {gateway_arn}", "list_file_shares", GatewayARN=gateway_arn)
        return [str(s["FileShareARN"]) for s in answer.get("FileShareInfoList", [])]

    def delete_share(self, share_arn: str) -> None:
        self._delete(
            f"delete file share {share_arn}", "delete_file_share", FileShareARN=share_arn, ForceDelete=True
        )

    def delete_gateway(self, gateway_arn: str) -> None:
        self._delete(f"delete gateway {gateway_arn}", "delete_gateway", GatewayARN=gateway_arn)

    def _delete(self, action: str, method: str, **params: Any) -> None:
        with aws_call(action, ProvisioningError):
            try:
                getattr(self.client, method)(**params)
            except ClientError as exc:
                if detail_code(exc) not in GONE:
                    raise _mapped(exc, action) from exc

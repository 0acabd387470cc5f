"""The gateway's readiness as an idempotent progression, and its teardown.

Each ``advance`` does what the recorded state allows next and returns at the first thing that is
not there yet, so it runs inside the workflow's existing readiness poll: appliance launched ->
running with an address -> activation key fetched from the appliance and ActivateGateway ->
ListLocalDisks and AddCache -> CreateNFSFileShare (writable by the client's address only) ->
DescribeNFSFileShares until AVAILABLE. Every create is idempotent (client tokens, a gateway found by
name), so a poll retried after a lost answer never creates a second resource.
"""

from __future__ import annotations

from dataclasses import dataclass

from storagebench.core.errors import NotReadyError, NotYetConsistentError, ProvisioningError
from storagebench.core.state import GatewayRef
from storagebench.gateway.models import GatewayRelease, LocalDisk, ShareSpec
from storagebench.gateway.plan import GIB, GatewayPlan, ReleaseSpec
from storagebench.gateway.ports import ActivationKeys, Appliances, Gateways, ShareObjects

GONE = ("shutting-down", "terminated", "stopping", "stopped")
CACHE = "CACHE STORAGE"
AVAILABLE = "AVAILABLE"


@dataclass(frozen=True)
class GatewayPorts:
    appliances: Appliances
    keys: ActivationKeys
    gateways: Gateways
    objects: ShareObjects


@dataclass(frozen=True)
class GatewayProgress:
    ref: GatewayRef
    waiting_for: str | None  # None: the share is AVAILABLE

    @property
    def ready(self) -> bool:
        return self.waiting_for is None


def new_ref(plan: GatewayPlan) -> GatewayRef:
    return GatewayRef(target_id=str(plan.target.id), bucket=plan.bucket, prefix=plan.prefix)


def _pick_cache_disks(plan: GatewayPlan, arn: str, disks: list[LocalDisk]) -> list[str]:
    """One free disk per requested cache volume, matched by size (the root disk is never free)."""
    free = [d for d in disks if d.allocation == AVAILABLE]
    chosen: list[str] = []
    for volume in plan.target.cache_volumes:
        match = next(
            (d for d in free if d.size_bytes == volume.size_gib * GIB and d.disk_id not in chosen), None
        )
        if match is None:
            seen = (
                ", ".join(f"{d.disk_id} {d.size_bytes / GIB:g} GiB {d.allocation}" for d in disks) or "none"
            )
            asked = ", ".join(f"{v.size_gib} GiB" for v in plan.target.cache_volumes)
            raise ProvisioningError(
                f"gateway {arn}: no free {volume.size_gib} GiB disk for its cache "
                f"(cache_volumes ask for {asked}; ListLocalDisks: {seen})"
            )
        chosen.append(match.disk_id)
    return chosen


def launch(ref: GatewayRef, plan: GatewayPlan, ports: GatewayPorts) -> GatewayRef:
    """Start the appliance unless the ref records it (Provision; one instance per client token)."""
    ref = ref.model_copy(deep=True)
    if ref.appliance_id is None:
        launched = ports.appliances.launch(plan.launch)
        ref.appliance_id, ref.appliance_volume_ids = launched.instance_id, launched.volume_ids
    return ref


def advance(
    ref: GatewayRef, plan: GatewayPlan, ports: GatewayPorts, client_ip: str | None
) -> GatewayProgress:
    """One readiness poll's worth of progress (see the module docstring)."""
    ref = launch(ref, plan, ports)
    if ref.appliance_id is None:  # launch() records it; narrows the type
        raise ProvisioningError(f"gateway appliance of target {ref.target_id} was not launched")
    if ref.appliance_ip is None:
        status = ports.appliances.status(ref.appliance_id)
        if status.state in GONE:
            raise NotReadyError(f"gateway appliance {ref.appliance_id} is {status.state} before activation")
        if status.state != "running" or not status.private_ip:
            return GatewayProgress(ref, f"gateway appliance {ref.appliance_id} ({status.state})")
        ref.appliance_ip, ref.appliance_volume_ids = status.private_ip, status.volume_ids
    if ref.gateway_arn is None:
        arn = ports.gateways.find(plan.gateway_name)
        if arn is None:
            try:
                key = ports.keys.fetch(ref.appliance_ip, plan.region)
            except NotYetConsistentError as exc:
                return GatewayProgress(ref, f"activation key from {ref.appliance_ip}: {exc}")
            arn = ports.gateways.activate(key, plan.gateway_name, plan.region, plan.tags)
        ref.gateway_arn = arn
    if not ref.cache_disk_ids:
        try:
            disks = ports.gateways.local_disks(ref.gateway_arn)
        except NotYetConsistentError as exc:  # GatewayNotConnected for a while after activation
            return GatewayProgress(ref, f"gateway {ref.gateway_arn} to connect: {exc}")
        cached = [d.disk_id for d in disks if d.allocation == CACHE]
        if cached:  # an AddCache whose answer was lost
            ref.cache_disk_ids = cached
        else:
            chosen = _pick_cache_disks(plan, ref.gateway_arn, disks)
            ports.gateways.add_cache(ref.gateway_arn, chosen)
            ref.cache_disk_ids = chosen
    if ref.file_share_arn is None:
        if client_ip is None:
            return GatewayProgress(ref, "the client's address (the share admits it alone)")
        spec = ShareSpec(
            location_arn=plan.location_arn,
            role_arn=plan.role_arn,
            client_cidrs=[f"{client_ip}/32"],
            client_token=plan.share_token,
            file_share_name=plan.share_name,
            tags=plan.tags,
        )
        ref.file_share_arn = ports.gateways.create_share(ref.gateway_arn, spec)
    status_text, path = ports.gateways.share(ref.file_share_arn)
    ref.share_status, ref.share_path = status_text, path
    if status_text != AVAILABLE:
        return GatewayProgress(ref, f"file share {ref.file_share_arn} ({status_text})")
    if not path:
        raise ProvisioningError(f"file share {ref.file_share_arn} is AVAILABLE without a path")
    return GatewayProgress(ref, None)


def release(ref: GatewayRef | None, plan: ReleaseSpec, ports: GatewayPorts) -> GatewayRelease:
    """Delete the share(s), the gateway, the appliance with its disks and the run's objects; then
    check by name, tags and prefix. Idempotent, and works without a ref (a run aborted mid-way)."""
    report = GatewayRelease()
    arn = ref.gateway_arn if ref and ref.gateway_arn else ports.gateways.find(plan.gateway_name)
    if arn is not None:
        shares = set(ports.gateways.shares(arn))
        if ref and ref.file_share_arn:
            shares.add(ref.file_share_arn)
        for share in sorted(shares):
            ports.gateways.delete_share(share)
            report.deleted.append(share)
        ports.gateways.delete_gateway(arn)
        report.deleted.append(arn)
    appliance = ref.appliance_id if ref else None
    report.deleted += ports.appliances.terminate(plan.run_id, plan.config_id, appliance)
    removed = ports.objects.delete_prefix(plan.bucket, plan.prefix)
    if removed:
        report.deleted.append(f"s3://{plan.bucket}/{plan.prefix} ({removed} object(s))")
    report.leftovers = ports.appliances.leftovers(plan.run_id, plan.config_id)
    still = ports.gateways.find(plan.gateway_name)
    if still is not None:
        report.leftovers.append(still)
    if ports.objects.count(plan.bucket, plan.prefix):
        report.leftovers.append(f"s3://{plan.bucket}/{plan.prefix}")
    return report

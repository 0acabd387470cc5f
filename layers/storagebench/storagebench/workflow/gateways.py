"""A config's File Gateways inside the workflow: launched by Provision, advanced by each readiness
poll, released by Cleanup before the client (whose tag-based terminate would also catch the
appliance while its gateway still exists). The lifecycle itself is ``gateway.lifecycle``."""

from __future__ import annotations

from storagebench.core.errors import ProvisioningError
from storagebench.core.state import CleanupReport, Resources
from storagebench.core.tags import TAG_CONFIG, TAG_RUN
from storagebench.gateway.lifecycle import advance, launch, new_ref
from storagebench.gateway.lifecycle import release as release_gateway
from storagebench.gateway.plan import GatewayPlan, gateway_plan, release_spec_of_ref
from storagebench.kinds.file_gateway import gateway_targets
from storagebench.request.model import BenchmarkRequest
from storagebench.workflow.ports import GatewayServices


def gateway_plans(
    request: BenchmarkRequest,
    config_id: str,
    run_id: str,
    labels: dict[str, str],
    setup: GatewayServices | None,
) -> list[GatewayPlan]:
    """One plan per file_gateway target of the config (none for other configs)."""
    config = request.config(config_id)
    targets = gateway_targets(config)
    if targets and setup is None:  # the Plan step refuses this already (Guardrails.unprovisionable_kinds)
        raise ProvisioningError(
            f"config {config_id}: this deployment cannot provision file_gateway targets (no gateway ports)"
        )
    if setup is None:
        return []
    return [
        gateway_plan(
            config,
            target,
            run_id=run_id,
            region=request.region,
            tags=labels,
            default_bucket=setup.share_bucket,
            role_arn=setup.role_arn,
        )
        for target in targets
    ]


def _setup(setup: GatewayServices | None) -> GatewayServices:
    if setup is None:
        raise ProvisioningError("this deployment has no File Gateway ports, yet the config records a gateway")
    return setup


def launch_gateways(resources: Resources, plans: list[GatewayPlan], setup: GatewayServices | None) -> None:
    """Provision: start each appliance not recorded yet, recording it at once."""
    for plan in plans:
        tid = str(plan.target.id)
        position = next((n for n, g in enumerate(resources.gateways) if g.target_id == tid), None)
        ref = new_ref(plan) if position is None else resources.gateways[position]
        launched = launch(ref, plan, _setup(setup).ports)
        if position is None:
            resources.gateways.append(launched)
        else:
            resources.gateways[position] = launched


def advance_gateways(
    resources: Resources, plans: list[GatewayPlan], setup: GatewayServices | None
) -> list[str]:
    """One readiness poll for every gateway: updates the recorded refs; returns what is awaited."""
    waiting: list[str] = []
    for plan in plans:
        tid = str(plan.target.id)
        position = next((n for n, g in enumerate(resources.gateways) if g.target_id == tid), None)
        if position is None:
            raise ProvisioningError(f"target {tid}: Provision recorded no gateway appliance for it")
        progress = advance(resources.gateways[position], plan, _setup(setup).ports, resources.private_ip)
        resources.gateways[position] = progress.ref
        if progress.waiting_for is not None:
            waiting.append(progress.waiting_for)
    return waiting


def release_gateways(
    request: BenchmarkRequest,
    run_id: str,
    config_id: str,
    resources: Resources,
    setup: GatewayServices | None,
) -> CleanupReport:
    """Every gateway of the config, recorded or not (found by name and tags): shares, gateway,
    appliance and its disks, the run's objects. Works with empty resources (an aborted run)."""
    report = CleanupReport()
    labels = {TAG_RUN: run_id, TAG_CONFIG: config_id}
    for plan in gateway_plans(request, config_id, run_id, labels, setup):
        ref = next((g for g in resources.gateways if g.target_id == str(plan.target.id)), None)
        released = release_gateway(ref, plan.release_spec, _setup(setup).ports)
        report.deleted += released.deleted
        report.leftovers += released.leftovers
    return report


def release_recorded_gateways(
    run_id: str, config_id: str, resources: Resources, setup: GatewayServices | None, why: str
) -> CleanupReport:
    """Release without the request (missing, corrupt or invalid): every gateway the state
    recorded, from its ref; the config's appliances go by tag with the client. A gateway created
    but never recorded cannot be named without the request: the report says so for the janitor,
    when one can exist (a gateway recorded, or an appliance of the config still running)."""
    report = CleanupReport()
    ports = _setup(setup).ports
    # A gateway is activated on a running appliance: with none recorded and no appliance of this
    # config alive (tagged), none can have been created unrecorded, and there is nothing to say.
    unrecorded_possible = bool(resources.gateways) or bool(ports.appliances.leftovers(run_id, config_id))
    for ref in resources.gateways:
        released = release_gateway(ref, release_spec_of_ref(run_id, config_id, ref), ports)
        report.deleted += released.deleted
        report.leftovers += released.leftovers
    if unrecorded_possible:
        report.leftovers.append(
            f"the run's request could not be read ({why}): gateways not recorded in the state were not "
            "looked up by name; the janitor finds them by tag"
        )
    return report

"""Provision: create the config's file systems, launch its gateways, its instance and its other
machines, idempotently (``functions/provision``)."""

from __future__ import annotations

import hashlib

from storagebench.core.errors import ProvisioningError, RunStoppedError
from storagebench.core.state import ConfigState, ErrorInfo, FileSystemSpec, NodeRef, Resources
from storagebench.core.tags import TAG_NODE, TAG_TARGET
from storagebench.kinds import kind_of
from storagebench.request.model import Config
from storagebench.workflow import interruptions
from storagebench.workflow.bindings import launch_spec
from storagebench.workflow.gateways import gateway_plans, launch_gateways
from storagebench.workflow.ports import Services
from storagebench.workflow.steps.cleanup import release
from storagebench.workflow.steps.shared import item_request, purchase_of, tags, with_pending_errors
from storagebench.workflow.topology import needs_network, network_spec, other_machines


def creation_token(run_id: str, config_id: str, target_id: str) -> str:
    """Unique per run, config and target, within EFS's 64 and FSx's 63 characters ([A-Za-z0-9_.-])."""
    return "sb-" + hashlib.sha256(f"{run_id}\n{config_id}\n{target_id}".encode()).hexdigest()[:56]


def provision(state: ConfigState, services: Services) -> ConfigState:
    """Create the config's file systems, launch its gateway appliances, then its instance with its
    volumes (idempotent). After a Spot interruption (Cleanup's ConfigInterruptedError caught back
    here) it starts the config's next attempt."""
    if state.interrupted is not None:
        state = interruptions.next_attempt(with_pending_errors(state))
    item = state.item
    request = item_request(services, item)
    config = request.config(item.config_id)
    labels = tags(services, item)
    resources = state.resources.model_copy(deep=True)
    plans = gateway_plans(request, item.config_id, item.run_id, labels, services.gateways)
    launch_gateways(resources, plans, services.gateways)
    if needs_network(config) and resources.network is None:  # before the file systems: they join it
        resources.network = services.network.open(network_spec(config, item.run_id, labels))
    for target in config.targets:
        service = kind_of(target).file_system
        if service is not None:
            if any(f.target_id == target.id for f in resources.file_systems):
                continue
            group = resources.network.security_group_id if resources.network is not None else None
            if group is None:
                raise ProvisioningError(f"config {config.id}: no security group for file system {target.id}")
            spec = FileSystemSpec(
                target_id=str(target.id),
                kind=service,
                creation_token=creation_token(item.run_id, item.config_id, str(target.id)),
                tags={**labels, TAG_TARGET: str(target.id)},
                settings=target.model_dump(mode="json"),
                security_group_id=group,
            )
            resources.file_systems.append(services.filesystems.create(spec, None))
    market = interruptions.market_of(purchase_of(request, config, services), item.attempt)
    launch = launch_spec(config, item.run_id, labels, market=market, network=resources.network)
    launched = services.compute.launch(interruptions.attempt_launch(launch, state))
    resources.instance_id = launched.instance_id
    resources.volumes = launched.volumes
    resources.launched_at = launched.launched_at
    resources.market = launched.market  # what EC2 reports, priced at Finalize
    resources.availability_zone = launched.availability_zone
    launch_others(config, item.run_id, labels, resources, services)
    updated = state.model_copy(update={"resources": resources})
    services.store.put_config(updated, "PROVISIONING")
    # A stop records STOPPING before it stops the execution, and Step Functions lets an invocation
    # under way finish: this launch may have completed after the stop's sweep. Release it here.
    status = services.store.run_status(item.run_id)
    if status not in (None, "RUNNING"):
        report = release(item.run_id, item.config_id, resources, services)
        left = f"; still there: {', '.join(report.leftovers)}" if report.leftovers else ""
        stopped = RunStoppedError(
            f"run {item.run_id} is {status}: Provision released what it made after the stop "
            f"({', '.join(report.deleted) or 'nothing'}){left}"
        )
        error = ErrorInfo(step="provision", error=type(stopped).__name__, cause=str(stopped))
        ended = updated.model_copy(update={"cleanup": report, "errors": [*updated.errors, error]})
        services.store.put_config(ended, "STOPPED")  # the config's end, whoever ends the run
        raise stopped
    return updated


def launch_others(
    config: Config, run_id: str, labels: dict[str, str], resources: Resources, services: Services
) -> None:
    """Launch the config's nodes and extra clients not launched yet (each its own client token:
    a retried Provision finds the first instance). Nodes are bought on-demand, like every machine
    of a multi-machine config (``request.purchase``)."""
    for machine in other_machines(config):
        if any(n.role == machine.role and n.index == machine.index for n in resources.nodes):
            continue
        spec = launch_spec(
            config,
            run_id,
            {**labels, TAG_NODE: machine.name, "Name": f"{labels['Name']} {machine.name}"},
            machine=machine.group,
            name=machine.name,
            network=resources.network,
        )
        launched = services.compute.launch(spec)
        resources.nodes.append(
            NodeRef(
                role=machine.role,
                index=machine.index,
                instance_id=launched.instance_id,
                volumes=launched.volumes,
                launched_at=launched.launched_at,
                market=launched.market,
                availability_zone=launched.availability_zone,
            )
        )

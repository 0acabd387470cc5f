"""Cleanup: release what a config holds, recorded or only tagged, and verify by tag that nothing of
it remains (``functions/cleanup``; Provision, SweepRun and Finalize release through it too)."""

from __future__ import annotations

from storagebench.core.errors import ConfigInterruptedError, DocumentError
from storagebench.core.state import (
    CleanupReport,
    ConfigResult,
    ConfigState,
    ConfigStatus,
    NetworkRef,
    Resources,
)
from storagebench.workflow import interruptions
from storagebench.workflow.gateways import release_gateways, release_recorded_gateways
from storagebench.workflow.ports import Services
from storagebench.workflow.steps.shared import stored_request, with_pending_errors


def cleanup(state: ConfigState, services: Services) -> ConfigResult:
    """Stop the agent, terminate, delete; then verify by tag that nothing of this config remains."""
    item = state.item
    state = with_pending_errors(state)
    report = release(item.run_id, item.config_id, state.resources, services)
    if interruptions.current(state) is not None:
        try:
            state = interruptions.settle(state)  # raises to relaunch the steps left
        except ConfigInterruptedError:
            services.store.put_config(state.model_copy(update={"cleanup": report}), "INTERRUPTED")
            raise
    status = config_status(state, report)
    result = ConfigResult(
        run_id=item.run_id,
        config_id=item.config_id,
        status=status,
        records=(state.collected.records if state.collected else 0) + interruptions.kept_records(state),
        errors=state.errors,
        leftovers=report.leftovers,
        interruptions=state.interruptions,
    )
    services.store.put_config(state.model_copy(update={"cleanup": report}), status.upper())
    return result


def release(run_id: str, config_id: str, resources: Resources, services: Services) -> CleanupReport:
    """Stop, terminate and delete what the config holds, recorded or only tagged; then check.

    Idempotent (Cleanup retries it by name while EFS mount targets go) and usable without a
    state: an aborted execution is cleaned by run and config ids alone (``cleanup_run``). Never
    depends on the run's request: if it is missing or corrupt, gateways are released from the state.
    """
    report = CleanupReport()
    machine_leftovers = services.agents.stop(run_id, config_id, resources)
    for node in resources.nodes:
        machine_leftovers += services.agents.stop(run_id, config_id, node.view())
    gateway_leftovers: list[str] = []
    if services.gateways is not None:  # before the client: its tag-based terminate takes the appliance too
        try:
            request = stored_request(services, run_id)
        except DocumentError as exc:  # missing, not JSON, or invalid: release from the state
            released = release_recorded_gateways(run_id, config_id, resources, services.gateways, str(exc))
        else:
            released = release_gateways(request, run_id, config_id, resources, services.gateways)
        report.deleted.extend(released.deleted)
        gateway_leftovers = released.leftovers
    report.deleted.extend(services.compute.terminate(resources, run_id, config_id))
    refs = {ref.file_system_id: ref for ref in resources.file_systems}
    for ref in services.filesystems.find(run_id, config_id):  # a create whose answer was lost
        refs.setdefault(ref.file_system_id, ref)
    for ref in refs.values():
        services.filesystems.delete(ref)  # ResourceBusyError while EFS mount targets go: retried by name
        report.deleted.append(ref.file_system_id)
    report.deleted.extend(release_network(run_id, config_id, resources, services))
    report.leftovers = [
        *machine_leftovers,
        *gateway_leftovers,
        *services.compute.leftovers(run_id, config_id),
        *(ref.file_system_id for ref in services.filesystems.find(run_id, config_id)),
        *services.network.leftovers(run_id, config_id),
    ]
    return report


def release_network(run_id: str, config_id: str, resources: Resources, services: Services) -> list[str]:
    """Close the config's security and placement groups, recorded or only tagged (an open whose answer
    was lost), once its instances are terminated: EC2 refuses while one still holds a group
    (ResourceBusyError, which Cleanup retries by name)."""
    refs = [resources.network] if resources.network is not None else []
    refs += services.network.find(run_id, config_id)
    groups = dict.fromkeys(r.security_group_id for r in refs if r.security_group_id is not None)
    placements = dict.fromkeys(r.placement_group for r in refs if r.placement_group is not None)
    deleted: list[str] = []
    for group_id in groups:
        deleted.extend(services.network.close(NetworkRef(security_group_id=group_id)))
    for name in placements:
        deleted.extend(services.network.close(NetworkRef(placement_group=name)))
    return deleted


def config_status(state: ConfigState, report: CleanupReport) -> ConfigStatus:
    records = (state.collected.records if state.collected else 0) + interruptions.kept_records(state)
    if records == 0 or interruptions.bound_reached(state):
        return "failed"
    if state.errors or report.leftovers or (state.collected and state.collected.status != "ok"):
        return "partial"
    return "succeeded"

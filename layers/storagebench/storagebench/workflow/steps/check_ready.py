"""CheckReady: one readiness poll of the config's instance, nodes, volumes, file systems and
gateways (``functions/check_ready``)."""

from __future__ import annotations

from storagebench.core.clock import iso, parse_iso
from storagebench.core.errors import NotReadyError, SpotInterruptionError
from storagebench.core.state import ConfigState, NodeRef, ReadyStatus
from storagebench.workflow import interruptions
from storagebench.workflow.gateways import advance_gateways, gateway_plans
from storagebench.workflow.ports import Services
from storagebench.workflow.steps.shared import item_request, tags


def check_ready(state: ConfigState, services: Services) -> ConfigState:
    """One readiness poll: instance, status checks, SSM agent, volumes and file systems.

    Raises NotReadyError when the config can no longer become ready (instance gone, a file
    system failed, the deadline passed); the state machine then records and cleans up.
    """
    now = services.clock.now()
    previous = state.ready
    first = previous.first_poll_at if previous and previous.first_poll_at else iso(now)
    polls = (previous.polls if previous else 0) + 1
    status = services.compute.status(state.resources)
    resources = state.resources.model_copy(
        update={
            "volumes": status.volumes or state.resources.volumes,
            "private_ip": status.private_ip or state.resources.private_ip,
        },
        deep=True,
    )
    if interruptions.spot_reclaimed(status):
        raise SpotInterruptionError(
            f"instance {resources.instance_id} was reclaimed for Spot before the benchmark started "
            f"({status.reason or status.reason_code})"
        )
    if status.instance_state in ("shutting-down", "terminated", "stopping", "stopped"):
        raise NotReadyError(
            f"instance {resources.instance_id} is {status.instance_state} before the benchmark "
            f"started: {status.reason or 'no reason given'}"
        )
    fs_states = {ref.file_system_id: services.filesystems.status(ref) for ref in resources.file_systems}
    failed = [fs for fs, fs_state in fs_states.items() if fs_state == "failed"]
    if failed:
        raise NotReadyError(f"file system(s) {', '.join(failed)} failed to create")
    checks = {
        "instance_running": status.instance_state == "running",
        "status_checks_ok": status.status_checks_ok,
        "volumes_in_use": status.volumes_in_use,
        "volumes_initialized": status.volumes_initialized,
        "file_systems_available": all(s == "available" for s in fs_states.values()),
    }
    awaited: list[str] = []
    if resources.gateways:  # running, cache added, share AVAILABLE; ProvisioningError fails the config
        request = item_request(services, state.item)
        plans = gateway_plans(
            request, state.item.config_id, state.item.run_id, tags(services, state.item), services.gateways
        )
        awaited = advance_gateways(resources, plans, services.gateways)
        checks["gateways_available"] = not awaited
    if resources.nodes:
        resources.nodes, waiting_nodes = _nodes_ready(resources.nodes, services)
        checks["nodes_ready"] = not waiting_nodes
        awaited += waiting_nodes
    checks["agent_online"] = all(checks.values()) and services.agents.online(resources)
    waited = (now - parse_iso(first)).total_seconds()
    if all(checks.values()):
        ready = ReadyStatus(
            state="ready",
            reason=f"ready after {waited:.0f} s and {polls} poll(s)",
            checks=checks,
            polls=polls,
            first_poll_at=first,
        )
    elif waited > state.item.timing.ready_timeout_s:
        missing = ", ".join([*(name for name, ok in checks.items() if not ok), *awaited])
        raise NotReadyError(f"not ready after {waited:.0f} s ({polls} polls): {missing}")
    else:
        missing = ", ".join([*(name for name, ok in checks.items() if not ok), *awaited])
        ready = ReadyStatus(
            state="waiting", reason=f"waiting for {missing}", checks=checks, polls=polls, first_poll_at=first
        )
    return state.model_copy(update={"resources": resources, "ready": ready})


def _nodes_ready(nodes: list[NodeRef], services: Services) -> tuple[list[NodeRef], list[str]]:
    """Each node polled like the primary (running, checks passed, volumes attached and initialised,
    its agent reachable): the nodes with their addresses, and what each one still waits for. A node
    gone before the benchmark started fails the config (NotReadyError names it)."""
    polled: list[NodeRef] = []
    waiting: list[str] = []
    for recorded in nodes:
        status = services.compute.status(recorded.view())
        if status.instance_state in ("shutting-down", "terminated", "stopping", "stopped"):
            raise NotReadyError(
                f"{recorded.name} ({recorded.instance_id}) is {status.instance_state} before the "
                f"benchmark started: {status.reason or 'no reason given'}"
            )
        node = recorded.model_copy(
            update={
                "volumes": status.volumes or recorded.volumes,
                "private_ip": status.private_ip or recorded.private_ip,
            }
        )
        polled.append(node)
        missing = [
            what
            for what, ok in (
                ("running", status.instance_state == "running"),
                ("status checks", status.status_checks_ok),
                ("volumes in use", status.volumes_in_use),
                ("volumes initialized", status.volumes_initialized),
                ("address", bool(node.private_ip)),
            )
            if not ok
        ]
        if not missing and not services.agents.online(node.view()):
            missing.append("agent online")
        if missing:
            waiting.append(f"{node.name}: {', '.join(missing)}")
    return polled, waiting

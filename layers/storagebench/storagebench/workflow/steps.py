"""The workflow's steps: one function per Task state, pure logic over the ports.

Each step takes the document its state receives and returns the document the next state
needs. They are idempotent because Step Functions retries them: launches carry a client token,
file systems a creation token, records are keyed, and cleanup deletes whatever still carries
the run's tags, not only what the state remembers.
"""

from __future__ import annotations

import hashlib
import json
import logging
import math
from datetime import timedelta
from typing import Any

from storagebench.analysis.annotate import annotate
from storagebench.analysis.regressions import compute_regressions
from storagebench.analysis.series import extract_series
from storagebench.core.clock import iso, parse_iso
from storagebench.core.errors import (
    AgentError,
    ConfigInterruptedError,
    DocumentError,
    DuplicateStartError,
    GuardrailError,
    InvalidRequestError,
    NotReadyError,
    ProvisioningError,
    RunStoppedError,
    SpotInterruptionError,
    WorkflowError,
)
from storagebench.core.regression import Regression
from storagebench.core.state import (
    INLINE_MAP_MAX_CONFIGS,
    AgentOutcome,
    CleanupReport,
    CollectSummary,
    ConfigResult,
    ConfigState,
    ConfigStatus,
    ErrorInfo,
    FileSystemSpec,
    NetworkRef,
    NodeRef,
    PlanResult,
    ReadyStatus,
    Resources,
    RunStatus,
    RunSummary,
    StepTiming,
    WorkItem,
)
from storagebench.core.tags import TAG_CONFIG, TAG_EXPIRES, TAG_NODE, TAG_RUN, TAG_STACK, TAG_TARGET
from storagebench.export.rows import FIO_VERSION_LABEL
from storagebench.kinds import emulator_key, kind_of
from storagebench.planning import build_plan
from storagebench.planning.preview import preview_request
from storagebench.quotas.ports import QuotaPolicy
from storagebench.request import BenchmarkRequest, RequestError, parse_request
from storagebench.request.model import Config, ScheduledOccurrence
from storagebench.request.purchase import Market, Purchase, effective_purchase
from storagebench.results.collect import collect as collect_output
from storagebench.results.errors import ResultsError
from storagebench.workflow import interruptions
from storagebench.workflow.artifact_keys import (
    agent_output_prefix,
    command_output_prefix,
    config_prefix,
    request_key,
    series_key,
    work_items_key,
)
from storagebench.workflow.bindings import agent_targets, launch_spec, storage_option
from storagebench.workflow.command_output import failed_document_step
from storagebench.workflow.exports import agent_fio_version, export_config
from storagebench.workflow.gateways import (
    advance_gateways,
    gateway_plans,
    launch_gateways,
    release_gateways,
    release_recorded_gateways,
)
from storagebench.workflow.ports import Services
from storagebench.workflow.run_ids import occurrence_key, schedule_group
from storagebench.workflow.run_outputs import notify_run, record_run_economics, record_run_report
from storagebench.workflow.topology import (
    needs_network,
    network_spec,
    node_plan,
    other_machines,
    removal_of,
    with_topology,
)

log = logging.getLogger("storagebench.workflow.steps")
REGRESSIONS_IN_SUMMARY = 100  # flagged verdicts the summary carries (the state's output stays small)


def _request(services: Services, item: WorkItem) -> BenchmarkRequest:
    return _stored_request(services, item.run_id)


def _stored_request(services: Services, run_id: str) -> BenchmarkRequest:
    """The request Plan stored; a DocumentError naming its key when it is gone or no longer valid
    (a WorkflowError: the state machine records it and cleans up, which needs no request)."""
    key = request_key(run_id)
    try:
        return parse_request(services.artifacts.get_json(key))
    except KeyError:
        raise DocumentError(key, "missing: Plan stored it when the run started, and it is gone") from None
    except ValueError as exc:  # not UTF-8, not JSON, or no longer a valid request (RequestError)
        what = f"{type(exc).__name__}: {exc}"[:300]
        raise DocumentError(key, f"corrupt, not the request Plan stored ({what})") from None


def tags(services: Services, item: WorkItem) -> dict[str, str]:
    """The labels of everything the config creates: the request's ``tags`` (validated against every
    service's rules and reserved keys, ``request.tags``), then storagebench's own. Read from the stored
    request rather than carried on the WorkItem: 40 items of up to 42 tags would outgrow the state's
    256 KiB. Release never calls this (it goes by the run and config tags alone)."""
    return {
        **_request(services, item).tags,
        TAG_RUN: item.run_id,
        TAG_CONFIG: item.config_id,
        TAG_EXPIRES: item.expires_at,
        TAG_STACK: services.stack,
        "Name": f"storagebench {item.run_id}/{item.config_id}",
    }


# ---------------------------------------------------------------------------------- plan


def plan_run(document: Any, run_id: str, started_at: str, services: Services) -> PlanResult:
    """Validate, apply the stack's guardrails, record the run, expand one work item per config.

    Up to ``INLINE_MAP_MAX_CONFIGS`` configs, the items travel in the state to the inline Map; past
    that they go to the artifacts (``work_items_key``) for the Distributed Map's ItemReader, and the
    state carries only the config ids: 500 items of ~0.5 KiB would crowd its 256 KiB.
    """
    try:
        request = parse_request(document)
    except RequestError as exc:
        raise InvalidRequestError(str(exc)) from None
    limits = services.guardrails
    # The same preview the API's dry run returns: the two cannot disagree about a request.
    quotas = QuotaPolicy(services.quotas) if services.quotas is not None else None
    preview = preview_request(request, limits, quotas=quotas)
    if not preview.allowed:
        raise GuardrailError(preview.problem_text())
    if request.scheduled is not None:  # before anything is written: a duplicate leaves only its refusal
        _claim_occurrence(request.scheduled, run_id, services)
    started = parse_iso(started_at)
    expires = started + timedelta(hours=request.timing.max_run_hours)
    command_timeout_s = math.ceil(request.timing.command_timeout_h * 3600)
    timing = StepTiming(
        ready_poll_s=request.timing.ready_poll_s,
        ready_timeout_s=limits.ready_timeout_s,
        heartbeat_s=min(request.timing.command_poll_s, limits.heartbeat_max_s, command_timeout_s),
        command_timeout_s=command_timeout_s,
    )
    items = [
        WorkItem(
            run_id=run_id,
            config_id=c.id,
            suite=request.name,
            region=request.region,
            started_at=iso(started),
            expires_at=iso(expires),
            timing=timing,
            artifacts_prefix=config_prefix(run_id, c.id),
        )
        for c in request.configs
    ]
    services.artifacts.put_json(request_key(run_id), request.model_dump(mode="json", exclude_unset=False))
    distributed = len(items) > INLINE_MAP_MAX_CONFIGS
    if distributed:  # before the run is recorded: a Plan retried after a lost answer writes the same
        services.artifacts.put_json(work_items_key(run_id), [i.model_dump(mode="json") for i in items])
    services.store.start_run(
        run_id,
        request.name,
        json.loads(json.dumps(document)),
        iso(started),
        iso(expires),
        [c.id for c in request.configs],
        cost_bound_usd=preview.estimate.upper_bound_usd,
    )
    return PlanResult(
        run_id=run_id,
        suite=request.name,
        started_at=iso(started),
        max_concurrency=preview.max_concurrency,
        items=[] if distributed else items,
        config_ids=[c.id for c in request.configs],
        map_mode="distributed" if distributed else "inline",
        work_items_key=work_items_key(run_id) if distributed else None,
    )


def _claim_occurrence(occurrence: ScheduledOccurrence, run_id: str, services: Services) -> None:
    """EventBridge Scheduler cannot name the execution, so a retry of a start whose answer was lost
    starts a second one: the first to claim the occurrence runs, any other is refused here."""
    group = schedule_group(services.stack)
    if occurrence.schedule_arn.split(":schedule/", 1)[1].split("/", 1)[0] != group:
        # Only the stack's own schedules claim: a start naming another schedule blocks none of them
        raise InvalidRequestError(
            f"scheduled.schedule_arn: {occurrence.schedule_arn} is not a schedule of this stack's "
            f"group {group}; only those start scheduled runs"
        )
    key = occurrence_key(occurrence.schedule_arn, occurrence.scheduled_time)
    holder = services.store.claim_occurrence(key, run_id, iso(services.clock.now()))
    if holder != run_id:
        raise DuplicateStartError(
            f"scheduled occurrence {key} already started run {holder}: execution {run_id} is a "
            "second start of it (a retried schedule attempt) and launches nothing"
        )


# ---------------------------------------------------------------------------------- provision


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
    request = _request(services, item)
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


# ---------------------------------------------------------------------------------- readiness


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
        request = _request(services, state.item)
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


# ---------------------------------------------------------------------------------- agent


def start_agent(state: ConfigState, task_token: str, services: Services) -> ConfigState:
    """Bind the targets, store the plan and start the agent; it reports back on the token."""
    item = state.item
    request = _request(services, item)
    config = request.config(item.config_id)
    plan = build_plan(
        request, item.config_id, item.run_id, agent_targets(config, state.resources, item.region)
    )
    plan = interruptions.without_kept(plan, interruptions.kept_steps(state))  # after a Spot interruption
    if state.resources.instance_id is None:
        raise AgentError("no instance to run the agent on")
    if state.resources.nodes:
        ready_s = item.timing.ready_timeout_s
        plan = with_topology(plan, config, state.resources, ready_s)
        for node in state.resources.nodes:  # servers first: their hooks run before any client's
            node_state = state.model_copy(update={"resources": node.view()})
            services.agents.start_node(
                node_state,
                node.name,
                node_plan(
                    config,
                    node,
                    state.resources,
                    item.run_id,
                    item.region,
                    ready_s,
                    removal_of(plan, node.role, node.index),  # a node_loss step: the node powers off
                ),
                agent_output_prefix(item, services.agents.principal(str(node.instance_id))),
                item.timing.command_timeout_s,
            )
    services.artifacts.put_json(f"{item.artifacts_prefix}plan.json", plan)
    run = services.agents.start(
        state,
        plan,
        agent_output_prefix(item, services.agents.principal(state.resources.instance_id)),
        task_token,
        item.timing.heartbeat_s,
        item.timing.command_timeout_s,
    )
    updated = state.model_copy(update={"agent": run})
    services.store.put_config(updated, "RUNNING")
    return updated


# ---------------------------------------------------------------------------------- failures


def failed_step(state: ConfigState) -> str:
    """Which step a caught error came from: the flow is linear, so how far the state got says."""
    if state.resources.instance_id is None:
        return "provision"
    if state.ready is None or state.ready.state != "ready":
        return "ready"
    if state.outcome is None:
        return "agent"
    if state.collected is None:
        return "collect"
    return "cleanup"


def _cause(raw: Any) -> str:
    """Step Functions puts a Lambda error's JSON in Cause; keep its message."""
    if isinstance(raw, str):
        try:
            parsed = json.loads(raw)
        except ValueError:
            return raw
        if isinstance(parsed, dict) and "errorMessage" in parsed:
            return str(parsed["errorMessage"])
        return raw
    return json.dumps(raw)


def with_pending_errors(state: ConfigState) -> ConfigState:
    """Fold errors the state machine caught but no step recorded yet (see ConfigState.caught)."""
    sources = (
        ("caught", state.caught, failed_step(state)),
        ("record_error", state.record_error, "record_failure"),
        ("caught_collect", state.caught_collect, "collect"),
        ("caught_cleanup", state.caught_cleanup, "cleanup"),
    )
    pending = [
        ErrorInfo(
            step=step, error=str(caught.get("Error", "States.Unknown")), cause=_cause(caught.get("Cause", ""))
        )
        for _, caught, step in sources
        if caught
    ]
    if not pending:
        return state
    cleared = dict.fromkeys(name for name, _, _ in sources)
    return state.model_copy(update={"errors": [*state.errors, *pending], **cleared})


def record_failure(state: ConfigState, caught: dict[str, Any], services: Services) -> ConfigState:
    """Keep a caught error on the config (and in the store) before collecting and cleaning up.

    A Spot interruption is no error: it is recorded as such (``interruptions``), and Cleanup
    relaunches the config for what it did not measure."""
    interrupted = _interruption(state, caught, services)
    if interrupted is not None:
        services.store.put_config(interrupted, "INTERRUPTED")
        return interrupted
    error = ErrorInfo(
        step=failed_step(state),
        error=str(caught.get("Error", "States.Unknown")),
        cause=_cause(caught.get("Cause", "")),
    )
    lost = error.step == "agent" and error.error in ("States.HeartbeatTimeout", "States.Timeout")
    said = _document_failure(state, services) if lost else None
    if said is not None:  # the instance failed before its agent could report: SSM kept what it said
        error = ErrorInfo(
            step="agent",
            error="AgentError",
            cause=f"{said} (from the SSM command's output: the instance could not report it, "
            f"and its heartbeats stopped: {error.error})",
        )
        lost = False
    updated = state.model_copy(update={"errors": [*state.errors, error]})
    if error.step == "agent" and state.outcome is None:
        updated.outcome = AgentOutcome(status="lost" if lost else "failed", detail=error.cause)
    services.store.put_config(updated, "FAILING")
    return updated


def _interruption(state: ConfigState, caught: dict[str, Any], services: Services) -> ConfigState | None:
    """The state with its attempt's Spot interruption, when the caught error is one: the agent's
    report of the notice, CheckReady finding the instance reclaimed, or lost heartbeats of an
    instance EC2 reclaimed for Spot (the notice came too late, or was missed)."""
    name = str(caught.get("Error", ""))
    step = failed_step(state)
    now = iso(services.clock.now())
    market = _market(services, state)
    if name == SpotInterruptionError.__name__ and step == "ready":
        return interruptions.from_instance_state(state, "ready", now, market)
    if name == SpotInterruptionError.__name__ and step == "agent":
        updated = interruptions.from_report(state, str(caught.get("Cause", "")), now, market)
    elif step == "agent" and name in ("States.HeartbeatTimeout", "States.Timeout"):
        try:
            status = services.compute.status(state.resources)
        except WorkflowError as exc:  # the heartbeat timeout stays the error
            log.warning("could not describe the instance of %s: %s", state.item.config_id, exc)
            return None
        if not interruptions.spot_reclaimed(status):
            return None
        updated = interruptions.from_instance_state(state, "agent", now, market)
    else:
        return None
    updated.outcome = AgentOutcome(status="failed", detail=f"Spot interruption ({name})")
    return updated


def _market(services: Services, state: ConfigState) -> Market | None:
    """How the state's attempt was bought: as EC2 reported it at launch, else as the request asked
    (None: the request is gone, the record says so elsewhere)."""
    if state.resources.market is not None:
        return state.resources.market
    try:
        request = _request(services, state.item)
    except DocumentError:
        return None
    config = request.config(state.item.config_id)
    return interruptions.market_of(purchase_of(request, config, services), state.item.attempt)


def purchase_of(request: BenchmarkRequest, config: Config, services: Services) -> Purchase:
    """The config's purchase: its own, else the request's, else the stack's DefaultPurchase."""
    return effective_purchase(
        config.purchase,
        request.purchase,
        services.guardrails.default_purchase,
        machines=config.instance_count,
    )


def _document_failure(state: ConfigState, services: Services) -> str | None:
    if state.resources.instance_id is None:
        return None
    prefix = command_output_prefix(state.item, services.agents.principal(state.resources.instance_id))
    try:
        return failed_document_step(services.artifacts.fetch(prefix))
    except (WorkflowError, OSError) as exc:  # the heartbeat timeout stays the error: still true
        log.warning("could not read the SSM command output of %s: %s", state.item.config_id, exc)
        return None


# ---------------------------------------------------------------------------------- collect


def collect(state: ConfigState, services: Services) -> ConfigState:
    """Parse whatever the agent wrote into records and store them before the status changes.

    Missing or unreadable output is recorded, not raised: cleanup must still run, and a
    sibling's results are unaffected.
    """
    state = with_pending_errors(state)
    item = state.item
    request = _request(services, item)
    config = request.config(item.config_id)
    try:
        if state.resources.instance_id is None:
            raise ResultsError("no instance ran this config")
        # Only the prefix of the instance that ran the config: no other instance can write it
        owner = services.agents.principal(state.resources.instance_id)
        directory = services.artifacts.fetch(agent_output_prefix(item, owner))
        collection = collect_output(directory)
    except ResultsError as exc:
        summary = CollectSummary(status="failed", records=0, problems=[f"no usable agent output: {exc}"])
        state = interruptions.note_collected(state, None, 0)
        failed = state.model_copy(
            update={
                "collected": summary,
                "errors": [*state.errors, ErrorInfo(step="collect", error="CollectError", cause=str(exc))],
            }
        )
        services.store.put_config(failed, "COLLECTED")
        return failed
    stored = 0
    by_target: dict[str, list[Any]] = {}
    labels_of: dict[str, dict[str, str]] = {}
    fio_version = agent_fio_version(directory)
    for record in annotate(collection.records, directory, config, network_ceilings=services.network_ceilings):
        by_target.setdefault(record.target_id, []).append(record)
    for target_id, records in by_target.items():
        option = (
            storage_option(config, target_id) if any(t.id == target_id for t in config.targets) else target_id
        ) + emulator_key(label for record in records for label in record.labels)
        labels = {"storage_option": option, "suite": item.suite}
        if fio_version is not None:
            labels[FIO_VERSION_LABEL] = fio_version
        labels_of[target_id] = labels
        stored += services.store.put_results(item.run_id, item.config_id, records, item.started_at, labels)
    # The IOPS/bandwidth series the report draws (knees included), small enough for any run
    series = extract_series(directory)
    if item.attempt > 1:  # a relaunch after a Spot interruption: the kept steps' series stay
        series = interruptions.merged_series(state, _optional_document(services, series_key(item)), series)
    services.artifacts.put_json(series_key(item), series)
    # The flat rows Athena reads, once the records are stored: a failed write loses no measurement
    export = export_config(
        item,
        config,
        [r for rs in by_target.values() for r in rs],
        labels_of,
        request.region,
        services.artifacts,
    )
    manifest = _manifest(directory)
    manifest_status = _manifest_status(manifest)
    ok = not collection.problems and manifest_status == "ok" and stored > 0
    summary = CollectSummary(
        status="ok" if ok else ("partial" if stored else "failed"),
        records=stored,
        problems=[*collection.problems, *export.problems],
        warnings=collection.warnings,
        agent_status=manifest_status,
        series=collection.series,
        steady_state=collection.steady_state,
    )
    errors = [*state.errors, export.error] if export.error is not None else list(state.errors)
    agent_error = _manifest_error(manifest)
    # A Spot interruption is recorded as such (interruptions), not as the config's error.
    interrupted = interruptions.current(state) is not None
    if agent_error is not None and not interrupted and not any(e.step == "agent" for e in errors):
        # The agent ended on its own terms (a node lost, a barrier timed out: it reports success with
        # the measured steps and says why it stopped); the config says it too, not only the manifest.
        errors.append(agent_error)
    state = interruptions.note_collected(state, directory, stored)  # an interrupted attempt: what it kept
    updated = state.model_copy(update={"collected": summary, "errors": errors})
    services.store.put_config(updated, "COLLECTED")
    return updated


def _optional_document(services: Services, key: str) -> dict[str, Any] | None:
    try:
        document = services.artifacts.get_json(key)
    except KeyError:
        return None
    return document if isinstance(document, dict) else None


def _manifest(directory: Any) -> dict[str, Any]:
    """The agent's manifest as it reached the artifacts ({} when missing or not a JSON object)."""
    try:
        document = json.loads((directory / "manifest.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return document if isinstance(document, dict) else {}


def _manifest_error(manifest: dict[str, Any]) -> ErrorInfo | None:
    """The error a failed manifest names (``NodeLostError: server-0 ... stopped answering``)."""
    error = manifest.get("error")
    if manifest.get("status") != "failed" or not isinstance(error, str) or not error:
        return None
    name, _, cause = error.partition(": ")
    if not cause or not name.isidentifier():
        return ErrorInfo(step="agent", error="AgentError", cause=error[:1000])
    return ErrorInfo(step="agent", error=name, cause=cause[:1000])


def _manifest_status(manifest: dict[str, Any]) -> str | None:
    value = manifest.get("status")
    return str(value) if value is not None else None


# ---------------------------------------------------------------------------------- cleanup


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
            request = _stored_request(services, run_id)
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


def cleanup_run(run_id: str, config_ids: list[str], services: Services) -> dict[str, CleanupReport]:
    """Release every config of a run by its tags: for an execution stopped or killed mid-way."""
    return {config_id: release(run_id, config_id, Resources(), services) for config_id in config_ids}


def abort_run(
    run_id: str,
    suite: str,
    started_at: str,
    config_ids: list[str],
    caught: dict[str, Any],
    services: Services,
    stopped_at: str | None = None,
) -> RunSummary:
    """The configs map failed, or the run was stopped: release everything by tag, keep what was
    measured, record FAILED.

    ``stopped_at``: when the execution stopped. A Provision or CheckReady invoked before then keeps
    running (Step Functions does not cancel it) and may launch after the first sweep; so once
    ``services.in_flight_s`` has passed since then, every config is swept again. The wait is measured
    from ``stopped_at``, so a retried sweep does not wait twice.
    """
    error = ErrorInfo(
        step="run", error=str(caught.get("Error", "States.Unknown")), cause=_cause(caught.get("Cause", ""))
    )
    reports = cleanup_run(run_id, config_ids, services)  # at once: what runs now stops costing now
    if stopped_at is not None:
        settled = parse_iso(stopped_at) + timedelta(seconds=services.in_flight_s)
        remaining = (settled - services.clock.now()).total_seconds()
        if remaining > 0:
            services.sleep(remaining)
        reports = cleanup_run(run_id, config_ids, services)
    stored = services.store.get_run(run_id)
    records: dict[str, int] = {}
    for result in stored.get("results", []):
        records[str(result.get("config_id"))] = records.get(str(result.get("config_id")), 0) + 1
    configs = [
        ConfigResult(
            run_id=run_id,
            config_id=config_id,
            status="partial" if records.get(config_id) else "failed",
            records=records.get(config_id, 0),
            errors=[error],
            leftovers=reports[config_id].leftovers,
        )
        for config_id in config_ids
    ]
    summary = RunSummary(
        run_id=run_id,
        suite=suite,
        status="FAILED",
        configs=configs,
        records=sum(c.records for c in configs),
        started_at=started_at,
        ended_at=iso(services.clock.now()),
    )
    summary = notify_run(summary, services)  # never raises: a refused notification is a note
    services.store.finish_run(summary)
    return summary


def config_status(state: ConfigState, report: CleanupReport) -> ConfigStatus:
    records = (state.collected.records if state.collected else 0) + interruptions.kept_records(state)
    if records == 0 or interruptions.bound_reached(state):
        return "failed"
    if state.errors or report.leftovers or (state.collected and state.collected.status != "ok"):
        return "partial"
    return "succeeded"


# ---------------------------------------------------------------------------------- finalize


def result_after_failed_cleanup(document: dict[str, Any], services: Services) -> ConfigResult:
    """A config whose cleanup gave up reaches Finalize as its state plus the caught error.

    Finalize releases it once more, by its tags: a broken or throttled Cleanup for one config
    must not leave it running. What still fails is reported for the janitor.
    """
    state = with_pending_errors(ConfigState.model_validate(document))  # caught_cleanup and any earlier ones
    errors = list(state.errors)
    try:
        leftovers = release(state.item.run_id, state.item.config_id, state.resources, services).leftovers
    except WorkflowError as exc:
        errors.append(ErrorInfo(step="finalize", error=type(exc).__name__, cause=str(exc)))
        leftovers = [
            "cleanup did not finish: resources tagged with this run remain until the janitor removes them"
        ]
    records = state.collected.records if state.collected else 0
    return ConfigResult(
        run_id=state.item.run_id,
        config_id=state.item.config_id,
        status="partial" if records else "failed",
        records=records,
        errors=errors,
        leftovers=leftovers,
    )


def finalize(
    run_id: str, suite: str, started_at: str, entries: list[dict[str, Any]], services: Services
) -> RunSummary:
    configs = [
        result_after_failed_cleanup(e, services) if "item" in e else ConfigResult.model_validate(e)
        for e in entries
    ]
    statuses = {c.status for c in configs}
    status: RunStatus
    if statuses == {"succeeded"}:
        status = "SUCCEEDED"
    elif statuses <= {"failed"}:
        status = "FAILED"
    else:
        status = "PARTIAL"
    regressions, notes = run_regressions(run_id, suite, started_at, configs, services)
    ended_at = iso(services.clock.now())
    economics, economics_notes = record_run_economics(run_id, ended_at, services)
    summary = RunSummary(
        run_id=run_id,
        suite=suite,
        status=status,
        configs=configs,
        records=sum(c.records for c in configs),
        started_at=started_at,
        ended_at=ended_at,
        regressions=regressions,
        regression_notes=notes,
        economics=economics,
        economics_notes=economics_notes,
    )
    report, report_notes = record_run_report(summary, services)  # before the status: it is final
    summary = summary.model_copy(update={"report": report, "report_notes": report_notes})
    summary = notify_run(summary, services)  # links the report; never raises (a refusal is a note)
    services.store.finish_run(summary)
    return summary


def run_regressions(
    run_id: str, suite: str, started_at: str, configs: list[ConfigResult], services: Services
) -> tuple[list[Regression], list[str]]:
    """Compare what the succeeded and partial configs measured with the suite's last runs.

    Records every verdict in the store and returns the flagged ones (regressions first, at most
    REGRESSIONS_IN_SUMMARY) with notes. Never raises: regression detection must not fail a run,
    so a store error (or any other) becomes a note in the summary.
    """
    measured = [c.config_id for c in configs if c.status in ("succeeded", "partial")]
    if not measured:
        return [], []
    try:
        report = compute_regressions(services.store, run_id, suite, started_at, measured)
    except Exception as exc:  # never fail the run over its comparison with earlier ones
        log.warning("regressions of run %s not computed", run_id, exc_info=True)
        return [], [f"regressions not computed: {type(exc).__name__}: {exc}"]
    notes = list(report.notes)
    flagged = report.flagged
    if len(flagged) > REGRESSIONS_IN_SUMMARY:
        notes.append(
            f"{len(flagged) - REGRESSIONS_IN_SUMMARY} more flagged metric(s) are in the store "
            "(get_regressions)"
        )
    try:
        services.store.record_regressions(run_id, report.verdicts)
    except Exception as exc:  # likewise: the verdicts stay in the summary
        log.warning("regressions of run %s not recorded", run_id, exc_info=True)
        notes.append(f"regressions not recorded in the store: {type(exc).__name__}: {exc}")
    return flagged[:REGRESSIONS_IN_SUMMARY], notes

"""StartAgent: bind the targets, store the plan and start the agent, which reports back on the
task token (``functions/start_agent``)."""

from __future__ import annotations

from storagebench.core.errors import AgentError
from storagebench.core.state import ConfigState
from storagebench.planning import build_plan
from storagebench.workflow import interruptions
from storagebench.workflow.artifact_keys import agent_output_prefix
from storagebench.workflow.bindings import agent_targets
from storagebench.workflow.ports import Services
from storagebench.workflow.steps.shared import item_request
from storagebench.workflow.topology import node_plan, removal_of, with_topology


def start_agent(state: ConfigState, task_token: str, services: Services) -> ConfigState:
    """Bind the targets, store the plan and start the agent; it reports back on the token."""
    item = state.item
    request = item_request(services, item)
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

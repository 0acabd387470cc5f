"""How many Step Functions state transitions a run is billed: the run's own, each config's path
through the state machine (its readiness polls, its retries), and none for an inline Map's
iterations (AWS's pricing). ``costs.run_cost`` prices them and re-exports these names.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from storagebench.core.state import ConfigState

RUN_LEVEL_TRANSITIONS = 3
"""Plan, Configs (the Map state itself) and Finalize."""
TRANSITIONS_PER_POLL = 3
"""WaitUntilReady, CheckReady, IsReady."""
MAP_OVERHEAD_PER_CONFIG = 0
"""Transitions an inline Map iteration costs beyond its own states: none, per AWS's pricing."""


@dataclass(frozen=True)
class ConfigTransitions:
    """The path one config took through the Map iteration, enough to count its transitions.

    ``polls``: successful readiness polls (each Wait + CheckReady + IsReady). A readiness check that
    failed (``failed_poll``) adds its Wait and CheckReady. ``reached_agent``: RunAgent and Collect ran
    (else RecordFailure did); ``agent_failed``: RecordAgentFailure ran; ``cleanup_failed``: the
    CleanupFailed pass ran; ``retries``: Task retries (each is a transition).
    """

    config_id: str
    polls: int
    reached_agent: bool = True
    agent_failed: bool = False
    failed_poll: bool = False
    cleanup_failed: bool = False
    retries: int = 0

    def count(self, map_overhead: int = MAP_OVERHEAD_PER_CONFIG) -> int:
        n = 1  # Provision
        n += TRANSITIONS_PER_POLL * self.polls
        if self.failed_poll:
            n += 2  # WaitUntilReady + the CheckReady that raised
        if self.reached_agent:
            n += 2  # RunAgent, Collect
            n += 1 if self.agent_failed else 0  # RecordAgentFailure
        else:
            n += 1  # RecordFailure
        n += 1  # Cleanup
        n += 1 if self.cleanup_failed else 0  # CleanupFailed
        return n + self.retries + map_overhead


@dataclass(frozen=True)
class TransitionCount:
    per_config: dict[str, int]
    run_level: int
    notes: list[str] = field(default_factory=list)

    @property
    def total(self) -> int:
        return self.run_level + sum(self.per_config.values())


def count_transitions(
    configs: Iterable[ConfigTransitions],
    *,
    run_level: int = RUN_LEVEL_TRANSITIONS,
    map_overhead_per_config: int = MAP_OVERHEAD_PER_CONFIG,
) -> TransitionCount:
    """Per config: Provision + 3 per poll + RunAgent + Collect + Cleanup (+ failure states, retries,
    Map overhead); plus the run's Plan, Map state and Finalize."""
    return TransitionCount(
        per_config={c.config_id: c.count(map_overhead_per_config) for c in configs}, run_level=run_level
    )


def transitions_from_state(state: ConfigState | Mapping[str, Any], retries: int = 0) -> ConfigTransitions:
    """The path a config took, read from its stored state (``ready.polls``, errors by step)."""
    config_state = state if isinstance(state, ConfigState) else ConfigState.model_validate(state)
    steps = {e.step for e in config_state.errors}
    if config_state.caught_cleanup:
        steps.add("cleanup")
    ready = config_state.ready
    reached = ready is not None and ready.state == "ready"
    return ConfigTransitions(
        config_id=config_state.item.config_id,
        polls=ready.polls if ready else 0,
        reached_agent=reached,
        agent_failed=reached and "agent" in steps,
        failed_poll=not reached and "ready" in steps,
        cleanup_failed="cleanup" in steps,
        retries=retries,
    )


def transitions_from_states(
    states: Iterable[ConfigState | Mapping[str, Any]],
    *,
    run_level: int = RUN_LEVEL_TRANSITIONS,
    map_overhead_per_config: int = MAP_OVERHEAD_PER_CONFIG,
) -> TransitionCount:
    """:func:`count_transitions` over stored config states. Retries are not in the state: the count
    is then a floor, and says so."""
    count = count_transitions(
        (transitions_from_state(s) for s in states),
        run_level=run_level,
        map_overhead_per_config=map_overhead_per_config,
    )
    count.notes.append("Task retries are not recorded in the config state: the count is a floor")
    return count
